# Modelled on a network-topology RL agent (TF1, public, repo unknown) that
# follows the gradBuffer recipe: each batch's gradients are added to the
# buffer in a loop over the variables, but the agent's apply (a method of
# another file, applyGrad) is indented into that loop. It runs once per
# variable, on a half-filled buffer, on every batch; the buffer is zeroed
# after, so nothing is accumulated across batches (GAC102).
import numpy as np

import agent as ag

grad_buffer = ag.sess.run(ag.tvars)


def update(xs, ys, rs):
    grads = ag.calGrad(np.vstack(xs), np.vstack(ys), np.vstack(rs))
    for ix, grad in enumerate(grads):
        grad_buffer[ix] += grad
        ag.applyGrad(grad_buffer)  # <- GAC102
    for ix, grad in enumerate(grad_buffer):
        grad_buffer[ix] = grad * 0


for episode in range(1000):
    xs, ys, rs, done = ag.play()
    if done:
        update(xs, ys, rs)
