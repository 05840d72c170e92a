# Modelled on a YOLOv3 detection trainer (Beetect, TF2 eager) with a
# --grad_accum_steps option: a Python counter of global steps sets the
# learning rate of a warm-up and cosine schedule, and advances on every
# micro-batch, while the optimizer applies once every N. The schedule runs
# N times too fast (GAC107); each epoch makes the sums anew and drops its
# last partial cycle (GAC110). The script's entry runs the epochs under
# `if __name__ == "__main__"`, which decides no cycle.
import argparse

import numpy as np
import tensorflow as tf


def calc_lr(step, params):
    if step < params.warmup_steps:
        return step / params.warmup_steps * params.lr_init
    done = (step - params.warmup_steps) / (params.total_steps - params.warmup_steps)
    return params.lr_end + 0.5 * (params.lr_init - params.lr_end) * (1 + np.cos(done * np.pi))


def train_epoch(model, dataset, optimizer, params, n):
    tvs = model.trainable_variables
    accum = [tf.zeros_like(v) for v in tvs]
    for i, (images, target) in enumerate(dataset):  # <- GAC110
        with tf.GradientTape() as tape:
            loss = model.compute_loss(images, target) / n
        accum = [a + g for a, g in zip(accum, tape.gradient(loss, tvs))]
        if (i + 1) % n == 0:
            optimizer.apply_gradients(zip(accum, tvs))
            accum = [tf.zeros_like(v) for v in tvs]
            optimizer.lr.assign(calc_lr(params.global_steps, params))
        params.global_steps += 1  # <- GAC107


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--grad_accum_steps", type=int, default=4)
    args = parser.parse_args()
    params = argparse.Namespace(global_steps=0, warmup_steps=1000, total_steps=50000,
                                lr_init=1e-3, lr_end=1e-6)
    model, dataset = None, None
    for epoch in range(300):
        train_epoch(model, dataset, tf.keras.optimizers.Adam(), params, args.grad_accum_steps)
