# Modelled on a TF1 image-captioning base model (public, X02 of the
# corpus): the model file builds the accumulation, apply and increment ops;
# this base class's training loop fetches the accumulation op with
# increment_global_step on every batch, so global_step (and the decay
# built on it) counts micro-batches.
class BaseModel(object):
    def train(self, sess, batches, config):
        for feed_dict in batches:
            _, global_step = sess.run([self.accum_ops, self.increment_global_step],  # <- GAC107
                                      feed_dict=feed_dict)
            if global_step % config.accumulate_grads == 0:
                sess.run(self.opt_op)
                sess.run(self.zero_ops)
