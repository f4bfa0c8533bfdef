r"""The accuracy a new set of items would show: the predictive of ``accuracy``.

A new benchmark of the same design -- the same number of clusters with the same
numbers of items, each item answered as often as before -- draws new cluster and
item effects from the population, and its observed accuracy for model :math:`m` is
the mean item score

.. math::

    \widehat{\mathrm{acc}}^{\,\mathrm{new}}_m = \frac1N \sum_{j=1}^N \frac{B_{mj}}{R_j},
    \qquad B_{mj} \sim \mathrm{Binomial}(R_j, \operatorname{logit}^{-1}(\alpha_m + v_{c(j)}
        + u_j)),\quad v_c \sim N(0, \sigma_v^2),\ u_j \sim N(0, \sigma_u^2),

with the same :math:`u, v` for every model (the new set is shared, so the new-set
accuracies of two models are paired too).  Its mean is ``accuracy``; its spread adds
the sampling of items, clusters and runs to the posterior uncertainty.

Drawing it exactly costs draws x models x items logistic values.  Above
:data:`EXACT_MAX` of them the item offsets :math:`w_j = u_j + v_{c(j)}` of each draw
are binned on a grid of step :data:`BIN` (in units of :math:`s`) and the sum over the
items is taken per bin with a first-order correction,
:math:`\sum_{j \in b} \operatorname{logit}^{-1}(\alpha + w_j) \approx h_b\, p(\alpha +
c_b) + p'(\alpha + c_b) \sum_{j \in b}(w_j - c_b)`, whose error is below
:math:`10^{-4}` per item; given the probabilities the run noise is normal with variance
:math:`\sum_j p_{mj}(1-p_{mj})/R_j / N^2` (many items: a sum of many independent
bounded terms).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

__all__ = ["BIN", "EXACT_MAX", "new_set_accuracy"]

EXACT_MAX = 20_000_000
BIN = 0.05
_CHUNK = 4_000_000  # logistic values held at once


def new_set_accuracy(alpha: np.ndarray, sigma_item: np.ndarray, sigma_cluster: np.ndarray,
                     cluster: np.ndarray, runs: np.ndarray, rng: np.random.Generator
                     ) -> np.ndarray:
    """Draws of the new-set accuracy, shape ``(S, M)``.

    Parameters
    ----------
    alpha
        ``(S, M)`` log-odds locations, one row per posterior draw.
    sigma_item, sigma_cluster
        ``(S,)`` scales (zeros for no clusters).
    cluster
        ``(N,)`` each new item's cluster position (``arange(N)`` without clusters).
    runs
        ``(N,)`` runs of each new item (whole numbers >= 1).
    """
    s_, m_ = alpha.shape
    n_ = cluster.size
    if s_ * m_ * n_ <= EXACT_MAX or n_ < 200:
        return _exact(alpha, sigma_item, sigma_cluster, cluster, runs, rng)
    return _binned(alpha, sigma_item, sigma_cluster, cluster, runs, rng)


def _offsets(rows: slice, sigma_item, sigma_cluster, cluster, rng) -> np.ndarray:
    """``(rows, N)`` item offsets u_j + v_c(j) of new items and clusters."""
    k = rows.stop - rows.start
    u = rng.standard_normal((k, cluster.size)) * sigma_item[rows, None]
    n_clusters = int(cluster.max()) + 1
    if np.any(sigma_cluster[rows] > 0):
        v = rng.standard_normal((k, n_clusters)) * sigma_cluster[rows, None]
        u += v[:, cluster]
    return u


def _exact(alpha, sigma_item, sigma_cluster, cluster, runs, rng) -> np.ndarray:
    s_, m_ = alpha.shape
    n_ = cluster.size
    out = np.empty((s_, m_))
    step = max(1, _CHUNK // max(m_ * n_, 1))
    runs = np.asarray(runs, dtype=np.int64)
    for lo in range(0, s_, step):
        rows = slice(lo, min(s_, lo + step))
        w = _offsets(rows, sigma_item, sigma_cluster, cluster, rng)
        p = expit(alpha[rows, :, None] + w[:, None, :])
        score = rng.binomial(np.broadcast_to(runs, p.shape), p) / runs
        out[rows] = score.mean(axis=-1)
    return out


def _binned(alpha, sigma_item, sigma_cluster, cluster, runs, rng) -> np.ndarray:
    s_, m_ = alpha.shape
    n_ = cluster.size
    s = np.sqrt(sigma_item**2 + sigma_cluster**2)
    edges = np.arange(-12.0, 12.0 + BIN, BIN)
    centres = 0.5 * (edges[1:] + edges[:-1])
    b_ = centres.size
    inv_runs = float(np.mean(1.0 / np.asarray(runs, dtype=float)))
    out = np.empty((s_, m_))
    step = max(1, _CHUNK // max(n_, m_ * b_, 1))
    for lo in range(0, s_, step):
        rows = slice(lo, min(s_, lo + step))
        k = rows.stop - rows.start
        t = _offsets(rows, sigma_item, sigma_cluster, cluster, rng) / s[rows, None]
        idx = np.clip(np.searchsorted(edges, t) - 1, 0, b_ - 1)
        flat = idx + b_ * np.arange(k)[:, None]
        count = np.bincount(flat.ravel(), minlength=k * b_).reshape(k, b_)
        offset = np.bincount(flat.ravel(), weights=(t - centres[idx]).ravel(),
                             minlength=k * b_).reshape(k, b_)
        eta = alpha[rows, :, None] + (s[rows, None] * centres)[:, None, :]
        p = expit(eta)
        dp = p * (1 - p)
        total = (p * count[:, None, :]).sum(-1) + (
            dp * (offset * s[rows, None])[:, None, :]).sum(-1)
        var = (dp * count[:, None, :]).sum(-1) * inv_runs
        out[rows] = (total + np.sqrt(var) * rng.standard_normal((k, m_))) / n_
    return np.clip(out, 0.0, 1.0)
