"""gac.verify and `python -m gradacc_compat verify` (and its alias `check`)."""
from __future__ import absolute_import, division, print_function

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import six

import gradacc_compat as gac
from gradacc_compat import compat
from gradacc_compat.tools import testing
from gradacc_compat.compat import tf

from tests import harness as H


def _cli(*args, **kwargs):
    proc = subprocess.Popen([sys.executable, "-m", "gradacc_compat"] + list(args),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=kwargs.get("cwd"))
    out, err = proc.communicate()
    return proc.returncode, six.ensure_str(out), six.ensure_str(err)


#: The CLI runs TF 1.x in graph mode unless told (this env may be TF1 eager).
MODE_FLAGS = ["--eager"] if compat.TF1 and compat.eager_by_default() else []


def _rows(text, word):
    return [line for line in text.splitlines() if line.rstrip().endswith(word)
            or (" %s " % word) in line]


def test_cli_verify_builtin_passes_in_every_mode_and_under_mirrored_strategy():
    code, out, err = _cli("verify", *MODE_FLAGS)
    assert code == 0, out + err
    assert "verify PASSED" in out
    passed = _rows(out, "PASS")
    for mode in testing.available_modes():
        label = {"eager": "eager", "function": "tf.function", "graph": "TF1 graph"}[mode]
        assert any(label in r and "default" in r for r in passed), out
    assert any("MirroredStrategy x2" in r for r in passed), out
    assert "FAIL" not in out and "SKIP" not in out, out


def test_cli_check_is_an_alias_that_also_prints_the_versions():
    code, out, err = _cli("check")
    assert code == 0, out + err
    assert compat.TF_VERSION_STRING in out and "verify PASSED" in out


SPEC = textwrap.dedent("""
    import numpy as np
    from gradacc_compat import compat
    from gradacc_compat.compat import tf
    keras = compat.keras_module()

    def make_model():
        inputs = keras.Input(shape=(4,))
        hidden = keras.layers.Dense(6)(inputs)
        hidden = keras.layers.BatchNormalization(name="bn")(hidden)
        return keras.Model(inputs, keras.layers.Dense(1)(hidden))

    def spec():
        rng = np.random.RandomState(0)
        return dict(model=make_model, batch=(rng.normal(size=(16, 4)), rng.normal(size=(16, 1))),
                    optimizer=lambda: keras.optimizers.SGD(0.1), steps=4)
""")


def test_cli_verify_fails_on_batch_normalization_and_names_the_layer(tmpdir):
    path = tmpdir.join("bn_spec.py")
    path.write(SPEC)
    code, out, err = _cli("verify", "%s:spec" % path, "--no-subprocess", *MODE_FLAGS)
    assert code == 1, out + err
    assert "FAIL" in out and "verify FAILED" in out
    assert "layer 'bn' (BatchNormalization)" in out and "LayerNormalization" in out


def _mean_loss(variables, reduce):
    def loss(x, y):
        return reduce(tf.square(tf.matmul(x, variables[0]) + variables[1] - y))
    return loss


@pytest.mark.skipif(not compat.eager_by_default(), reason="loss + variables are graph-bound "
                    "in a TF1 graph (the CLI test covers graphs with a model function)")
def test_verify_loss_and_variables_and_a_sum_loss_fails():
    rng = np.random.RandomState(0)
    x, y = rng.normal(size=(12, 3)), rng.normal(size=(12, 2))
    variables = [tf.Variable(rng.normal(size=(3, 2)).astype("float32")),
                 tf.Variable(np.zeros(2, "float32"))]
    make = lambda: tf.compat.v1.train.MomentumOptimizer(0.05, 0.9)  # noqa: E731
    good = gac.verify(loss=_mean_loss(variables, tf.reduce_mean), variables=variables,
                      optimizer=make, batch=(x, y), steps=3, print_fn=None)
    assert good.passed, str(good)
    ran = [r for r in good.rows if not r.skipped]
    assert [r.mode for r in ran] == list(testing.available_modes())
    assert all(r.weights < 1e-5 and r.state < 1e-5 for r in ran)
    # A sum over the batch is not what mean accumulation equals: verify sees it.
    bad = gac.verify(loss=_mean_loss(variables, tf.reduce_sum), variables=variables,
                     optimizer=make, batch=(x, y), steps=3, print_fn=None)
    assert not bad.passed and "MEAN over the batch" in str(bad)
    assert all(r.weights > 1e-3 for r in bad.rows if not r.skipped)


@pytest.mark.skipif(not compat.eager_by_default(), reason="a Keras model instance is used eagerly")
def test_verify_a_built_keras_model_restores_its_weights_between_rows():
    model = H.keras_dense_model()
    before = [np.array(w) for w in model.get_weights()]
    x, y = H.make_data(8)
    report = gac.verify(model=model, optimizer=lambda: compat.keras_module().optimizers.Adam(0.1),
                        batch=(x, y), steps=2, print_fn=None)
    # Every row trained the same model object (its weights moved), and each
    # started from the weights it had before: otherwise the big batch and
    # the accumulated run would start apart and FAIL.
    assert report.passed, str(report)
    assert not np.allclose(model.get_weights()[0], before[0])
    skipped = [r for r in report.rows if r.skipped]
    assert all("function that builds it" in r.note for r in skipped)


@pytest.mark.skipif(not compat.eager_by_default(), reason="a Keras model instance is used eagerly")
def test_verify_says_what_a_learning_rate_schedule_counts():
    """A schedule keyed on a step counter: the report says its steps are
    effective steps (BERT's num_train_steps comes from the batch size)."""
    keras = compat.keras_module()
    x, y = H.make_data(8)
    schedule = keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5)
    report = gac.verify(model=H.keras_dense_model,
                        optimizer={"decayed": lambda: keras.optimizers.SGD(schedule),
                                   "constant": lambda: keras.optimizers.SGD(0.1)},
                        batch=(x, y), steps=2, modes=["eager"], distributed=False,
                        print_fn=None)
    assert report.passed, str(report)
    assert len(report.notes) == 1 and report.notes[0].startswith("decayed:")
    assert "ExponentialDecay" in report.notes[0] and "effective steps" in report.notes[0]
    assert "Notes:" in str(report)


def test_verify_bad_input_says_what_was_received():
    x, y = H.make_data(10)
    with pytest.raises(TypeError, match="function that returns a NEW optimizer"):
        gac.verify(model=H.keras_dense_model, optimizer=tf.compat.v1.train.AdamOptimizer(0.1),
                   batch=(x, y), steps=2, print_fn=None)
    with pytest.raises(ValueError, match="10 examples, which do not split into steps=4"):
        gac.verify(model=H.keras_dense_model, optimizer=lambda: None, batch=(x, y), steps=4,
                   print_fn=None)
