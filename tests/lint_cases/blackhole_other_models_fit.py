# Modelled on Siew22/Black-Hole-Research's experiment driver: a Keras model
# class that accumulates in train_step (and applies the raw sum, GAC101) is
# defined in a file whose fit calls are all on other things: scikit-learn
# scalers, a plain classifier, a flat Keras model. None of those fits
# carries a partial cycle; the class itself does, under whatever
# Model.fit runs it (GAC110 at its gate).
import tensorflow as tf
from sklearn.preprocessing import MinMaxScaler, StandardScaler


class AccumulativeModel(tf.keras.Model):
    def __init__(self, model, accum_steps=4, **kwargs):
        super().__init__(**kwargs)
        self.model = model
        self.accum_steps = tf.constant(accum_steps, dtype=tf.int32)
        self.current_step = tf.Variable(0, dtype=tf.int32, trainable=False)
        self.sums = None

    def _make_sums(self):
        if self.sums is None and self.model.trainable_variables:
            self.sums = [tf.Variable(tf.zeros_like(v), trainable=False)
                         for v in self.model.trainable_variables]

    def train_step(self, data):
        self._make_sums()
        self.current_step.assign_add(1)
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.model.compiled_loss(y, self.model(x, training=True))
        grads = tape.gradient(loss, self.model.trainable_variables)
        for s, g in zip(self.sums, grads):
            s.assign_add(g)
        tf.cond(tf.equal(self.current_step % self.accum_steps, 0), self._apply_and_reset,  # <- GAC110
                lambda: tf.constant(False))
        return {"loss": loss}

    def _apply_and_reset(self):
        self.optimizer.apply_gradients(  # <- GAC101
            zip(self.sums, self.model.trainable_variables))
        for s in self.sums:
            s.assign(tf.zeros_like(s))
        return tf.constant(True)


def main(features, labels, make_classifier, make_flat_model):
    scaler = MinMaxScaler().fit(features)
    scaled = StandardScaler().fit(scaler.transform(features)).transform(features)
    classifier = make_classifier()
    classifier.fit(scaled, labels)
    flat_model = make_flat_model()
    flat_model.compile(optimizer="adam", loss="mse")
    flat_model.fit(scaled, labels, epochs=10)
