r"""Simulated benchmarks with known accuracies: clustered items, repeated runs, many models.

:func:`simulate_items` draws item-level results whose true accuracies (each model's
expected score on a new item of a new cluster) are known exactly, for calibration
studies, power analyses and examples.  For model :math:`m`, item :math:`i` in cluster
:math:`c`,

.. math::

    \operatorname{logit} p_{mi} = a_m + \sigma_c Z_c + \sigma_i Z_i + \sigma_e E_{mi},
    \qquad Z_c, Z_i, E_{mi} \sim N(0, 1),\qquad
    y_{mir} \sim \mathrm{Bernoulli}(p_{mi})\ (r = 1..R),

with :math:`a_m` chosen so that :math:`\int \operatorname{logit}^{-1}(a_m + s z)
\varphi(z)\,dz` equals the requested accuracy (:math:`s^2 = \sigma_c^2 + \sigma_i^2 +
\sigma_e^2`).  The model-specific term :math:`E_{mi}` (``interaction``) makes models
disagree on items beyond a shared difficulty, which the ``items`` model does not
assume: it tests robustness.  :math:`\sigma_c` is set so that the intra-cluster
correlation of single scores of one model on two items of one cluster is ``icc``:

.. math::

    \rho = \frac{\operatorname{Var}_{Z_c} E[p \mid Z_c]}{\mathrm{acc}(1 - \mathrm{acc})}.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.special import expit

from bayescm.models.items.quadrature import NODES, WEIGHTS, accuracy_of, alpha_of

__all__ = ["cluster_scale", "simulate_items"]


def _icc(a: float, sigma_c: float, rest: float) -> float:
    """Intra-cluster correlation of single scores for cluster scale ``sigma_c``."""
    s = np.sqrt(sigma_c**2 + rest**2)
    alpha = float(alpha_of(np.array(a), np.array(s)))
    given = accuracy_of(alpha + sigma_c * NODES, np.full(NODES.size, rest))
    mean = float(given @ WEIGHTS)
    return float(((given - mean) ** 2) @ WEIGHTS) / (mean * (1 - mean))


def cluster_scale(accuracy: float, icc: float, rest: float) -> float:
    """The cluster scale :math:`\\sigma_c` giving intra-cluster correlation ``icc`` at
    ``accuracy`` when items and interactions add spread ``rest`` (bisection)."""
    if icc <= 0:
        return 0.0
    lo, hi = 0.0, 20.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _icc(accuracy, mid, rest) < icc else (lo, mid)
    return 0.5 * (lo + hi)


def simulate_items(n_items: int, accuracy: float | Sequence[float] = 0.7, *,
                   icc: float = 0.0, cluster_size: int = 5, runs: int = 1,
                   item_spread: float = 1.5, interaction: float = 0.5,
                   rng: np.random.Generator | int | None = None) -> pd.DataFrame:
    """A long table of simulated results with known accuracies.

    Parameters
    ----------
    n_items
        Number of items.
    accuracy
        True accuracy of each model (one number: one model).
    icc
        Intra-cluster correlation of one model's scores on two items of one cluster
        (0: independent items, no cluster column).
    cluster_size
        Items per cluster (the last cluster may be smaller).
    runs
        Runs of every item by every model.
    item_spread, interaction
        :math:`\\sigma_i` (shared item difficulty) and :math:`\\sigma_e` (model-specific
        item effects) on the log-odds scale.
    rng
        A NumPy Generator or a seed.

    Returns
    -------
    pandas.DataFrame
        Columns ``model, item, run, correct`` (and ``cluster`` when ``icc > 0``);
        ``attrs["accuracy"]`` holds the true accuracies by model.

    Examples
    --------
    >>> from bayescm.analysis.items_simulate import simulate_items
    >>> df = simulate_items(50, [0.6, 0.8], icc=0.1, runs=2, rng=1)
    >>> sorted(df.columns), len(df)
    (['cluster', 'correct', 'item', 'model', 'run'], 200)
    """
    rng = np.random.default_rng(rng)
    acc = np.atleast_1d(np.asarray(accuracy, dtype=float))
    m_ = acc.size
    rest = float(np.hypot(item_spread, interaction))
    sigma_c = cluster_scale(float(acc.mean()), icc, rest)
    s = np.sqrt(sigma_c**2 + rest**2)
    a = alpha_of(acc, np.full(m_, s))
    n_clusters = -(-n_items // cluster_size)
    cluster = np.arange(n_items) // cluster_size
    z_c = rng.standard_normal(n_clusters)
    z_i = rng.standard_normal(n_items)
    e = rng.standard_normal((m_, n_items))
    p = expit(a[:, None] + sigma_c * z_c[cluster] + item_spread * z_i + interaction * e)
    y = rng.random((m_, n_items, runs)) < p[..., None]
    names = [f"model_{k}" for k in range(m_)]
    mm, ii, rr = np.meshgrid(np.arange(m_), np.arange(n_items), np.arange(runs),
                             indexing="ij")
    frame = pd.DataFrame({"model": np.asarray(names)[mm.ravel()], "item": ii.ravel(),
                          "run": rr.ravel(), "correct": y.ravel().astype(np.int64)})
    if icc > 0:
        frame.insert(2, "cluster", cluster[ii.ravel()])
    frame.attrs["accuracy"] = dict(zip(names, acc.tolist(), strict=True))
    return frame
