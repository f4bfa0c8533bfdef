r"""Dirichlet draws as normalised Gamma variates, safe where every parameter is tiny.

:math:`X = G / \sum_k G_k` with :math:`G_k \sim \mathrm{Gamma}(\alpha_k)`.  Where every
:math:`\alpha_k` of a row is tiny (below about 1e-3: a fold model's spread so wide
that :math:`\kappa\mu` is that small in every cell, a prior of tiny weights) all its
Gamma variates underflow to 0 and the ratio is 0/0.  Such a row is drawn again in log
space, :math:`\log G_a = \log G_{a+1} + \log(U)/a` (as :math:`G_a = G_{a+1} U^{1/a}` in
law), normalised by its largest term, from a stream seeded by its parameters: the other
rows keep their draws, and the same generator gives the same numbers as the plain ratio
wherever that ratio exists.
"""

from __future__ import annotations

import numpy as np

from bayescm.stats import stream_from

__all__ = ["dirichlet", "log_space_dirichlet"]


def dirichlet(rng: np.random.Generator, alpha: np.ndarray,
              size: tuple[int, ...] | None = None) -> np.ndarray:
    """Dirichlet(alpha) draws along the last axis (``size`` as ``standard_gamma``'s)."""
    g = rng.standard_gamma(alpha, size=size)
    total = g.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore"):
        x = g / total
    lost = total[..., 0] == 0
    if lost.any():
        a = np.broadcast_to(alpha, g.shape)[lost]
        x[lost] = log_space_dirichlet(stream_from(a, person=b"underflow"), a)
    return x


def log_space_dirichlet(rng: np.random.Generator, alpha: np.ndarray) -> np.ndarray:
    """Dirichlet(alpha) draws along the last axis, the Gamma variates kept as logs."""
    log_g = np.log(rng.standard_gamma(alpha + 1.0)) + np.log(rng.random(alpha.shape)) / alpha
    w = np.exp(log_g - log_g.max(axis=-1, keepdims=True))
    return w / w.sum(axis=-1, keepdims=True)
