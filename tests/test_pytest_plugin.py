"""The pytest plugin, used the way a downstream project uses it: from a
throwaway test file in a fresh pytest process (the plugin comes from the
installed package's ``pytest11`` entry point)."""
from __future__ import absolute_import, division, print_function

import subprocess
import sys
import textwrap

import six

from gradacc_compat import compat

INERT = textwrap.dedent("""
    import sys

    def test_plugin_is_loaded_and_imports_nothing(request):
        assert request.config.pluginmanager.hasplugin("gradacc_compat")
        assert "tensorflow" not in sys.modules
        assert "gradacc_compat" not in sys.modules
""")

DOWNSTREAM = textwrap.dedent("""
    import numpy as np
    import pytest

    def _models():
        from gradacc_compat import compat
        keras = compat.keras_module()

        def plain():
            inputs = keras.Input(shape=(3,))
            return keras.Model(inputs, keras.layers.Dense(2, activation="tanh")(inputs))

        def with_bn():
            inputs = keras.Input(shape=(3,))
            hidden = keras.layers.BatchNormalization(name="bn")(keras.layers.Dense(4)(inputs))
            return keras.Model(inputs, keras.layers.Dense(2)(hidden))
        return keras, plain, with_bn

    def test_facts(gac_facts):
        assert gac_facts["tf_version_string"]
        assert gac_facts["modes"]

    def test_strategy_has_two_replicas(gac_strategy):
        assert gac_strategy.num_replicas_in_sync == 2

    def test_assert_matches_big_batch(gac_strategy, gac_assert_matches_big_batch):
        keras, plain, with_bn = _models()
        rng = np.random.RandomState(0)
        batch = (rng.normal(size=(8, 3)), rng.normal(size=(8, 2)))
        report = gac_assert_matches_big_batch(model=plain, batch=batch, steps=2,
                                              optimizer=lambda: keras.optimizers.Adam(0.1))
        assert any("Mirrored" in r.strategy and r.passed for r in report.rows)
        with pytest.raises(AssertionError) as info:
            gac_assert_matches_big_batch(model=with_bn, batch=batch, steps=2,
                                         optimizer=lambda: keras.optimizers.SGD(0.1))
        assert "layer 'bn'" in str(info.value)

    def test_runner(gac_runner, gac_facts):
        from gradacc_compat.compat import tf
        with gac_runner(gac_facts["modes"][0], distributed=True) as run:
            assert run.replicas == 2
            assert run.value(tf.constant(3.0)) == 3.0
""")


def _pytest(tmpdir, source, ini=""):
    tmpdir.join("test_downstream.py").write(source)
    tmpdir.join("pytest.ini").write("[pytest]\n" + ini)
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             str(tmpdir.join("test_downstream.py"))], cwd=str(tmpdir),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = six.ensure_str(proc.communicate()[0])
    return proc.returncode, out


def test_plugin_is_inert_unless_asked(tmpdir):
    code, out = _pytest(tmpdir, INERT)
    assert code == 0, out
    assert "1 passed" in out


def test_downstream_suite_uses_the_fixtures(tmpdir):
    ini = "gac_logical_cpus = 2\n"
    if compat.TF1 and compat.eager_by_default():
        ini += "gac_tf1_eager = true\n"
    code, out = _pytest(tmpdir, DOWNSTREAM, ini)
    assert code == 0, out
    assert "4 passed" in out, out
