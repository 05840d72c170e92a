# Modelled on the MLPerf TF2 ResNet-50 runnable (tf2_common's
# resnet_runnable.py): each replica adds its gradients into ON_READ
# accumulators, then merge_call decides in cross-replica context, by
# optimizer.iterations % N, to apply the sums in every replica and clear
# them, or only to advance the counter. The loss is divided by the flags'
# batch size, the micro-batch's own size, and by nothing else: the sums of
# N micro-batches are applied undivided, N times the big batch's step
# (GAC101).
import tensorflow as tf


class ResnetRunnable(object):
    def __init__(self, flags_obj, model, optimizer, strategy):
        self.flags_obj, self.model, self.optimizer = flags_obj, model, optimizer
        self.strategy = strategy
        self.num_accumulation_steps = flags_obj.num_accumulation_steps
        self.batch_size = int(flags_obj.batch_size / strategy.num_replicas_in_sync)
        self.accum_grads = [
            tf.Variable(tf.zeros_like(v), trainable=False,
                        synchronization=tf.VariableSynchronization.ON_READ,
                        aggregation=tf.VariableAggregation.SUM)
            for v in model.trainable_variables]

    def train_step(self, iterator):
        def local_step(images, labels):
            with tf.GradientTape() as tape:
                logits = self.model(images, training=True)
                per_example = tf.keras.losses.sparse_categorical_crossentropy(labels, logits)
                loss = tf.reduce_sum(per_example) * (1.0 / self.flags_obj.batch_size)
            return tape.gradient(loss, self.model.trainable_variables)

        def apply_and_clear(distribution):
            def in_replica():
                replica = tf.distribute.get_replica_context().replica_id_in_sync_group
                sums = []
                for accum, var in zip(self.accum_grads, self.model.trainable_variables):
                    local = self.strategy.experimental_local_results(accum)
                    sums.append(tf.cast(local[replica], var.dtype))
                self.optimizer.apply_gradients(  # <- GAC101
                    zip(sums, self.model.trainable_variables))
                for accum in self.accum_grads:
                    accum.assign(tf.zeros_like(accum))

            def apply():
                distribution.extended.call_for_each_replica(in_replica, args=())
                return self.optimizer.iterations.assign_add(0)

            def advance():
                return self.optimizer.iterations.assign_add(1)

            tf.cond(tf.equal(self.optimizer.iterations % self.num_accumulation_steps,
                             self.num_accumulation_steps - 1), apply, advance)

        def step_fn(inputs):
            images, labels = inputs
            grads = local_step(images, labels)
            for grad, accum in zip(grads, self.accum_grads):
                accum.assign_add(grad)
            tf.distribute.get_replica_context().merge_call(apply_and_clear, args=())

        self.strategy.run(step_fn, args=(next(iterator),))
