# Modelled on the trainers of yhy1117/X-Mixup and deepray-AI/deepray, done
# right, written for this project: the epoch ends at StopIteration and the
# partial cycle is applied after the loop, as the mean of what it holds.
# No finding.
import tensorflow as tf
class T(object):
    def __init__(self, model, opt, acc, n):
        self.model, self.opt, self.acc, self.n = model, opt, acc, n

    def forward(self, x, y):
        loss = tf.reduce_mean(tf.square(self.model(x) - y))
        self.acc(tf.gradients(loss, self.model.trainable_variables))

    def apply(self, count):
        self.opt.apply_gradients(zip([g / count for g in self.acc.gradients], self.model.trainable_variables))
        self.acc.reset()

    def epoch(self, it):
        i = 0
        while True:
            try:
                self.forward(*next(it))
            except StopIteration:
                break
            i += 1
            if i % self.n == 0:
                self.apply(self.n)
        if i % self.n:
            self.apply(i % self.n)
