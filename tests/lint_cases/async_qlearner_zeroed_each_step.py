# Modelled on an asynchronous one-step Q-learning actor-learner (TF1
# session, NumPy sums, public, repository not named by the index): each
# step's gradients are fetched by a session run and added to the
# learner's sums; every `grads_update_steps` steps (or at an episode's end)
# the base class, in another file, applies them to the shared network.
# But the sums are zeroed after that `if` on every step, not inside it:
# each apply carries only the last step's gradient (GAC109).
from actor_learner import ActorLearner  # the base class: its apply is there


class OneStepQLearner(ActorLearner):
    def run(self):
        self.accumulated_grads = [0.0 for _ in self.local_network.params]
        while self.global_step < self.max_global_steps:
            feed = {self.local_network.input_ph: [self.s],
                    self.local_network.target_ph: [self.target()]}
            grads = self.session.run(self.local_network.get_gradients, feed_dict=feed)
            for i in range(len(grads)):
                self.accumulated_grads[i] += grads[i]
            self.local_step += 1
            if self.local_step % self.grads_update_steps == 0 or self.terminal_state:
                self.apply_gradients_to_shared_network()
            for i in range(len(self.accumulated_grads)):
                self.accumulated_grads[i] = 0.0  # <- GAC109
