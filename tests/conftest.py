"""Shared fixtures. Fitted results are module-level caches: sampling is done once."""

from __future__ import annotations

import functools

import matplotlib
import pytest

matplotlib.use("Agg")

import bayescm as bcm

# Matrices used across the statistical tests: the cocaine example (a zero cell),
# a balanced mid-size matrix, an unbalanced one, and a tiny one with two zero cells.
MATRICES = {
    "cocaine": dict(tp=26, fn=0, fp=2, tn=6),
    "mid": dict(tp=31, fn=9, fp=13, tn=20),
    "rare": dict(tp=3, fn=12, fp=0, tn=150),
    "tiny": dict(tp=5, fn=0, fp=0, tn=3),
}


@pytest.fixture(scope="session")
def cocaine() -> bcm.ConfusionMatrix:
    return bcm.ConfusionMatrix(**MATRICES["cocaine"])


@pytest.fixture(scope="session")
def batch() -> bcm.ConfusionMatrix:
    keys = list(MATRICES)
    return bcm.ConfusionMatrix(
        **{c: [MATRICES[k][c] for k in keys] for c in bcm.CELLS}, classifier=keys
    )


@functools.cache
def fitted(family: str, sampler: str, draws: int = 1000, seed: int = 11):
    """One fit per (family, sampler) for the whole session."""
    keys = list(MATRICES)
    cms = bcm.ConfusionMatrix(
        **{c: [MATRICES[k][c] for k in keys] for c in bcm.CELLS}, classifier=keys
    )
    builder = getattr(bcm.models, family)
    return bcm.fit(builder(cms), sampler=sampler, draws=draws, random_seed=seed)
