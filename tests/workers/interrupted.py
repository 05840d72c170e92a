"""One run of an interrupted-training test:
``python -m tests.workers.interrupted SCENARIO DIR RUN`` with RUN one of

* ``full``: trains every micro-batch and saves the result to ``DIR/full.npz``;
* ``stop``: trains, checkpointing into DIR, and ends itself with
  ``os._exit`` in the middle of a cycle (``STOP`` micro-batches done, one
  pending), as a killed job does: no cleanup, no final save;
* ``resume``: restores the newest checkpoint in DIR, trains the rest and
  saves the result to ``DIR/resume.npz``.

The test compares ``full`` with ``resume``: weights and optimizer state.

Scenarios: ``loop-eager`` / ``loop-function`` (a custom loop with
``GradientAccumulator.step`` and ``tf.train.Checkpoint`` after every
micro-step), ``graph-saver`` (a TF1 graph and session, a v1 ``Saver``; on TF2 after
``disable_eager_execution``), ``monitored`` (a ``MonitoredTrainingSession``
with ``checkpoint_dir``, restarted) and ``estimator`` (``Estimator.train``
in a model_dir, restarted), both saving after every run from a hook (TF's
own saver hook saves only when ``global_step`` moves, at cycle ends),
``fit-checkpoint`` (``fit`` with ``gac.wrap``, ``ModelCheckpoint`` saving
every batch, ``load_model`` to resume), ``fit-backup`` (``fit`` with
``BackupAndRestore``, which saves at each epoch's end; a cycle carries over
the epoch boundary).
"""
from __future__ import absolute_import, division, print_function

import os
import sys

import numpy as np

import gradacc_compat as gac
from gradacc_compat import compat
from gradacc_compat.compat import tf

from tests import harness as H

K, N, B = 2, 3, 4          # cycles, micro-batches per cycle, micro-batch
STOP = 4                   # micro-batches done when the run ends itself
GRAPH_SCENARIOS = ("graph-saver", "monitored", "estimator")  # TF1 graph code
EPOCH = 5                  # fit-backup: micro-batches per epoch (two epochs)
LR = 0.05


def _exit_now():
    sys.stdout.flush()
    os._exit(17)  # as a killed job: nothing after this runs


def _save(path, arrays):
    np.savez(path, *[np.asarray(a) for a in arrays])


# ----------------------------------------------------------- custom loops
def loop(scenario, folder, run):
    x, y = H.make_data(K * N * B, seed=43)
    variables = H.make_variables(resource=True)
    opt = tf.compat.v1.train.AdamOptimizer(LR)
    acc = gac.GradientAccumulator(steps=N)
    position = tf.Variable(0, dtype=tf.int64, name="position")  # micro-batches done

    def step(xb, yb):
        grads = H.gradients(lambda: H.global_mean_loss(variables, xb, yb, B), variables)
        acc.step(opt, grads, variables)
        position.assign_add(1)

    if scenario == "loop-function":
        step = tf.function(step)
    ckpt = tf.train.Checkpoint(optimizer=opt, accumulator=acc, position=position,
                               **dict(("v%d" % i, v) for i, v in enumerate(variables)))
    # All kept: a restore is deferred for what the first step creates (the
    # accumulator, the slots), and reads the file then.
    manager = tf.train.CheckpointManager(ckpt, folder, max_to_keep=None)
    if run == "resume":
        ckpt.restore(manager.latest_checkpoint)
    for i in range(int(position.numpy()), K * N):
        step(tf.constant(x[i * B:(i + 1) * B]), tf.constant(y[i * B:(i + 1) * B]))
        manager.save()
        if run == "stop" and i + 1 == STOP:
            _exit_now()
    _save(os.path.join(folder, run + ".npz"),
          [v.numpy() for v in variables + H.optimizer_state(opt, variables)]
          + [acc.iterations.numpy(), acc.micro_step.numpy()])


# ------------------------------------------------------- TF1 graph, Saver
def graph_saver(folder, run):
    x, y = H.make_data(K * N * B, seed=43)
    with tf.Graph().as_default():
        variables = H.make_variables()
        global_step = tf.compat.v1.train.get_or_create_global_step()
        position = tf.compat.v1.Variable(0, dtype=tf.int64, name="position")
        xb = tf.compat.v1.placeholder(tf.float32, [B, 4])
        yb = tf.compat.v1.placeholder(tf.float32, [B, 3])
        opt = gac.wrap(tf.compat.v1.train.AdamOptimizer(LR), N)
        train = opt.minimize(H.global_mean_loss(variables, xb, yb, B), global_step=global_step,
                             var_list=variables)
        with tf.control_dependencies([train]):
            train = tf.compat.v1.assign_add(position, 1)
        saver = tf.compat.v1.train.Saver()
        prefix = os.path.join(folder, "model")
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            if run == "resume":
                saver.restore(sess, tf.train.latest_checkpoint(folder))
            for i in range(int(sess.run(position)), K * N):
                sess.run(train, {xb: x[i * B:(i + 1) * B], yb: y[i * B:(i + 1) * B]})
                saver.save(sess, prefix)
                if run == "stop" and i + 1 == STOP:
                    _exit_now()
            state = H.optimizer_state(opt, variables)
            _save(os.path.join(folder, run + ".npz"),
                  sess.run(variables + state + [global_step, opt.micro_step]))


# ------------------------------------------ MonitoredTrainingSession, Estimator
class _SaveEveryRun(tf.compat.v1.train.SessionRunHook):
    """Saves a checkpoint after every run (TF's own saver hook saves only
    when ``global_step`` moved, i.e. at cycle ends) and, with ``stop``,
    ends the process after that many runs."""

    def __init__(self, folder, stop=None):
        self.prefix, self.stop, self.runs = os.path.join(folder, "model.ckpt"), stop, 0

    def begin(self):
        self.saver = tf.compat.v1.train.Saver()
        self.step = tf.compat.v1.train.get_global_step()

    def after_run(self, run_context, run_values):
        self.runs += 1
        # Named by the micro-batch count: global_step counts effective steps.
        self.saver.save(run_context.session, self.prefix, global_step=1000 + self.runs)
        if self.runs == self.stop:
            _exit_now()


class _Result(tf.compat.v1.train.SessionRunHook):
    """Saves the variables, the optimizer state, global_step and the
    pending count the session ends with."""

    def __init__(self, path, variables, opt):
        self.path, self.variables, self.opt = path, variables, opt

    def begin(self):
        self.state = H.optimizer_state(self.opt, self.variables)
        self.extra = [tf.compat.v1.train.get_global_step(), self.opt.micro_step]

    def end(self, session):
        _save(self.path, session.run(self.variables + self.state + self.extra))


def _model_fn_parts(features, labels):
    variables = H.make_variables()
    loss = H.global_mean_loss(variables, features, labels, B)
    opt = gac.wrap(tf.compat.v1.train.AdamOptimizer(LR), N)
    train = opt.minimize(loss, global_step=tf.compat.v1.train.get_or_create_global_step(),
                         var_list=variables)
    return variables, loss, opt, train


def monitored(folder, run):
    """MonitoredTrainingSession with ``checkpoint_dir``: a restart restores
    the newest checkpoint itself."""
    x, y = H.make_data(K * N * B, seed=43)
    start = STOP if run == "resume" else 0
    with tf.Graph().as_default():
        xb = tf.compat.v1.placeholder(tf.float32, [B, 4])
        yb = tf.compat.v1.placeholder(tf.float32, [B, 3])
        variables, _, opt, train = _model_fn_parts(xb, yb)
        hooks = [_SaveEveryRun(folder, STOP if run == "stop" else None),
                 _Result(os.path.join(folder, run + ".npz"), variables, opt)]
        with tf.compat.v1.train.MonitoredTrainingSession(
                checkpoint_dir=folder, hooks=hooks, save_checkpoint_secs=None,
                save_checkpoint_steps=None, save_summaries_steps=None,
                save_summaries_secs=None, log_step_count_steps=None) as sess:
            for i in range(start, K * N):
                sess.run(train, {xb: x[i * B:(i + 1) * B], yb: y[i * B:(i + 1) * B]})


def estimator(folder, run):
    """``Estimator.train`` in a model_dir; a restart continues from the
    newest checkpoint there."""
    x, y = H.make_data(K * N * B, seed=43)
    start = STOP * B if run == "resume" else 0

    def model_fn(features, labels, mode):
        variables, loss, opt, train = _model_fn_parts(features, labels)
        hooks = [_SaveEveryRun(folder, STOP if run == "stop" else None),
                 _Result(os.path.join(folder, run + ".npz"), variables, opt)]
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train, training_hooks=hooks)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((x[start:], y[start:])).batch(B)

    config = tf.estimator.RunConfig(model_dir=folder, save_checkpoints_secs=None,
                                    save_checkpoints_steps=None, save_summary_steps=None,
                                    log_step_count_steps=None)
    tf.estimator.Estimator(model_fn, config=config).train(input_fn)


# ------------------------------------------------------------------ fit
class _StopAfter(object):
    """A callback (made with the Keras in use) ending the process after
    ``count`` batches of the run."""

    @staticmethod
    def make(count):
        keras = compat.keras_module()

        class StopAfter(keras.callbacks.Callback):
            done = 0

            def on_train_batch_end(self, batch, logs=None):
                StopAfter.done += 1
                if StopAfter.done == count:
                    _exit_now()
        return StopAfter()


def _model_and_optimizer():
    keras = compat.keras_module()
    model = H.keras_dense_model()
    model.compile(optimizer=gac.wrap(keras.optimizers.Adam(LR), N), loss="mse")
    return model


def _fit_result(model, folder, run):
    read = compat.keras_module().backend.get_value
    opt = model.optimizer
    state = opt.variables() if callable(opt.variables) else opt.variables
    _save(os.path.join(folder, run + ".npz"),
          model.get_weights() + [read(v) for v in state] + [read(opt.micro_step)])


def fit_checkpoint(folder, run):
    keras = compat.keras_module()
    x, y = H.make_data(K * N * B, seed=43)
    path = os.path.join(folder, "model" + (".keras" if compat.KERAS_FLAVOUR == "keras3"
                                           else ".h5"))
    if run == "resume":
        with keras.utils.custom_object_scope(gac.keras_custom_objects()):
            model = keras.models.load_model(path, custom_objects=gac.keras_custom_objects())
        start = STOP * B
    else:
        model, start = _model_and_optimizer(), 0
    callbacks = []
    if run == "stop":
        callbacks = [keras.callbacks.ModelCheckpoint(path, save_freq=1),
                     _StopAfter.make(STOP)]
    model.fit(x[start:], y[start:], batch_size=B, shuffle=False, verbose=0,
              callbacks=callbacks)
    _fit_result(model, folder, run)


def backup_and_restore():
    """Keras' BackupAndRestore class (``experimental`` on TF 2.3-2.7), or None."""
    callbacks = compat.keras_module().callbacks
    found = getattr(callbacks, "BackupAndRestore", None)
    return found or getattr(getattr(callbacks, "experimental", None), "BackupAndRestore", None)


def fit_backup(folder, run):
    x, y = H.make_data(EPOCH * B, seed=43)
    model = _model_and_optimizer()
    callbacks = [backup_and_restore()(os.path.join(folder, "backup"))]
    if run == "stop":  # mid-cycle in the second epoch
        callbacks.append(_StopAfter.make(EPOCH + 2))
    model.fit(x, y, batch_size=B, epochs=2, shuffle=False, verbose=0, callbacks=callbacks)
    _fit_result(model, folder, run)


def main(scenario, folder, run):
    if scenario in GRAPH_SCENARIOS:
        if not compat.TF1:
            tf.compat.v1.disable_eager_execution()  # TF1 graph code on TF2
    elif compat.TF1 and compat.env_flag("GAC_TF1_EAGER"):
        tf.compat.v1.enable_eager_execution()
    if scenario.startswith("loop"):
        loop(scenario, folder, run)
    elif scenario == "graph-saver":
        graph_saver(folder, run)
    elif scenario == "monitored":
        monitored(folder, run)
    elif scenario == "estimator":
        estimator(folder, run)
    elif scenario == "fit-checkpoint":
        fit_checkpoint(folder, run)
    else:
        fit_backup(folder, run)


if __name__ == "__main__":
    main(*sys.argv[1:])
