# Modelled on jimth001/my-tf-framework-for-nlp-tasks' TrainingWrapper (TF1
# graph, several GPUs): each micro-batch's gradients are averaged over the
# GPU towers (the average_gradients helper of TF's multi-GPU example), then
# summed into variables and applied undivided. The tower mean is one
# micro-batch's gradient; the N micro-batches are still summed (GAC101).
import tensorflow as tf


class Trainer(object):
    def average_gradients(self, tower_grads):
        averaged = []
        for grad_and_vars in zip(*tower_grads):
            stacked = tf.concat([tf.expand_dims(g, 0) for g, _ in grad_and_vars], 0)
            grad = tf.reduce_mean(stacked, 0)
            averaged.append((grad, grad_and_vars[0][1]))
        return averaged

    def build(self, opt, model_fn, devices):
        tower_grads = []
        for i in devices:
            with tf.device("/gpu:%d" % i):
                tower_grads.append(opt.compute_gradients(model_fn(i)))
        grads = self.average_gradients(tower_grads)
        tvs = tf.trainable_variables()
        self.accum_vars = [tf.Variable(tf.zeros_like(tv.initialized_value()), trainable=False)
                           for tv in tvs]
        self.zero_ops = [v.assign(tf.zeros_like(v)) for v in self.accum_vars]
        self.accum_ops = [self.accum_vars[j].assign_add(g) for j, (g, _) in enumerate(grads)]
        self.apply_op = opt.apply_gradients(  # <- GAC101
            [(self.accum_vars[j], v) for j, (_, v) in enumerate(grads)])
