# Modelled on a BigBird token-classification script (TF2 eager, public, repo
# unknown): the training loop is the script's top level, not a function;
# the accumulators and their counter live across epochs and nothing
# flushes them at an epoch's end, so its partial cycle is carried into the
# next. The second loop, shaped like an OCT U-Net script's, also applies on
# each epoch's last batch (`or step + 1 == len(dataset)`): clean.
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
optimizer = tf.keras.optimizers.Adam(1e-4)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
train_dataset = tf.data.Dataset.from_tensor_slices((tf.zeros([10, 3]), tf.zeros([10]))).batch(2)
epochs = 3

tvs = model.trainable_weights
gradient_accumulation = [tf.Variable(tf.zeros_like(tv), trainable=False) for tv in tvs]
n_gradients = 3
n_acum_step = 0
for epoch in range(epochs):  # <- GAC110
    for step, (x, y) in enumerate(train_dataset):
        n_acum_step += 1
        with tf.GradientTape() as tape:
            loss_value = loss_fn(y, model(x, training=True)) / n_gradients
        gradients = tape.gradient(loss_value, tvs)
        for i in range(len(gradient_accumulation)):
            gradient_accumulation[i].assign_add(gradients[i])
        if n_acum_step == n_gradients:
            optimizer.apply_gradients(zip(gradient_accumulation, tvs))
            for g in gradient_accumulation:
                g.assign(tf.zeros_like(g))
            n_acum_step = 0

accumulation_steps = 4
for epoch in range(epochs):
    accumulated = [tf.zeros_like(v) for v in model.trainable_variables]
    for step, (x, y) in enumerate(train_dataset):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True)) / accumulation_steps
        grads = tape.gradient(loss, model.trainable_variables)
        for i, g in enumerate(grads):
            accumulated[i] += g
        if (step + 1) % accumulation_steps == 0 or (step + 1) == len(train_dataset):
            optimizer.apply_gradients(zip(accumulated, model.trainable_variables))
            accumulated = [tf.zeros_like(v) for v in model.trainable_variables]
