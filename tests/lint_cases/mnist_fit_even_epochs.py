# Modelled on the widely copied Keras "n_gradients" train_step override,
# run on MNIST (a demo script, public, repository unknown): 60,000
# training examples in batches of 6 make 10,000 batches per epoch, a
# multiple of the N = 10 given to the model, so fit carries no partial
# cycle from one epoch into the next (no GAC110).
import tensorflow as tf


class CustomTrainStep(tf.keras.Model):
    def __init__(self, n_gradients, *args, **kwargs):
        super(CustomTrainStep, self).__init__(*args, **kwargs)
        self.n_gradients = tf.constant(n_gradients, dtype=tf.int32)
        self.n_acum_step = tf.Variable(0, dtype=tf.int32, trainable=False)
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                     for v in self.trainable_variables]

    def train_step(self, data):
        self.n_acum_step.assign_add(1)
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        for s, g in zip(self.sums, grads):
            s.assign_add(g / tf.cast(self.n_gradients, g.dtype))
        tf.cond(tf.equal(self.n_acum_step, self.n_gradients), self.apply_sums, lambda: None)
        return {"loss": loss}

    def apply_sums(self):
        self.optimizer.apply_gradients(zip(self.sums, self.trainable_variables))
        self.n_acum_step.assign(0)
        for s in self.sums:
            s.assign(tf.zeros_like(s))


inputs = tf.keras.Input(shape=(28, 28))
outputs = tf.keras.layers.Dense(10)(tf.keras.layers.Flatten()(inputs))
model = CustomTrainStep(n_gradients=10, inputs=[inputs], outputs=[outputs])
model.compile(loss="sparse_categorical_crossentropy", optimizer="adam")
(x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
x_train = tf.divide(x_train, 255)
model.fit(x_train, y_train, batch_size=6, epochs=3)
