# Modelled on a Hanabi REINFORCE runner (Keras policy, eager tapes): each
# agent keeps a Python list of gradient sums, adds every step's gradient
# times its discounted return at the end of an episode, and the runner
# applies every agent's sums when `episode % N == 0`. The agents come from a
# class handed in (`self.agent_class`), so no receiver is known to be one.
# The episode counts from 0: the first apply holds one episode, later ones N
# (GAC109); the sums are never divided by N (GAC101).
import tensorflow as tf

EPISODES_TO_TRAIN = 5


class PolicyAgent(object):
    def __init__(self, model):
        self.model = model
        self.optimizer = tf.keras.optimizers.Adam(1e-3)
        self.grad_buffer = [tf.zeros_like(v) for v in model.trainable_variables]
        self.episode_mem = []

    def update_grad_buffer(self):
        for grads, ret in self.episode_mem:
            for idx, grad in enumerate(grads):
                self.grad_buffer[idx] += grad * ret

    def apply_gradients(self):
        self.optimizer.apply_gradients(  # <- GAC101
            zip(self.grad_buffer, self.model.trainable_variables))
        for idx, grad in enumerate(self.grad_buffer):
            self.grad_buffer[idx] = grad * 0


class Runner(object):
    def __init__(self, agent_class, config, players, episodes):
        self.agent_class, self.config = agent_class, config
        self.players, self.episodes = players, episodes

    def run(self, play_episode):
        agents = [self.agent_class(self.config) for _ in range(self.players)]
        for episode in range(self.episodes):
            play_episode(agents)
            for agent in agents:
                agent.update_grad_buffer()
                agent.episode_mem = []
            if episode % EPISODES_TO_TRAIN == 0:  # <- GAC109
                for agent in agents:
                    agent.apply_gradients()
