"""``record`` / ``replay``: runs recorded by other interpreters and TF
versions (golden files under tests/golden, each named after the tox env that
wrote it) replay here; ports with one deliberate change part at the right
step and variable, with the cause named; broken RUN files get clear errors;
the README's tox template runs."""
from __future__ import absolute_import, division, print_function

import io
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from gradacc_compat import compat
from gradacc_compat.compat import tf
from gradacc_compat.tools import migration, migration_report, runfile, spec, testing

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, "tests", "golden")
#: Golden runs of verify's built-in model (Keras Adam): who wrote them.
BUILTIN_GOLDEN = ("builtin-py27-tf114.npz", "builtin-py312-tf221.npz")
MODES = testing.available_modes()


def _replay(path, **kwargs):
    kwargs.setdefault("print_fn", None)
    return migration.replay(path, **kwargs)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("steps", [1, 4])
@pytest.mark.parametrize("golden", BUILTIN_GOLDEN)
def test_a_run_of_another_interpreter_replays_here(golden, steps, mode):
    """py27-tf114 (graph, big batch) and py312-tf221 (Keras 3, eager, 4
    micro-batches) wrote these; here, with either accumulation, they agree."""
    comparison = _replay(os.path.join(GOLDEN, golden), steps=steps, mode=mode)
    assert comparison.passed, str(comparison)
    meta, _ = runfile.read(os.path.join(GOLDEN, golden))
    assert meta["env"]["tensorflow"] in ("1.14.0", "2.21.0")
    assert len(comparison.rows) == 4 * 3  # variables x effective steps
    assert max(r["dw"] for r in comparison.rows) < 1e-5
    assert all(r["dslot"] is not None for r in comparison.rows)  # Adam's m and v compared


def _example(name):
    return spec.load_spec(os.path.join(ROOT, "examples", "migration", "keras_port.py:" + name))


@pytest.mark.parametrize("mode", MODES)
def test_the_readme_example_parts_on_adams_epsilon_and_its_fix_agrees(mode):
    """The TF 1.14 script (v1 AdamOptimizer, epsilon 1e-8) recorded on
    py27-tf114; its Keras port with Adam's default epsilon (1e-7)."""
    path = os.path.join(GOLDEN, "example-tf114-adam.npz")
    port = _example("spec")
    comparison = _replay(path, mode=mode, **port)
    assert not comparison.passed
    assert comparison.first["step"] == 1 and comparison.first["variable"] == "hidden/kernel"
    assert any("Adam's epsilon: 1e-08 in the RUN" in c and "1e-07 here" in c
               for c in comparison.causes), comparison.causes
    assert "They part at effective step 1, variable hidden/kernel." in str(comparison)
    fixed = _replay(path, mode=mode, **_example("spec_fixed"))
    assert fixed.passed, str(fixed)


def _keras():
    return compat.keras_module()


def _make_model():
    keras = _keras()
    inputs = keras.Input(shape=(6,))
    hidden = keras.layers.Dense(8, activation="tanh")(inputs)
    model = keras.Model(inputs, keras.layers.Dense(2)(hidden))
    # (the same weights in every process, whatever ran before: Keras's own
    # draws depend on it, and an Adam step on a gradient near 0 turns the
    # round-off of 4 micro-batches against 1 into more than 1e-5)
    rng = np.random.RandomState(11)
    model.set_weights([rng.uniform(-0.5, 0.5, size=w.shape).astype("float32")
                       for w in model.get_weights()])
    return model


def _data(n=32):
    rng = np.random.RandomState(3)
    return rng.normal(size=(n, 6)).astype("float32"), rng.normal(size=(n, 2)).astype("float32")


@pytest.mark.parametrize("mode", MODES)
def test_the_weights_a_model_factory_sets_are_the_ones_recorded(tmpdir, mode):
    """TF1 graph mode: the factory's set_weights runs in the record's session
    (Keras finds it as the default one); the record must not initialize those
    variables again (it did: two records of one factory started apart)."""
    path = str(tmpdir.join("run.npz"))
    trace = migration.record(path, model=_make_model, batch=_data(), mode=mode,
                             optimizer=lambda: _keras().optimizers.Adam(0.05), effective_steps=1)
    again = migration.record(path, model=_make_model, batch=_data(), mode=mode,
                             optimizer=lambda: _keras().optimizers.Adam(0.05), effective_steps=1)
    for i, expected in enumerate(_make_model().get_weights()):
        np.testing.assert_array_equal(trace.arrays["init.%d" % i], expected)
    assert trace.arrays["loss.0"][0] == again.arrays["loss.0"][0]


@pytest.mark.parametrize("recorded_steps, replayed_steps", [(1, 4), (4, 1), (4, 2)])
def test_record_then_replay_with_other_accumulation_agrees(tmpdir, recorded_steps,
                                                           replayed_steps):
    path = str(tmpdir.join("run.npz"))
    trace = migration.record(path, model=_make_model, batch=_data(),
                             optimizer=lambda: _keras().optimizers.Adam(0.05),
                             steps=recorded_steps, effective_steps=3)
    assert len(trace.arrays["loss.0"]) == recorded_steps
    comparison = _replay(path, model=_make_model, steps=replayed_steps,
                         optimizer=lambda: _keras().optimizers.Adam(0.05))
    assert comparison.passed, str(comparison)


def _schedule(decay_steps):
    # (epsilon 1e-3: a gradient near 0 then moves its weight by about g /
    # epsilon, not by a whole step whose sign is the round-off of 4
    # micro-batches against 1, which threads may order either way)
    keras = _keras()
    return lambda: keras.optimizers.Adam(
        keras.optimizers.schedules.ExponentialDecay(0.05, decay_steps, 0.5), epsilon=1e-3)


def test_a_schedule_counted_in_micro_steps_parts_at_the_second_step(tmpdir):
    """The RUN (big batch) halves the learning rate every step; the port
    accumulates 4 micro-batches and converted decay_steps to micro-steps."""
    path = str(tmpdir.join("run.npz"))
    migration.record(path, model=_make_model, batch=_data(), optimizer=_schedule(1), steps=1,
                     effective_steps=3)
    comparison = _replay(path, model=_make_model, steps=4, optimizer=_schedule(4))
    assert not comparison.passed
    assert comparison.first["step"] == 2  # the first step uses the same rate
    assert comparison.first["variable"] == comparison.rows[0]["variable"]  # the first one
    assert "They part at effective step 2, variable %s." % comparison.first["variable"] \
        in str(comparison)
    assert any("the schedule counts other steps" in c and "effective step 2" in c
               for c in comparison.causes), comparison.causes
    right = _replay(path, model=_make_model, steps=4, optimizer=_schedule(1))
    assert right.passed, str(right)


def test_a_summed_loss_parts_at_the_first_step_and_is_named(tmpdir):
    path = str(tmpdir.join("run.npz"))
    migration.record(path, model=_make_model, batch=_data(), steps=1, effective_steps=2,
                     optimizer=lambda: _keras().optimizers.SGD(0.01))

    def summed(y_true, y_pred):
        return tf.reduce_sum(tf.reduce_mean(tf.square(y_true - y_pred), axis=-1))

    comparison = _replay(path, model=_make_model, steps=4, loss=summed,
                         optimizer=lambda: _keras().optimizers.SGD(0.01))
    assert not comparison.passed and comparison.first["step"] == 1
    assert "They part at effective step 1, variable %s." % comparison.first["variable"] \
        in str(comparison)
    assert any("the loss is summed here, averaged in the RUN" in c and "(8, a micro-batch here"
               in c for c in comparison.causes), comparison.causes


def _two_layer_variables(names, order):
    """``loss=fn(x, y)`` with variables named ``names`` and created in
    ``order``: W1 (6, 6), W2 (6, 6), head (6, 2)."""
    rng = np.random.RandomState(5)
    values = [rng.normal(size=s).astype("float32") * 0.3 for s in [(6, 6), (6, 6), (6, 2)]]
    made = {}
    for i in order:
        made[i] = tf.Variable(values[i], name=names[i])
    variables = [made[i] for i in order]

    def loss(x, y):
        h = tf.tanh(tf.matmul(tf.tanh(tf.matmul(x, made[0])), made[1]))
        return tf.reduce_mean(tf.square(tf.matmul(h, made[2]) - y))
    return dict(loss=loss, variables=variables)


def test_variables_reordered_by_the_port_part_without_a_map_and_agree_with_one(tmpdir):
    if "eager" not in MODES:
        pytest.skip("loss + variables SPECs run eagerly (a TF1 graph needs a model builder)")
    path = str(tmpdir.join("run.npz"))
    opt = lambda: _keras().optimizers.SGD(0.1)  # noqa: E731
    migration.record(path, batch=_data(), steps=1, effective_steps=2, optimizer=opt, mode="eager",
                     **_two_layer_variables(["encoder", "decoder", "head"], [0, 1, 2]))
    port = _two_layer_variables(["enc", "dec", "out"], [1, 0, 2])  # dec made first
    comparison = _replay(path, steps=2, optimizer=opt, mode="eager", **port)
    assert not comparison.passed and comparison.first["step"] == 1
    assert any("paired by order" in c and "--map" in c and "'encoder'" in c
               for c in comparison.causes), comparison.causes
    port = _two_layer_variables(["enc", "dec", "out"], [1, 0, 2])
    mapped = _replay(path, steps=2, optimizer=opt, mode="eager",
                     mapping={"encoder": "enc", "decoder": "dec", "head": "out"}, **port)
    assert mapped.passed, str(mapped)
    short = _two_layer_variables(["enc", "dec", "out"], [0, 1])
    with pytest.raises(migration_report.MatchError) as info:
        _replay(path, steps=2, optimizer=opt, mode="eager", **short)
    message = str(info.value)
    assert "the RUN has 3 variables, this SPEC 2" in message
    assert "head" in message and "--map" in message


def _copy_with(tmpdir, name, transform):
    with io.open(os.path.join(GOLDEN, BUILTIN_GOLDEN[0]), "rb") as f:
        data = f.read()
    path = str(tmpdir.join(name))
    with io.open(path, "wb") as f:
        f.write(transform(data))
    return path


def test_broken_run_files_get_a_clear_error(tmpdir):
    truncated = _copy_with(tmpdir, "truncated.npz", lambda d: d[:len(d) // 2])
    garbage = _copy_with(tmpdir, "garbage.npz", lambda d: b"not a zip file at all")
    for path in (truncated, garbage):
        with pytest.raises(runfile.RunFileError) as info:
            runfile.read(path)
        assert "truncated or corrupt" in str(info.value) and "record" in str(info.value)
    def flip(data):  # one byte inside a stored array: its CRC no longer holds
        data = bytearray(data)
        data[len(data) // 3] ^= 0xFF
        return bytes(data)

    flipped = _copy_with(tmpdir, "flipped.npz", flip)
    with pytest.raises(runfile.RunFileError):
        runfile.read(flipped)
    other = str(tmpdir.join("other.npz"))
    np.savez(other, weights=np.zeros(3))
    with pytest.raises(runfile.RunFileError) as info:
        runfile.read(other)
    assert "not a gradacc_compat run" in str(info.value)
    newer = str(tmpdir.join("newer.npz"))
    np.savez(newer, __meta__=np.frombuffer(json.dumps(
        {"format": runfile.FORMAT, "version": 99}).encode("utf-8"), np.uint8))
    with pytest.raises(runfile.RunFileError) as info:
        runfile.read(newer)
    assert "newer gradacc_compat" in str(info.value)
    with pytest.raises(runfile.RunFileError) as info:
        runfile.read(str(tmpdir.join("missing.npz")))
    assert "cannot read" in str(info.value)


def _cli(*args, **kwargs):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=ROOT)
    env.update(kwargs.pop("env", {}))
    proc = subprocess.Popen([sys.executable, "-m", "gradacc_compat"] + list(args),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            cwd=kwargs.pop("cwd", ROOT))
    out, err = proc.communicate()
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def test_the_command_line_records_and_replays(tmpdir):
    path = str(tmpdir.join("cli.npz"))
    code, out, err = _cli("record", "--out", path, "--steps", "2", "--effective-steps", "2")
    assert code == 0, err
    assert "recorded 2 effective steps of 2 micro-batch(es)" in out
    code, out, err = _cli("replay", "--against", path, "--steps", "4")
    assert code == 0, out + err
    assert "replay PASSED" in out
    truncated = _copy_with(tmpdir, "truncated.npz", lambda d: d[:100])
    code, out, err = _cli("replay", "--against", truncated)
    assert code == 2 and "truncated or corrupt" in err
    code, out, err = _cli("replay", "--map", "oops")
    assert code == 2 and "--map takes OLD=NEW" in err


def _readme_block(kind, after):
    with io.open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    text = text[text.index(after):]
    return re.search(r"```%s\n(.*?)```" % kind, text, re.S).group(1)


def test_the_readme_tox_template_records_in_its_oldest_env_and_replays_in_the_others(tmpdir):
    """The template's tox.ini as a user copies it, its test file as
    docs/migration.md gives it, and the commands of its two envs run here:
    the recording env's (GOLDEN=record), then a replaying env's."""
    template = _readme_block("ini", "## Prove your migration")
    six_config = pytest.importorskip("six").moves.configparser
    parser = six_config.ConfigParser()
    parser.read_string(template) if hasattr(parser, "read_string") else \
        parser.readfp(io.BytesIO(template.encode("utf-8")))
    envs = [e.strip() for e in parser.get("tox", "env_list").split(",")]
    oldest, newer = envs[0], envs[1:]
    assert "tf114" in oldest and newer
    assert "tf114: GOLDEN = record" in parser.get("testenv", "setenv")
    for env in newer:
        assert parser.get("testenv:%s" % env, "depends").strip() == oldest
    command = parser.get("testenv", "commands").split()
    with io.open(os.path.join(ROOT, "docs", "migration.md"), encoding="utf-8") as f:
        docs = f.read()
    test_file = re.search(r"```python\n(# tests/test_migration\.py.*?)```", docs, re.S).group(1)
    project = tmpdir.mkdir("project")
    project.join("tox.ini").write(template)
    project.mkdir("tests").join("test_migration.py").write(test_file)
    project.join("pytest.ini").write("[pytest]\ngac_golden_dir = golden\n")
    assert command[0] == "pytest"
    pytest_args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"] + command[1:]
    roles = ("record", "replay")
    if not compat.TF1:  # v1 AdamOptimizer takes no Keras 3 variables: the
        # run the oldest env records, as py27-tf114 recorded it
        with io.open(os.path.join(GOLDEN, "example-tf114-adam.npz"), "rb") as f:
            project.mkdir("golden").join("adam.npz").write_binary(f.read())
        roles = ("replay",)
    for role in roles:
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=ROOT)
        if role == "record":
            env["GOLDEN"] = "record"
        else:
            env.pop("GOLDEN", None)
        proc = subprocess.Popen(pytest_args, cwd=str(project), env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        out = proc.communicate()[0].decode("utf-8", "replace")
        assert proc.returncode == 0, out
        assert "1 passed" in out, out
    assert project.join("golden").listdir()  # the recording env wrote the golden run


def _quadratic():
    rng = np.random.RandomState(7)
    start = rng.normal(size=(4, 3)).astype("float32")
    target = rng.normal(size=(4, 3)).astype("float32")
    return start, (lambda w: tf.reduce_mean(tf.square(w * w - target)))


def _momentum_weights(rates):
    """The same weights trained by v1 MomentumOptimizer and Keras
    SGD(momentum=), learning rate ``rates[k]`` at step k."""
    start, loss = _quadratic()
    out = []
    for make in (lambda lr: tf.compat.v1.train.MomentumOptimizer(lr, 0.9),
                 lambda lr: _keras().optimizers.SGD(rates[0], momentum=0.9)):
        w = tf.Variable(start)
        rate = tf.Variable(rates[0])
        optimizer = make(rate)
        for lr in rates:
            rate.assign(lr)
            if not isinstance(optimizer, tf.compat.v1.train.Optimizer):
                optimizer.learning_rate = lr
            with tf.GradientTape() as tape:
                value = loss(w)
            optimizer.apply_gradients([(tape.gradient(value, w), w)])
        out.append(w.numpy())
    return out


def test_v1_and_keras_momentum_agree_at_a_constant_rate_and_part_when_it_changes():
    """The convention docs/migration.md states, on this TF: v1 keeps the sum
    of gradients, Keras the scaled step."""
    if "eager" not in MODES:
        pytest.skip("checked eagerly (TF2, TF 1.x eager)")
    v1, keras = _momentum_weights([0.1, 0.1, 0.1])
    assert np.max(np.abs(v1 - keras)) < 1e-6
    v1, keras = _momentum_weights([0.1, 0.05, 0.025])
    assert np.max(np.abs(v1 - keras)) > 1e-3


def test_replay_names_the_momentum_conventions_and_skips_their_slots(tmpdir):
    if "eager" not in MODES:
        pytest.skip("loss + variables SPECs run eagerly")
    path = str(tmpdir.join("run.npz"))
    migration.record(path, batch=_data(), steps=1, effective_steps=3, mode="eager",
                     optimizer=lambda: tf.compat.v1.train.MomentumOptimizer(0.1, 0.9),
                     **_two_layer_variables(["a", "b", "c"], [0, 1, 2]))
    comparison = _replay(path, steps=4, mode="eager",
                         optimizer=lambda: _keras().optimizers.SGD(0.1, momentum=0.9),
                         **_two_layer_variables(["a", "b", "c"], [0, 1, 2]))
    assert comparison.passed, str(comparison)  # a constant rate: the weights agree
    assert all(r["dslot"] is None for r in comparison.rows)
    assert any("v1 MomentumOptimizer keeps the sum of gradients" in n
               for n in comparison.notes), comparison.notes


@pytest.mark.parametrize("mode", MODES[:1])
def test_v1_and_keras_losses_agree_without_weights_and_part_with_zero_weights(mode):
    """The loss convention docs/migration.md states, on this TF:
    tf.compat.v1.losses reduce by the count of non-zero weights, Keras
    losses by the batch size."""
    rng = np.random.RandomState(2)
    y, p = rng.normal(size=(4, 2)).astype("float32"), rng.normal(size=(4, 2)).astype("float32")
    weights = np.array([[1.0], [0.0], [1.0], [1.0]], "float32")
    keras_mse = _keras().losses.MeanSquaredError()
    with testing.Runner(mode) as run:
        plain = run.values([tf.compat.v1.losses.mean_squared_error(y, p), keras_mse(y, p)])
        weighted = run.values([tf.compat.v1.losses.mean_squared_error(y, p, weights=weights),
                               keras_mse(y, p, sample_weight=weights)])
    assert abs(float(plain[0]) - float(plain[1])) < 1e-6
    assert abs(float(weighted[0]) / float(weighted[1]) - 4.0 / 3.0) < 1e-5
