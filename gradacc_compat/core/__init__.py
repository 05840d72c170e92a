"""The accumulator and what it is made of: the public class
(``accumulator``), its replica-local state, micro-step writes and apply
decision (``accumulator_*``), the adapters it picks for an optimizer
(``families``; ``horovod_support`` for Horovod's, which it never
imports), argument checks, compact rows, audits and checkpoints. Nothing
here imports from ``wrapping``, ``distributed``, ``tools`` or ``lint``."""
