# Modelled on flixxox/tensorflowSeq2Seq's Horovod optimizer: the helper that
# divides the summed gradients by the token count returns a new list, and
# its result is thrown away, so the sums are applied.
import horovod.tensorflow as hvd
import tensorflow as tf


class Optimizer(object):
    def __init__(self, adam):
        self.adam = adam

    def apply(self, grads, variables, count):
        def average(grads, count):
            averaged = []
            for grad in grads:
                averaged.append(grad / count)
            return averaged

        grads = hvd.grouped_allreduce(grads, average=False)
        count = hvd.allreduce(count, average=False)
        average(grads, count)
        self.adam.apply_gradients(zip(grads, variables))  # <- GAC101
