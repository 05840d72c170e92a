"""``python -m gradacc_compat lint``: the mistakes of hand-rolled loops.

A golden table: each snippet is the shape a published article or tutorial
uses; ``# <- GACnnn`` marks the line where the mistake is reported, and the
corrected form of each is reported clean.
"""
from __future__ import absolute_import, division, print_function

import io
import os
import re
import subprocess
import sys
import tempfile

import pytest

from gradacc_compat import lint

SNIPPETS = {
    # Python-list accumulation, applied as a sum (effective LR x N).
    "list_sum": '''
accum_grads = [tf.zeros_like(v) for v in model.trainable_variables]
for step, (x, y) in enumerate(dataset):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    accum_grads = [a + g for a, g in zip(accum_grads, grads)]
    if (step + 1) % N == 0:
        optimizer.apply_gradients(zip(accum_grads, model.trainable_variables))  # <- GAC101
        accum_grads = [tf.zeros_like(v) for v in model.trainable_variables]
''',
    "list_sum_fixed": '''
accum_grads = [tf.zeros_like(v) for v in model.trainable_variables]
for step, (x, y) in enumerate(dataset):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    accum_grads = [a + g for a, g in zip(accum_grads, grads)]
    if (step + 1) % N == 0:
        optimizer.apply_gradients(zip([a / N for a in accum_grads],
                                      model.trainable_variables))
        accum_grads = [tf.zeros_like(v) for v in model.trainable_variables]
''',
    # Accumulator variables, but the apply is outside any condition.
    "apply_every_step": '''
accum = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]
for x, y in dataset:
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    for i, g in enumerate(grads):
        accum[i].assign_add(g / N)
    optimizer.apply_gradients(zip(accum, model.trainable_variables))  # <- GAC102
''',
    "apply_every_step_fixed": '''
accum = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]
for step, (x, y) in enumerate(dataset):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    for i, g in enumerate(grads):
        accum[i].assign_add(g / N)
    if (step + 1) % N == 0:
        optimizer.apply_gradients(zip(accum, model.trainable_variables))
        for a in accum:
            a.assign(tf.zeros_like(a))
''',
    # "Resetting" by zeroing the model's weights instead of the accumulators.
    "zeroed_weights": '''
accum = [tf.Variable(tf.zeros_like(w), trainable=False) for w in model.trainable_variables]
while True:
    for _ in range(N):
        x, y = next(batches)
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x)) / N
        for a, g in zip(accum, tape.gradient(loss, model.trainable_variables)):
            a.assign_add(g)
    optimizer.apply_gradients(zip(accum, model.trainable_variables))
    for w in model.trainable_variables:
        w.assign(tf.zeros_like(w))  # <- GAC103
''',
    # MirroredStrategy: all-reduce every micro-step, then accumulate.
    "reduce_every_step": '''
def replica_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.nn.compute_average_loss(loss_fn(y, model(x)), global_batch_size=GB)
    grads = tape.gradient(loss, model.trainable_variables)
    ctx = tf.distribute.get_replica_context()
    grads = ctx.all_reduce(tf.distribute.ReduceOp.SUM, grads)  # <- GAC104
    for a, g in zip(accum_vars, grads):
        a.assign_add(g / N)
''',
    "reduce_every_step_fixed": '''
def replica_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.nn.compute_average_loss(loss_fn(y, model(x)), global_batch_size=GB)
    grads = tape.gradient(loss, model.trainable_variables)
    for a, g in zip(accum_vars, grads):
        a.assign_add(g / N)
    total = functools.reduce(lambda s, g: s + g, [1, 2])
''',
    # Python state changed inside a tf.function: the change runs once, when
    # tracing (the counter stays at its first value; the list argument is
    # rebound and never returned).
    "tf_function_state": '''
class Trainer(object):
    def __init__(self):
        self.micro_steps = 0

    @tf.function
    def train_step(self, x, y, accum_grads):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        accum_grads = [a + g for a, g in zip(accum_grads, grads)]  # <- GAC105
        self.micro_steps += 1  # <- GAC105
        return loss
''',
    # The list is returned and reused: nothing is lost.
    "tf_function_state_fixed": '''
@tf.function
def train_step(x, y, step, accum_grads):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    return [a + g for a, g in zip(accum_grads, grads)]

accum_grads = [tf.zeros_like(v) for v in model.trainable_variables]
for step, (x, y) in enumerate(dataset):
    accum_grads = train_step(x, y, step, accum_grads)
''',
    # A counter made 0 and advanced after the test: the first cycle is one
    # micro-batch, then N.
    "counter_after_test": '''
step = 0
sums = [tf.zeros_like(v) for v in model.trainable_variables]
for x, y in dataset:
    grads = tape.gradient(loss_fn(y, model(x)) / N, model.trainable_variables)
    sums = [s + g for s, g in zip(sums, grads)]
    if step % N == 0:  # <- GAC109
        optimizer.apply_gradients(zip(sums, model.trainable_variables))
        sums = [tf.zeros_like(v) for v in model.trainable_variables]
    step += 1
''',
    "counter_after_test_fixed": '''
step = 0
sums = None
for x, y in dataset:
    grads = tape.gradient(loss_fn(y, model(x)) / N, model.trainable_variables)
    sums = grads if sums is None else [s + g for s, g in zip(sums, grads)]
    step += 1
    if step % N == 0:
        optimizer.apply_gradients(zip(sums, model.trainable_variables))
        sums = None
''',
    # BERT's optimization.create_optimizer after the one-line wrap: the clip
    # and the step counter still act on every micro-batch.
    "bert_wrapped": '''
def create_optimizer(loss, init_lr, num_train_steps, num_warmup_steps):
    global_step = tf.train.get_or_create_global_step()
    learning_rate = tf.train.polynomial_decay(init_lr, global_step, num_train_steps)
    optimizer = AdamWeightDecayOptimizer(learning_rate=learning_rate)
    optimizer = gac.wrap(optimizer, steps=4)
    tvars = tf.trainable_variables()
    grads = tf.gradients(loss, tvars)
    (grads, _) = tf.clip_by_global_norm(grads, clip_norm=1.0)
    train_op = optimizer.apply_gradients(zip(grads, tvars), global_step=global_step)  # <- GAC106
    new_global_step = global_step + 1
    train_op = tf.group(train_op, [global_step.assign(new_global_step)])  # <- GAC107
    return train_op
''',
    "bert_wrapped_fixed": '''
def create_optimizer(loss, init_lr, num_train_steps, num_warmup_steps):
    global_step = tf.train.get_or_create_global_step()
    learning_rate = tf.train.polynomial_decay(init_lr, global_step, num_train_steps)
    optimizer = AdamWeightDecayOptimizer(learning_rate=learning_rate)
    optimizer = gac.wrap(optimizer, steps=4, clip_global_norm=1.0)
    tvars = tf.trainable_variables()
    grads = tf.gradients(loss, tvars)
    applied = optimizer.apply_gradients(zip(grads, tvars), global_step=global_step)
    train_op = tf.group(applied, [global_step.assign_add(tf.cast(applied, tf.int64))])
    return train_op
''',
    # OpenNMT-tf / tensor2tensor shape: clip helper, then a TF1 assign.
    "t2t_wrapped": '''
class Trainer(object):
    def __init__(self, opt):
        self.opt = gac.wrap(opt, 8)

    def train_op(self, loss, global_step):
        grads_and_vars = self.opt.compute_gradients(loss)
        clipped = [(tf.clip_by_norm(g, 5.0), v) for g, v in grads_and_vars]
        op = self.opt.apply_gradients(clipped)  # <- GAC106
        with tf.control_dependencies([op]):
            return tf.assign_add(global_step, 1)  # <- GAC107
''',
}
# The same loop, resetting the accumulators (the model's weights untouched).
SNIPPETS["zeroed_weights_fixed"] = SNIPPETS["zeroed_weights"].replace(
    "for w in model.trainable_variables:\n        w.assign(tf.zeros_like(w))  # <- GAC103",
    "for a in accum:\n        a.assign(tf.zeros_like(a))")
assert SNIPPETS["zeroed_weights_fixed"] != SNIPPETS["zeroed_weights"]


def expected(source):
    """[(line, code)] from the ``# <- GACnnn`` markers."""
    found = []
    for number, line in enumerate(source.splitlines(), 1):
        marker = re.search(r"# <- ((?:GAC\d+ ?)+)", line)
        if marker:
            found.extend((number, code) for code in marker.group(1).split())
    return sorted(found)


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_each_mistake_is_reported_on_its_line(name):
    source = SNIPPETS[name]
    findings = lint.lint_source(source, name + ".py")
    assert sorted((f.line, f.code) for f in findings) == expected(source), \
        "\n".join(str(f) for f in findings)
    if name.endswith("_fixed"):
        assert not findings
    else:
        assert findings  # a table row that cannot fail would be a defect
        for finding in findings:
            assert str(finding).startswith("%s.py:%d:%d: %s " % (name, finding.line,
                                                                   finding.col + 1, finding.code))


def _run_cli(*args):
    process = subprocess.Popen([sys.executable, "-m", "gradacc_compat", "lint"] + list(args),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = process.communicate()
    return process.returncode, out.decode("utf-8"), err.decode("utf-8")


def test_cli_reports_exits_and_suggests():
    folder = tempfile.mkdtemp()
    paths = {}
    for name in ("list_sum", "list_sum_fixed"):
        paths[name] = os.path.join(folder, name + ".py")
        with io.open(paths[name], "w", encoding="utf-8") as f:
            f.write(SNIPPETS[name].decode("utf-8") if isinstance(SNIPPETS[name], bytes)
                    else u"" + SNIPPETS[name])
    code, out, err = _run_cli(paths["list_sum"])
    assert code == 1, (out, err)
    assert "%s:9:9: GAC101 accumulated gradients `accum_grads`" % paths["list_sum"] in out
    assert "acc = gac.GradientAccumulator(steps=N)" not in out  # only with --suggest
    code, out, _ = _run_cli("--suggest", folder)
    assert code == 1 and "acc = gac.GradientAccumulator(steps=N)" in out
    assert paths["list_sum_fixed"] not in out
    code, out, err = _run_cli(paths["list_sum_fixed"])
    assert (code, out) == (0, "")
    code, _, err = _run_cli()
    assert code == 2 and "usage" in err
    code, _, err = _run_cli(os.path.join(folder, "missing.py"))
    assert code == 2 and "cannot lint" in err


def test_readme_lists_every_code_with_a_line_that_has_it():
    """The README's lint table: one row per code, with its example."""
    import io
    import os
    from gradacc_compat.lint.rules import CODES
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with io.open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        rows = [line for line in f if line.startswith("| GAC")]
    listed = dict((row.split("|")[1].strip(), row.split("|")) for row in rows)
    assert sorted(listed) == sorted(CODES)
    for code, cells in listed.items():
        assert len(cells) >= 4 and cells[2].strip() and cells[3].strip(), code
