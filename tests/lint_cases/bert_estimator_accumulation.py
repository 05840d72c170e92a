# Modelled on a BERT estimator fork that adds accumulation to
# optimization.create_optimizer: the apply is keyed on global_step % N (true
# at step 0, a first cycle of one micro-batch), and global_step, which BERT
# advances itself, moves on every micro-batch.
import tensorflow as tf


def create_optimizer(loss, optimizer, accumulation_steps):
    global_step = tf.compat.v1.train.get_or_create_global_step()
    tvars = tf.compat.v1.trainable_variables()
    grads = tf.gradients(loss, tvars)
    sums = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False) for v in tvars]

    def apply_mean(sums, grads, tvars):
        added = tf.group([s.assign_add(g) for s, g in zip(sums, grads)])
        with tf.control_dependencies([added]):
            means = [s / accumulation_steps for s in sums]
            applied = optimizer.apply_gradients(zip(means, tvars))
            with tf.control_dependencies([applied]):
                return tf.group([s.assign(tf.zeros_like(s)) for s in sums])

    train_op = tf.cond(tf.math.equal(global_step % accumulation_steps, 0),  # <- GAC109
                       lambda: apply_mean(sums, grads, tvars),
                       lambda: tf.group([s.assign_add(g) for s, g in zip(sums, grads)]))
    new_global_step = global_step + 1
    return tf.group(train_op, [global_step.assign(new_global_step)])  # <- GAC107
