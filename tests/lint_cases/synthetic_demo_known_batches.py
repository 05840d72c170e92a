# Modelled on a small gradient-accumulation demo (TF2 eager, public, repo
# unknown): the data are 128 random rows batched by 8, so each epoch is 16
# micro-batches, a multiple of the 4 it accumulates, and the sums are made
# anew each epoch with nothing left in them (clean).
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
optimizer = tf.keras.optimizers.Adam(0.001)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()
micro_batch_size = 8
accumulation_steps = 4
x = tf.random.normal((128, 16))
y = tf.random.uniform((128,), maxval=10, dtype=tf.int32)
ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(128).batch(micro_batch_size)

for epoch in range(2):
    sums = [tf.zeros_like(v) for v in model.trainable_variables]
    count = 0
    for batch_x, batch_y in ds:
        with tf.GradientTape() as tape:
            loss = loss_fn(batch_y, model(batch_x, training=True)) / accumulation_steps
        grads = tape.gradient(loss, model.trainable_variables)
        sums = [g + s for g, s in zip(grads, sums)]
        count += 1
        if count % accumulation_steps == 0:
            optimizer.apply_gradients(zip(sums, model.trainable_variables))
            sums = [tf.zeros_like(v) for v in model.trainable_variables]
