r"""The statistics core: one HDI of draws, one exact Beta HDI, one conjugate draw generator.

Every module that summarises draws or draws from a conjugate posterior uses these
functions, so an estimator is written once and tested once.

* :func:`hdi` -- the highest-density interval of draws, the estimator of
  ``arviz.hdi`` for unimodal samples (the narrowest window holding
  :math:`\lfloor p\,n \rfloor` sorted draws), vectorised over any leading axes.
  :func:`hdi_of_tails` is its last step, for callers that find the tails otherwise.
* :func:`hdi_mcse` -- the Monte Carlo standard error of those bounds, by batches.
* :func:`beta_hdi` -- the exact HDI of :math:`\mathrm{Beta}(a, b)` for
  :math:`a, b \ge 1` by safeguarded Newton steps, vectorised.
* :func:`multinomial` -- Multinomial draws for large batches of probability vectors.
* :func:`stream_from` -- a random stream seeded by draws (derived draws reproducible
  from a fit's draws).
* :func:`conjugate_draws` / :func:`draw_conjugate` -- i.i.d. draws from independent
  Beta and Dirichlet posteriors, in chunks of bounded memory or in one piece.  The
  two consume the random generator in the same order, so one chunk equals one piece.

Draws from a Dirichlet are normalised Gamma variates: if
:math:`G_k \sim \mathrm{Gamma}(\alpha_k, 1)` independently then
:math:`G / \sum_k G_k \sim \mathrm{Dirichlet}(\alpha)`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
from scipy import special

__all__ = [
    "SAMPLE_DIMS",
    "beta_hdi",
    "beta_hdi_any",
    "check_hdi_prob",
    "check_interval_kind",
    "conjugate_draws",
    "credible_interval",
    "draw_conjugate",
    "hdi",
    "hdi_mcse",
    "hdi_of_tails",
    "multinomial",
    "stream_from",
]

#: The dims of a sample in every InferenceData group bayescm writes.
SAMPLE_DIMS = ("chain", "draw")


def check_hdi_prob(hdi_prob: float) -> float:
    """``hdi_prob`` as a float in (0, 1), or a ValueError naming it."""
    if isinstance(hdi_prob, str | bytes | bool):
        raise ValueError(f"hdi_prob must be a number in (0, 1), got {hdi_prob!r}.")
    try:
        p = float(hdi_prob)
    except (TypeError, ValueError):
        raise ValueError(f"hdi_prob must be a number in (0, 1), got {hdi_prob!r}.") from None
    if not 0 < p < 1:
        raise ValueError(f"hdi_prob must lie in (0, 1), got {hdi_prob}.")
    return p


INTERVAL_KINDS = ("hdi", "equal_tailed")
"""The credible intervals of draws bayescm reports (``kind=``)."""


def check_interval_kind(kind: str) -> str:
    """``kind`` if it names one of :data:`INTERVAL_KINDS`, else a ValueError naming them."""
    if kind not in INTERVAL_KINDS:
        raise ValueError(f"kind must be 'hdi' or 'equal_tailed', got {kind!r}.")
    return kind


def credible_interval(values: Any, hdi_prob: float = 0.95, kind: str = "hdi", *,
                      axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    r"""The HDI (``kind="hdi"``, :func:`hdi`) or the equal-tailed interval
    (``kind="equal_tailed"``: the :math:`(1 \mp p)/2` quantiles) of draws along ``axis``.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).beta(7, 3, size=4000)
    >>> lo, hi = credible_interval(x, 0.9, "equal_tailed")
    >>> bool(np.isclose(lo, np.quantile(x, 0.05)) and np.isclose(hi, np.quantile(x, 0.95)))
    True
    """
    p = check_hdi_prob(hdi_prob)
    if check_interval_kind(kind) == "hdi":
        return hdi(values, p, axis=axis)
    lower, upper = np.quantile(np.asarray(values, dtype=float), [(1 - p) / 2, (1 + p) / 2],
                               axis=axis)
    return lower, upper


def hdi(values: Any, hdi_prob: float = 0.95, *, axis: int = -1,
        presorted: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Highest-density interval of draws along ``axis``, vectorised over the others.

    The estimator of ``arviz.hdi`` for unimodal samples: among the windows of
    :math:`\\lfloor p\\,n \\rfloor + 1` consecutive sorted draws, the narrowest.
    Series containing NaN give NaN.

    Parameters
    ----------
    values
        Draws; any shape.
    hdi_prob
        Mass of the interval, in (0, 1).
    axis
        Axis holding the draws.
    presorted
        Set when ``values`` are already sorted along ``axis`` (saves the sort).

    Returns
    -------
    lower, upper
        Arrays of ``values``' shape without ``axis``.

    Examples
    --------
    >>> import numpy as np
    >>> lo, hi = hdi(np.random.default_rng(0).normal(size=(2, 20_000)))
    >>> bool(np.all(np.abs((hi - lo) - 3.92) < 0.1))  # 2 x 1.96 for a standard normal
    True
    """
    p = check_hdi_prob(hdi_prob)
    x = np.asarray(values)
    if x.dtype not in (np.float32, np.float64):
        x = x.astype(float)
    # float32 draws stay float32, as in arviz.hdi: no copy
    x = np.moveaxis(x, axis, -1)
    n = x.shape[-1]
    if n < 2:
        raise ValueError(f"An HDI needs at least 2 draws, got {n}.")
    inc = int(np.floor(p * n))
    if presorted:
        low, high = x[..., : n - inc], x[..., inc:]
    elif 2 * (n - inc) < n:
        # only the n - inc lowest and highest order statistics enter a window: select
        # them (linear time) and sort those alone, the same numbers as a full sort
        part = np.partition(x, [n - inc - 1, inc], axis=-1)
        low = np.sort(part[..., : n - inc], axis=-1)
        high = np.sort(part[..., inc:], axis=-1)
    else:
        x = np.sort(x, axis=-1)
        low, high = x[..., : n - inc], x[..., inc:]
    return hdi_of_tails(low, high)


def hdi_of_tails(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The step of :func:`hdi` after the sort: the narrowest window ``[low_i, high_i]``
    (the first on ties), given the :math:`m = n - \\lfloor p\\,n \\rfloor` smallest
    (``low``) and largest (``high``) draws, each sorted along the last axis; NaN where
    ``high`` ends in NaN.  For callers that find those order statistics another way.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.sort(np.random.default_rng(0).normal(size=1000))
    >>> hdi_of_tails(x[:50], x[950:]) == hdi(x, 0.95)  # n - floor(0.95 n) = 50
    True
    """
    widths = high - low
    idx = np.argmin(np.where(np.isnan(widths), np.inf, widths), axis=-1)[..., None]
    lower = np.take_along_axis(low, idx, -1)[..., 0]
    upper = np.take_along_axis(high, idx, -1)[..., 0]
    lower, upper = lower.astype(float), upper.astype(float)
    bad = np.isnan(high[..., -1])  # sorted: NaN last
    if bad.any():
        lower = np.where(bad, np.nan, lower)
        upper = np.where(bad, np.nan, upper)
    return lower, upper


def hdi_mcse(values: Any, hdi_prob: float = 0.95, *, batches: int = 16,
             min_batch: int = 50, sorted_batches: bool = False
             ) -> tuple[np.ndarray, np.ndarray]:
    r"""Monte Carlo standard error of the bounds of :func:`hdi`, by batches.

    The narrowest window of sorted draws is a *cube-root* estimator (the shorth:
    Kim & Pollard, "Cube root asymptotics", Annals of Statistics 1990): once the draws
    are many, its bounds' Monte Carlo sd falls like :math:`n^{-1/3}`, not like the
    :math:`n^{-1/2}` of a fixed quantile, so the quantile MCSE at the bound's level
    understates it (by 2.6 times at 400,000 draws of Beta(7, 3)).  Here the draws
    (in their order: chains one after another) are cut into :math:`B` contiguous
    batches of :math:`m = \lfloor n / B \rfloor` draws, the HDI is computed in each,
    and with :math:`s_B` the sd of a bound over the batches

    .. math::

        \mathrm{MCSE} = s_B\, B^{-1/3},

    the batch sd scaled from :math:`m` draws to :math:`n = B m` at the cube-root rate.
    Where the quantile rate still rules (few draws) this overstates by at most
    :math:`B^{1/6}` (1.6 for 16 batches): it errs on the safe side.  Measured on
    Beta(7, 3), lower bound of the 95% HDI: 0.0016 against a seed-to-seed sd of
    0.0016 at 400,000 draws, 0.0039 against 0.0035 at 40,000, 0.0094 against 0.0077 at
    4,000.  For MCMC draws batches longer than the autocorrelation make the same
    estimate (batch means).

    Parameters
    ----------
    values
        Draws on the last axis (any leading axes).
    hdi_prob
        Mass of the interval.
    batches
        At most this many batches; fewer so that each holds ``min_batch`` draws, and
        NaN when fewer than 4 batches would.
    sorted_batches
        Set when each batch of ``values`` is already sorted (saves the sorts).

    Returns
    -------
    lower, upper
        MCSE of each bound, arrays of ``values``' shape without the last axis.

    Examples
    --------
    >>> import numpy as np
    >>> lo, hi = hdi_mcse(np.random.default_rng(0).beta(7, 3, (2, 40_000)))
    >>> bool(np.all((0.001 < lo) & (lo < 0.01)))
    True
    """
    x = np.asarray(values, dtype=float)
    n = x.shape[-1]
    b = min(int(batches), n // int(min_batch))
    if b < 4:
        nan = np.full(x.shape[:-1], np.nan)
        return nan, nan.copy()
    m = n // b
    parts = x[..., : b * m].reshape(*x.shape[:-1], b, m)
    lower, upper = hdi(parts, hdi_prob, presorted=sorted_batches)
    scale = b ** (-1 / 3)
    return lower.std(axis=-1, ddof=1) * scale, upper.std(axis=-1, ddof=1) * scale


def beta_hdi(a: Any, b: Any, *, hdi_prob: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact highest-density interval of :math:`\mathrm{Beta}(a, b)`, :math:`a, b \ge 1`.

    For :math:`a, b > 1` the density is unimodal and log-concave; the HDI
    :math:`[l, u]` solves

    .. math::

        F(u) - F(l) = \text{hdi_prob},\qquad f(l) = f(u).

    Writing :math:`l = F^{-1}(t)`, :math:`u = F^{-1}(t + \text{hdi_prob})`, the
    difference :math:`\log f(l) - \log f(u)` increases in the lower tail mass
    :math:`t \in [0, 1 - \text{hdi_prob}]`; its root is found by Newton steps
    safeguarded by bisection, vectorised over all :math:`(a, b)`.  For :math:`a = 1`
    (:math:`b = 1`) the density is monotone and the HDI is :math:`[0, F^{-1}(p)]`
    (:math:`[F^{-1}(1-p), 1]`); for :math:`a = b = 1` every interval of length
    :math:`p` is an HDI and the central one is returned.

    Parameters
    ----------
    a, b
        Shape parameters (broadcast together), each at least 1 (posteriors of
        rates under a Beta(1, 1) prior: :math:`a = k + 1`, :math:`b = n - k + 1`).
    hdi_prob
        Mass of the interval.

    Returns
    -------
    lower, upper
        Arrays of the broadcast shape.

    Examples
    --------
    >>> from bayescm.stats import beta_hdi
    >>> lo, hi = beta_hdi(27, 1)            # 26 of 26 positives found
    >>> round(float(lo), 4), float(hi)
    (0.895, 1.0)
    >>> lo, hi = beta_hdi([7, 31], [3, 10])
    >>> (hi - lo).round(3).tolist()
    [0.513, 0.255]
    """
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    if not (np.all(a >= 1) and np.all(b >= 1) and np.isfinite(a).all()
            and np.isfinite(b).all()):
        raise ValueError(
            "beta_hdi needs finite shape parameters a, b >= 1 (a unimodal or monotone "
            "Beta); for a < 1 or b < 1 use bayescm.stats.hdi on draws."
        )
    p = check_hdi_prob(hdi_prob)
    lower = np.empty(a.shape)
    upper = np.empty(a.shape)
    flat_one = (a == 1) & (b == 1)
    left = (a == 1) & (b > 1)
    right = (a > 1) & (b == 1)
    inner = (a > 1) & (b > 1)
    lower[flat_one], upper[flat_one] = (1 - p) / 2, (1 + p) / 2
    lower[left], upper[left] = 0.0, special.betaincinv(1.0, b[left], p)
    lower[right], upper[right] = special.betaincinv(a[right], 1.0, 1 - p), 1.0
    if inner.any():
        lower[inner], upper[inner] = _hdi_unimodal(a[inner], b[inner], p)
    return lower, upper


def beta_hdi_any(a: Any, b: Any, *, hdi_prob: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    r"""Highest-density interval of any :math:`\mathrm{Beta}(a, b)`, :math:`a, b > 0`.

    :func:`beta_hdi` where both shapes are at least 1.  A monotone density puts
    the interval against its mode: :math:`[0, F^{-1}(p)]` for :math:`a < 1 \le b`
    (density unbounded at 0) and :math:`[F^{-1}(1 - p), 1]` for
    :math:`b < 1 \le a`.  A U-shaped Beta (:math:`a, b < 1`) has no connected HDI;
    it gets the equal-tailed interval :math:`[F^{-1}((1-p)/2), F^{-1}((1+p)/2)]`,
    as does the uniform Beta(1, 1) (every interval of length :math:`p` is an HDI).

    Examples
    --------
    >>> lo, hi = beta_hdi_any([0.5, 3.0], [10.5, 0.5], hdi_prob=0.9)
    >>> lo[0], hi[1]
    (np.float64(0.0), np.float64(1.0))
    """
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    if not (np.all(a > 0) and np.all(b > 0) and np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("beta_hdi_any needs finite shape parameters a, b > 0.")
    p = check_hdi_prob(hdi_prob)
    lower, upper = np.empty(a.shape), np.empty(a.shape)
    regular = (a >= 1) & (b >= 1)
    falling = (a < 1) & (b >= 1)
    rising = (a >= 1) & (b < 1)
    u_shaped = (a < 1) & (b < 1)
    lower[regular], upper[regular] = beta_hdi(a[regular], b[regular], hdi_prob=p)
    lower[falling] = 0.0
    upper[falling] = special.betaincinv(a[falling], b[falling], p)
    lower[rising] = special.betaincinv(a[rising], b[rising], 1 - p)
    upper[rising] = 1.0
    lower[u_shaped] = special.betaincinv(a[u_shaped], b[u_shaped], (1 - p) / 2)
    upper[u_shaped] = special.betaincinv(a[u_shaped], b[u_shaped], (1 + p) / 2)
    return lower, upper


def _hdi_unimodal(a: np.ndarray, b: np.ndarray, p: float) -> tuple[np.ndarray, np.ndarray]:
    # t: lower tail mass; [lb, ub]: its bracket; start from the equal-tailed interval.
    # Width is stationary at the root, so |dt| < 1e-11 leaves a width error ~1e-22.
    t = np.full(a.shape, (1 - p) / 2)
    lb, ub = np.zeros(a.shape), np.full(a.shape, 1 - p)
    log_norm = special.betaln(a, b)
    active = np.arange(a.size)
    for _ in range(200):
        ai, bi, ti = a[active], b[active], t[active]
        lo, hi = special.betaincinv(ai, bi, ti), special.betaincinv(ai, bi, ti + p)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            # g = log f(lo) - log f(hi) increases in t; dg/dt = s(lo)/f(lo) - s(hi)/f(hi)
            g = (ai - 1) * (np.log(lo) - np.log(hi)) + (bi - 1) * (np.log1p(-lo) - np.log1p(-hi))
            dg = (_slope_over_pdf(lo, ai, bi, log_norm[active])
                  - _slope_over_pdf(hi, ai, bi, log_norm[active]))
            newton = ti - g / dg
        lb[active] = np.where(g < 0, ti, lb[active])
        ub[active] = np.where(g >= 0, ti, ub[active])
        ok = np.isfinite(newton) & (newton > lb[active]) & (newton < ub[active])
        t_new = np.where(ok, newton, (lb[active] + ub[active]) / 2)
        t[active] = t_new
        active = active[np.abs(t_new - ti) > 1e-11]
        if active.size == 0:
            break
    return special.betaincinv(a, b, t), special.betaincinv(a, b, t + p)


def _slope_over_pdf(x: np.ndarray, a: np.ndarray, b: np.ndarray, log_norm: np.ndarray) -> Any:
    """(d log f / dx) / f for Beta(a, b), i.e. d log f(F^{-1}(t)) / dt."""
    log_f = (a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - log_norm
    return ((a - 1) / x - (b - 1) / (1 - x)) * np.exp(-log_f)


def draw_conjugate(
    rng: np.random.Generator,
    size: tuple[int, ...],
    betas: Mapping[str, tuple[Any, Any]] | None = None,
    dirichlets: Mapping[str, Any] | None = None,
) -> dict[str, np.ndarray]:
    r"""I.i.d. draws from independent Beta and Dirichlet distributions, in one piece.

    Parameters
    ----------
    rng
        The random generator (consumed in the order of ``betas``, then ``dirichlets``).
    size
        Leading sample shape, e.g. ``(chains, draws)``.
    betas
        ``name -> (a, b)``; ``a`` and ``b`` broadcast to the unit shape of ``name``.
    dirichlets
        ``name -> alpha`` with the categories on the last axis.

    Returns
    -------
    dict
        ``name -> array`` of shape ``size + unit shape`` (``+ (k,)`` for a Dirichlet).

    Examples
    --------
    >>> import numpy as np
    >>> out = draw_conjugate(np.random.default_rng(0), (2, 500),
    ...                      betas={"tpr": ([27.0], [1.0])},
    ...                      dirichlets={"theta": [[27.0, 1.0, 3.0, 7.0]]})
    >>> out["tpr"].shape, out["theta"].shape
    ((2, 500, 1), (2, 500, 1, 4))
    """
    out: dict[str, np.ndarray] = {}
    for name, (a, b) in (betas or {}).items():
        a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
        out[name] = rng.beta(a, b, size=(*size, *a.shape))
    for name, alpha in (dirichlets or {}).items():
        alpha = np.asarray(alpha, dtype=float)
        g = rng.standard_gamma(alpha, size=(*size, *alpha.shape))
        # normalised in place: the same quotients, without a second array of draws
        out[name] = np.divide(g, g.sum(axis=-1, keepdims=True), out=g)
    return out


def conjugate_draws(
    rng: np.random.Generator,
    n_draws: int,
    betas: Mapping[str, tuple[Any, Any]] | None = None,
    dirichlets: Mapping[str, Any] | None = None,
    *,
    chunk: int | None = None,
) -> Iterator[dict[str, np.ndarray]]:
    """I.i.d. conjugate posterior draws in chunks of at most ``chunk`` draws.

    Yields dicts like :func:`draw_conjugate` with leading shape ``(m,)``,
    ``m <= chunk``, the ``m`` adding up to ``n_draws``.  With ``chunk=None`` (or
    ``chunk >= n_draws``) there is one chunk, equal to
    ``draw_conjugate(rng, (n_draws,), betas, dirichlets)``: memory stays bounded by
    the chunk whatever the number of draws or units.

    Examples
    --------
    >>> import numpy as np
    >>> sizes = [d["tpr"].shape for d in conjugate_draws(
    ...     np.random.default_rng(0), 10, {"tpr": ([2.0, 3.0], [5.0, 1.0])}, chunk=4)]
    >>> sizes
    [(4, 2), (4, 2), (2, 2)]
    """
    if n_draws < 1:
        raise ValueError(f"n_draws must be at least 1, got {n_draws}.")
    step = n_draws if chunk is None else max(1, min(int(chunk), n_draws))
    for start in range(0, n_draws, step):
        yield draw_conjugate(rng, (min(step, n_draws - start),), betas, dirichlets)


def multinomial(rng: np.random.Generator, n: Any, p: np.ndarray) -> np.ndarray:
    r"""Multinomial(n, p) along the last axis by sequential conditional binomials.

    The same distribution as ``rng.multinomial``, an order of magnitude faster for
    large batches of different probability vectors: with
    :math:`X_1 \sim \mathrm{Bin}(n, p_1)` and
    :math:`X_i \mid X_{<i} \sim \mathrm{Bin}(n - \sum_{j<i} X_j,\ p_i / (1 - \sum_{j<i} p_j))`.
    ``n`` broadcasts against ``p.shape[:-1]``.

    Examples
    --------
    >>> import numpy as np
    >>> x = multinomial(np.random.default_rng(0), 100, np.array([[0.2, 0.3, 0.5]] * 4))
    >>> x.sum(axis=-1).tolist()
    [100, 100, 100, 100]
    """
    out = np.empty(p.shape, dtype=np.int64)
    left = np.broadcast_to(np.asarray(n, dtype=np.int64), p.shape[:-1]).astype(np.int64)
    mass = np.ones(p.shape[:-1])
    for i in range(p.shape[-1] - 1):
        share = np.clip(p[..., i] / np.where(mass > 0, mass, 1.0), 0.0, 1.0)
        out[..., i] = rng.binomial(left, share)
        left = left - out[..., i]
        mass = mass - p[..., i]
    out[..., -1] = left
    return out


def stream_from(*arrays: Any, person: bytes = b"") -> np.random.Generator:
    """A random stream seeded by the bytes of ``arrays`` (BLAKE2b, 128 bits).

    Draws made from a fit's draws (fold rates given the mean, a model average's
    indicators) then need no seed of their own: the same MCMC draws give the same
    derived draws.  ``person`` separates streams seeded by the same arrays.

    >>> x = np.arange(3.0)
    >>> float(stream_from(x).random()) == float(stream_from(x).random())
    True
    """
    import hashlib

    digest = hashlib.blake2b(digest_size=16, person=person)
    for arr in arrays:
        digest.update(np.ascontiguousarray(arr).tobytes())
    return np.random.default_rng(np.frombuffer(digest.digest(), dtype=np.uint32))
