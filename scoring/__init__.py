"""Metrics, model endpoints, prompting methods, sandboxed execution and scoring runs."""

import os

# BERTScore multiplies small matrices (tokens × 384): OpenBLAS threads make each call ~20× slower on a busy
# machine (780 ms against 34 ms measured), and workers already run items in parallel. This must happen before
# numpy is first imported, which the app registry does after this package; an explicit setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
