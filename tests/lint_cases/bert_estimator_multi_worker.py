# Modelled on the same fork's multi-worker script (Estimator with
# train_distribute=MultiWorkerMirroredStrategy): the accumulators are
# SUM-aggregated mirrored variables (each replica-context write all-reduces),
# and the apply sits in a tf.cond branch in replica context.
import tensorflow as tf


def model_fn(features, labels, mode, params):
    loss = build_loss(features, labels)
    global_step = tf.compat.v1.train.get_or_create_global_step()
    optimizer = tf.compat.v1.train.AdamOptimizer(1e-4)
    tvars = tf.compat.v1.trainable_variables()
    grads = tf.gradients(loss, tvars)
    sums = [tf.Variable(tf.zeros_like(v.initialized_value()), trainable=False,
                        aggregation=tf.VariableAggregation.SUM) for v in tvars]

    def apply_mean():
        means = [s / params["accumulation_steps"] for s in sums]
        return optimizer.apply_gradients(zip(means, tvars))

    train_op = tf.cond(tf.equal(global_step % params["accumulation_steps"], 0),  # <- GAC111 GAC109
                       apply_mean,
                       lambda: tf.group([s.assign_add(g) for s, g in zip(sums, grads)]))  # <- GAC104
    train_op = tf.group(train_op, [tf.compat.v1.assign_add(global_step, 1)])  # <- GAC107
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def train(params):
    strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()
    config = tf.estimator.RunConfig(train_distribute=strategy)
    return tf.estimator.Estimator(model_fn, config=config, params=params)
