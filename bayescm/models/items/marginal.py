r"""One model's item and cluster effects integrated out: the marginal likelihood.

With a single model (:math:`M = 1`) the item effects :math:`u_i` and the cluster
effects :math:`v_c` of :func:`bayescm.models.items` integrate out exactly, up to
quadrature, and the posterior is over :math:`(\alpha, \sigma_\mathrm{item}[,
\sigma_\mathrm{cluster}])` alone: two or three coordinates, where NUTS over one
coordinate per item and per cluster mixes the scales slowly.

An item with :math:`y` successes in :math:`n` runs, given its cluster's log-odds
:math:`g = \alpha + v_c`, has likelihood

.. math::

    F_{y,n}(g; \sigma_i) = \binom{n}{y}\int \sigma(g + \sigma_i u)^{y}\,
        \sigma(-g - \sigma_i u)^{n-y}\,\varphi(u)\,du

(:math:`\sigma` the logistic function, :math:`\varphi` the standard normal density).
Items of one cluster with the same :math:`(y, n)` are exchangeable, so a cluster is a
*composition*: counts :math:`\mathrm{cnt}_{cp}` of the distinct patterns
:math:`p = (y, n)`, and clusters with the same composition have the same likelihood

.. math::

    L_c = \int \prod_p F_p(\alpha + \sigma_c z; \sigma_i)^{\mathrm{cnt}_{cp}}\,
        \varphi(z)\,dz,\qquad
    \log L = \sum_{\text{compositions } d} \mathrm{mult}_d \log L_d .

Without clusters every item is its own composition and :math:`L_d = F_p(\alpha)`
(one outer node, :math:`z = 0`, weight 1).

Quadrature
----------
Both integrals are trapezoid rules on the real line, truncated to
:math:`[-9, 9]` (the normal mass beyond 9 is :math:`10^{-19}`), with steps fixed by
the data set and the priors -- never by the parameters, so the density and its
gradient stay smooth:

.. math::

    h_\mathrm{in} = \min\Bigl(0.1, \frac{0.25}{\sqrt{n_\mathrm{max}}}\Bigr)\rho_i,
    \qquad
    h_\mathrm{out} = \min\Bigl(0.1, \frac{0.25}{\sqrt{T_\mathrm{max}}}\Bigr)\rho_c,
    \qquad \rho = \min(1, 2/\text{prior scale}),

:math:`n_\mathrm{max}` the most runs of an item, :math:`T_\mathrm{max}` the most
trials in a cluster.  Why: the logistic function has poles at imaginary distance
:math:`\pi`, so each integrand is analytic in the strip
:math:`|\operatorname{Im} u| < \pi/\sigma_i` (:math:`|\operatorname{Im} z| <
\pi/\sigma_c`), and the trapezoid rule's error falls like
:math:`\exp(-2\pi\cdot(\pi/\sigma)/h)` (Trefethen & Weideman, "The exponentially
convergent trapezoidal rule", SIAM Review 2014).  A product of many factors makes the
integrand a peak of width about :math:`1/(\sigma\sqrt{T p(1-p)}) \ge
2/(\sigma\sqrt T)`: a step of :math:`0.25/\sqrt T` puts :math:`8/\sigma` nodes in
its standard deviation, and the rule's error on a normal peak,
:math:`\exp(-2\pi^2(\mathrm{sd}/h)^2)`, stays below :math:`10^{-8}` for
:math:`\sigma \le 8`.  Against adaptive quadrature (and a trapezoid rule of step
0.004): :math:`|\Delta\log L_c| < 10^{-12}` for scales up to 5 and below
:math:`3\cdot 10^{-9}` at 8 with the default priors (clusters of 5 items, 1 and 3
runs, 50 items); at scale 12 -- six prior standard deviations out -- :math:`10^{-4}`.
:math:`\rho` shrinks the steps when a prior allows larger scales (HalfNormal(4):
half the step), so the same accuracy holds as far out in the prior's tail.

The PyMC model computes all sums as log-sum-exps (:func:`loglik`); the compiled kernel
(:mod:`bayescm.models.items.kernel_marginal`) computes the same grids from
:math:`e^{g}e^{\sigma_i u_j}` products, and is tested equal to it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import gammaln

from bayescm.data.items import ItemResults

__all__ = ["CELLS_LIMIT", "EXP_COST", "HALF_RANGE", "POWERS_MAX", "STEP_MAX", "STEP_PEAK",
           "WORK_MAX", "Layout", "grid_work", "layout", "loglik", "step"]

HALF_RANGE = 9.0
"""Both grids cover :math:`[-9, 9]` (normal mass outside: :math:`2\\cdot 10^{-19}`)."""
STEP_MAX = 0.1
"""The largest step of either grid."""
STEP_PEAK = 0.25
"""The step for a product of T Bernoulli factors is at most ``STEP_PEAK / sqrt(T)``."""
POWERS_MAX = 32
"""Up to this many runs per item the compiled kernel takes :math:`p^y q^{n-y}` from a
table of powers (products, about 1 ns per cell); beyond, from one exponential per
pattern and node (the table would grow with the runs)."""
EXP_COST = 25
"""A cell computed by exponentials costs about this many cells by the table of powers
(measured: 0.6-1.2 ns per cell by the table, 7-36 ns by exponentials, the more the more
patterns are extreme enough to be summed in logs)."""
WORK_MAX = 2 * 10**6
"""The most work (cells, weighted by :data:`EXP_COST` beyond :data:`POWERS_MAX` runs)
of one density evaluation for ``marginal="auto"`` to choose the route: about 2 ms per
gradient.  The steps shrink like one over the root of the runs per item and of the
trials per cluster, so many runs in clusters make the grids large -- 6 items of 100 runs
in 3 clusters: 5.5 million cells, 59 ms per gradient, where the sampled effects take
microseconds.  Clusters of 5 items with 1 or 3 runs (the calibration grid) take at
most 0.25 million cells; 300 items of 10 runs in clusters of 5, 1.6 million."""
CELLS_LIMIT = 2 * 10**7
"""The most cells ``marginal=True`` accepts: PyMC's graph of the density holds arrays of
this many numbers (160 MB each)."""
_REF_SCALE = 2.0  # steps shrink under priors wider than HalfNormal(2): the accuracy
# quoted above holds as many prior sds out (the cluster scale's default, 2.5: 0.8 the step)


def step(trials: float, prior_scale: float) -> float:
    """The trapezoid step for integrands that multiply ``trials`` Bernoulli factors,
    under a HalfNormal(``prior_scale``) prior on the scale that multiplies the node.

    Examples
    --------
    >>> step(1, 2.0), round(step(25, 2.0), 4), round(step(25, 4.0), 4)
    (0.1, 0.05, 0.025)
    """
    return min(STEP_MAX, STEP_PEAK / math.sqrt(max(trials, 1.0))) * min(
        1.0, _REF_SCALE / prior_scale)


def grid_work(res: ItemResults, scale_item: float, scale_cluster: float | None
              ) -> tuple[int, int]:
    """Cells of one density evaluation (patterns x outer nodes x inner nodes: what
    :func:`layout` would build, without building it) and their work, weighted by
    :data:`EXP_COST` when items have more than :data:`POWERS_MAX` runs.

    Examples
    --------
    >>> import bayescm as bcm
    >>> res = bcm.ItemResults([[1, 0, 1, 1]], [[1, 1, 1, 1]], clusters=["a", "a", "b", "b"])
    >>> grid_work(res, 2.0, 2.0) == (2 * 181 * 181, 2 * 181 * 181)
    True
    """
    y, n = res.successes_array[0], res.trials_array[0]
    patterns = len(np.unique(np.stack([y, n], 1), axis=0))
    inner = _nodes(step(float(n.max()), scale_item))
    outer = 1 if scale_cluster is None else _nodes(step(float(
        np.bincount(res.cluster_index, weights=n).max()), scale_cluster))
    cells = patterns * outer * inner
    return cells, cells * (1 if n.max() <= POWERS_MAX else EXP_COST)


def _nodes(h: float) -> int:
    return 2 * math.ceil(HALF_RANGE / h - 1e-9) + 1


def _grid(h: float) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric nodes :math:`h k` on [-9, 9] and log weights :math:`\\log(h\\varphi)`."""
    half = (_nodes(h) - 1) // 2
    nodes = h * np.arange(-half, half + 1, dtype=float)
    return nodes, math.log(h) - 0.5 * nodes**2 - 0.5 * math.log(2.0 * math.pi)


@dataclass(frozen=True)
class Layout:
    """The marginal likelihood's data: patterns, compositions and the two grids.

    Attributes
    ----------
    y, n, log_binom
        ``(P,)`` the distinct (successes, runs) patterns, sorted, and
        :math:`\\log\\binom{n}{y}`.
    counts
        ``(D, P)`` how many items of each pattern a composition holds.
    mult
        ``(D,)`` how many clusters (without clusters: items) have that composition.
    z, log_omega
        Outer nodes and log weights (``[0]`` and ``[0]`` without clusters).
    u, log_w
        Inner nodes and log weights.
    """

    y: np.ndarray
    n: np.ndarray
    log_binom: np.ndarray
    counts: np.ndarray
    mult: np.ndarray
    z: np.ndarray
    log_omega: np.ndarray
    u: np.ndarray
    log_w: np.ndarray

    def arrays(self) -> dict[str, np.ndarray]:
        """``name -> array`` under the PyMC model's data names."""
        return {f"marginal_{k}": np.asarray(getattr(self, k), float) for k in (
            "y", "n", "log_binom", "counts", "mult", "z", "log_omega", "u", "log_w")}


def layout(res: ItemResults, scale_item: float, scale_cluster: float | None) -> Layout:
    """Patterns and grids of one model's results (``scale_cluster`` None: no clusters).

    Examples
    --------
    >>> import bayescm as bcm
    >>> res = bcm.ItemResults([[1, 0, 1, 1]], [[1, 1, 1, 1]], clusters=["a", "a", "b", "b"])
    >>> lay = layout(res, 2.0, 2.0)
    >>> lay.y.tolist(), lay.counts.tolist(), lay.mult.tolist(), lay.u.size
    ([0.0, 1.0], [[0.0, 2.0], [1.0, 1.0]], [1.0, 1.0], 181)
    """
    if res.n_models != 1:
        raise ValueError(f"The marginal route integrates one model's effects out; these "
                         f"results hold {res.n_models} models.")
    y, n = res.successes_array[0], res.trials_array[0]
    pairs, pattern = np.unique(np.stack([y, n], 1), axis=0, return_inverse=True)
    pattern = pattern.reshape(-1)
    cl = res.cluster_index
    per_cluster = np.zeros((int(cl.max()) + 1, len(pairs)))
    np.add.at(per_cluster, (cl, pattern), 1.0)
    comps, mult = np.unique(per_cluster, axis=0, return_counts=True)
    u, log_w = _grid(step(float(n.max()), scale_item))
    if scale_cluster is None:
        z, log_omega = np.zeros(1), np.zeros(1)
    else:
        trials = float(np.bincount(cl, weights=n).max())
        z, log_omega = _grid(step(trials, scale_cluster))
    yy, nn = pairs[:, 0].astype(float), pairs[:, 1].astype(float)
    return Layout(yy, nn, gammaln(nn + 1) - gammaln(yy + 1) - gammaln(nn - yy + 1),
                  comps, mult.astype(float), z, log_omega, u, log_w)


def loglik(alpha: Any, sigma_item: Any, sigma_cluster: Any, data: dict[str, Any]) -> Any:
    r"""The marginal log-likelihood as a pytensor expression (every sum a log-sum-exp).

    ``data`` maps :meth:`Layout.arrays`' names to tensors (the model's ``pm.Data``);
    ``sigma_cluster`` is 0 without clusters (one outer node at 0).

    .. math::

        \log F_p(g_k) = \log\tbinom{n}{y} + \operatorname{LSE}_j\bigl(\log w_j
            + y\log\sigma(x_{kj}) + (n - y)\log\sigma(-x_{kj})\bigr),\quad
            x_{kj} = g_k + \sigma_i u_j,

        \log L = \sum_d \mathrm{mult}_d\,\operatorname{LSE}_k\Bigl(\log\omega_k +
            \sum_p \mathrm{cnt}_{dp}\log F_p(g_k)\Bigr),\quad g_k = \alpha + \sigma_c z_k.
    """
    import pytensor.tensor as pt

    y, n = data["marginal_y"], data["marginal_n"]
    g = alpha + sigma_cluster * data["marginal_z"]                      # (K,)
    x = g[:, None] + sigma_item * data["marginal_u"][None, :]           # (K, J)
    log_p, log_q = -pt.softplus(-x), -pt.softplus(x)
    terms = (data["marginal_log_w"][None, None, :] + y[:, None, None] * log_p[None]
             + (n - y)[:, None, None] * log_q[None])                    # (P, K, J)
    log_f = data["marginal_log_binom"][:, None] + _logsumexp(terms)
    ell = data["marginal_log_omega"][None, :] + pt.dot(data["marginal_counts"], log_f)
    return pt.sum(data["marginal_mult"] * _logsumexp(ell))


def _logsumexp(x: Any) -> Any:
    """Log-sum-exp over the last axis with the largest term factored out in the graph
    itself: ``pt.logsumexp`` is ``log(sum(exp(x)))`` until a rewrite stabilises it, and
    the rewrite does not match every graph (one model, no clusters, thousands of runs
    per item: every term below -745, the density -inf and its gradient NaN)."""
    import pytensor.tensor as pt

    top = pt.max(x, axis=-1, keepdims=True)
    top = pt.switch(pt.isinf(top), 0.0, top)  # all -inf stays -inf, without inf - inf
    return top[..., 0] + pt.log(pt.sum(pt.exp(x - top), axis=-1))
