# Modelled on bzhangGo/zero's TF1 trainer: the accumulation, zeroing and
# apply ops come in a dict from another module (`ops["collect_op"]`), and a
# Python `cycle_counter` made 0 once, before the epoch loop, runs the zero
# op on a cycle's first batch and the train op on its N-th. Nothing flushes
# at an epoch's end and the counter counts on, so each epoch's last
# partial cycle is carried into the next epoch's first update.
def train(sess, ops, features, epochs, batches_of, update_cycle):
    cycle_counter = 0
    for epoch in range(epochs):  # <- GAC110
        for data in batches_of(epoch):
            cycle_counter += 1
            if cycle_counter == 1:
                sess.run(ops["zero_op"])
            feed = {features["source"]: data["src"], features["target"]: data["tgt"]}
            if cycle_counter < update_cycle:
                sess.run(ops["collect_op"], feed_dict=feed)
            if cycle_counter == update_cycle:
                cycle_counter = 0
                sess.run(ops["train_op"], feed_dict=feed)
