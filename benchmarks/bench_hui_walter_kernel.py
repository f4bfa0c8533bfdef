"""Time per log density + gradient of the compiled Hui–Walter kernel (nutpie's inner loop).

Run from the repository root (``PYTHONPATH`` chooses the checkout, so that two
versions can be compared on the same machine, interleaved)::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_hui_walter_kernel.py

A complete table of three classifiers in two populations (the model card's example),
without and with dependence of every pair, and the same table with 30 % of its cases
moved into cells with a missing result.  Each figure is the best of 15 runs of 10,000
calls at random unconstrained points from a numba loop (no Python dispatch between
calls, as in nutpie, which calls the compiled ``logp`` callback).
"""

from __future__ import annotations

import time
import warnings

import numba
import numpy as np

import bayescm as bcm
from bayescm.models import family_of, spec_of

COUNTS = np.array([[137, 38, 14, 15, 18, 28, 122, 428], [316, 59, 59, 14, 20, 26, 89, 217]])
PATTERNS = ["+++", "++-", "+-+", "+--", "-++", "-+-", "--+", "---"]


def tables() -> dict[str, bcm.AgreementTable]:
    out = {"complete": bcm.AgreementTable(COUNTS, populations=["s1", "s2"])}
    from bayescm.models.hui_walter import kernel as _kernel_hui_walter

    if hasattr(_kernel_hui_walter, "_matvec"):  # a checkout whose kernel takes cells
        part = {}
        for p, row in zip(("s1", "s2"), COUNTS, strict=True):
            cells = {k: int(v * 0.7) for k, v in zip(PATTERNS, row, strict=True)}
            cells.update({"++?": int(row[0] * 0.3), "--?": int(row[7] * 0.3),
                          "?+-": int(row[3] * 0.3), "-?-": int(row[5] * 0.3)})
            part[p] = cells
        out["missing results"] = bcm.AgreementTable.from_counts(part)
    return out


def per_call(log_density, user_data: np.ndarray, n_dim: int) -> float:
    @numba.njit
    def loop(xs, ud, g):
        s = 0.0
        for i in range(xs.shape[0]):
            s += log_density(xs[i], ud, g)
        return s

    xs = np.random.default_rng(0).normal(0, 1, (10_000, n_dim))
    g = np.zeros(n_dim)
    loop(xs[:2], user_data, g)  # compile the loop
    best = np.inf
    for _ in range(15):
        start = time.perf_counter()
        loop(xs, user_data, g)
        best = min(best, (time.perf_counter() - start) / len(xs))
    return best


def main() -> None:
    for name, tab in tables().items():
        for dependence in (False, True):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = bcm.models.hui_walter(tab, conditional_dependence=dependence)
            kernel = family_of(model).kernel(model, spec_of(model))
            us = per_call(kernel.module.log_density, kernel.user_data.astype(float),
                          kernel.n_dim) * 1e6
            print(f"{name:16s} dependence={dependence!s:5s}: {us:.3f} us per logp + gradient")


if __name__ == "__main__":
    main()
