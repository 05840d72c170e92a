"""Probe (not part of the package or the tests): a hand-written loop that keeps
a cycle's sparse rows compact, against floor+write and the accumulator, on the
embedding workload, TF 2.21. Run: PYTHONPATH=. python docs/probes/probe-tf2.21-compact-sparse.py
Output of the run quoted in docs/benchmarks.md: docs/probes/probe-tf2.21-compact-sparse.txt."""
import os, sys, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL","2")
import numpy as np
import tensorflow as tf
import gradacc_compat as gac
from gradacc_compat import compat
from gradacc_compat.core import accumulator as A
from gradacc_compat.bench import workloads, candidates as C, timing
s = C.Setting(workloads.get("embedding"), 8, 32)
N = s.steps

def compact_variant(op="segsum"):
    model, opt = s.workload.build(), s.optimizer()
    opt.build(model.trainable_variables)
    tv = model.trainable_variables
    emb = tv[0]; V, D = emb.shape
    R = 32 * 16
    vals = tf.Variable(tf.zeros([N * R, D]), trainable=False)
    idx = tf.Variable(tf.zeros([N * R], tf.int32), trainable=False)
    dense = [tf.Variable(tf.zeros_like(v), trainable=False) for v in tv[1:]]
    micro = tf.Variable(0, dtype=tf.int32)
    c = C.Candidate("compact-" + op, "x", model, opt, exact=True)
    def step(x, y):
        grads = s.gradients(model, x, y)
        g0 = grads[0]
        k = micro.read_value()
        w1 = vals[k * R:(k + 1) * R].assign(g0.values)
        w2 = idx[k * R:(k + 1) * R].assign(tf.cast(g0.indices, tf.int32))
        def first():
            return tf.group(*[b.assign(g) for b, g in zip(dense, grads[1:])])
        def rest():
            return tf.group(*[b.assign_add(g) for b, g in zip(dense, grads[1:])])
        wd = tf.cond(tf.equal(k, 0), first, rest)
        with tf.control_dependencies([w1, w2, wd]):
            m2 = micro.assign_add(1)
        def apply():
            if op == "segsum":
                g_emb = tf.math.unsorted_segment_sum(vals.read_value() / float(N), idx.read_value(), V)
            else:
                g_emb = tf.scatter_nd(tf.expand_dims(idx.read_value(), 1), vals.read_value() / float(N), [V, D])
            opt.apply_gradients([(g_emb, emb)] + [(b / float(N), v) for b, v in zip(dense, tv[1:])])
            with tf.control_dependencies([g_emb]):
                micro.assign(0)
            return tf.constant(True)
        out = tf.cond(tf.greater_equal(m2, N), apply, lambda: tf.constant(False))
        compat.run_as_call(out)
        return out
    return C._each_micro_batch(s, c, step)

def acc_variant(cls, name):
    model, opt = s.workload.build(), s.optimizer()
    acc = cls(s.steps)
    c = C.Candidate(name, name, model, opt, exact=True)
    def step(x, y):
        acc.step(opt, s.gradients(model, x, y), model.trainable_variables)
    return C._each_micro_batch(s, c, step)

cands = [C._floor_write(s), acc_variant(gac.GradientAccumulator, "gac"), compact_variant("segsum"), compact_variant("scatter")]
for c in cands: c.block(2)
ref = cands[0].weights()
big = C.big(s); big.block(2); bref = big.weights()
for c in cands:
    print(c.name, "vs floor", max(float(np.max(np.abs(a - b))) for a, b in zip(ref, c.weights())), "vs big", max(float(np.max(np.abs(a - b))) for a, b in zip(bref, c.weights())), "traces", c.traces)
names = [c.name for c in cands]
pairs = [(n, "floor+write") for n in names[1:]] + [(n, "gac") for n in names[2:]]
samples, found, spent = timing.until_resolved(cands, s.steps, 2, pairs, 0.01, float(os.environ.get("SECS", 150)))
for n in names: print("%-16s %.3f ms" % (n, np.median(samples[n])))
for p, iv in found.items(): print(p, "%.3f [%.3f-%.3f]" % iv, len(samples[p[0]]))
