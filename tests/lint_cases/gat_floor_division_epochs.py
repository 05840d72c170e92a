# Modelled on a TF1 graph-attention training loop: each epoch runs
# size // batch accumulate-then-apply cycles, so the last size % batch
# examples are never trained on. lint does not see partial cycles yet: a
# miss.
import tensorflow as tf

for epoch in range(num_epochs):
    cycles = train_size // batch_size  # <- GAC110
    for cycle in range(cycles):
        sess.run(zero_ops)
        for k in range(batch_size):
            sess.run(accum_ops, feed_dict=feed(cycle * batch_size + k))
        sess.run(apply_ops)
