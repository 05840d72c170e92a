# Modelled on bochinski/tf-smoe's TF1 graph model: one set of summed
# gradients is split among three optimizers (one per group of parameters),
# each applying its slice undivided. One mistake, so one finding, at the
# first apply; the other two applies of the same sums are not reported again.
import tensorflow as tf


def build(loss, experts, gates, mixing, opt1, opt2, opt3):
    params = experts + gates + mixing
    sums = [tf.Variable(tf.zeros_like(p.initialized_value()), trainable=False) for p in params]
    zero = [s.assign(tf.zeros_like(s)) for s in sums]
    grads = tf.gradients(loss, params)
    accumulate = [sums[i].assign_add(g) for i, g in enumerate(grads)]
    first = sums[:len(experts)]
    second = sums[len(experts):len(experts) + len(gates)]
    third = sums[len(experts) + len(gates):]
    op1 = opt1.apply_gradients(zip(first, experts))  # <- GAC101
    op2 = opt2.apply_gradients(zip(second, gates))
    op3 = opt3.apply_gradients(zip(third, mixing))
    return zero, accumulate, tf.group(op1, op2, op3)
