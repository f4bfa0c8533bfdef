r"""Exact draws of (Se, Sp) from two Beta priors truncated to Se + Sp > 1.

The Hui–Walter prior of one classifier is

.. math::

    p(Se, Sp) \propto \mathrm{Beta}(Se; a_1, b_1)\,\mathrm{Beta}(Sp; a_2, b_2)\,
    1\{Se + Sp > 1\}.

With :math:`X = 1 - Sp \sim \mathrm{Beta}(b_2, a_2)`, the constraint is
:math:`X < Se`, so the marginal of Se is the Beta density tilted by the
regularised incomplete Beta function,

.. math::

    f(Se) \propto \mathrm{Beta}(Se; a_1, b_1)\, I_{Se}(b_2, a_2),
    \qquad Z = \Pr(Se + Sp > 1) = \int_0^1 \mathrm{Beta}(s; a_1, b_1)\, I_s(b_2, a_2)\,ds,

and :math:`X \mid Se` is :math:`\mathrm{Beta}(b_2, a_2)` truncated to
:math:`(0, Se)`, drawn exactly by its inverse CDF
:math:`X = I^{-1}_{b_2, a_2}(U\, I_{Se}(b_2, a_2))`.

Se is drawn by the inverse CDF of its marginal in the coordinate
:math:`v = \Pr_{\mathrm{Beta}(a_1, b_1)}(S > Se)` (the upper-tail probability, from
``1e-300`` to 1), where the marginal's density is the decreasing function
:math:`I_{Se(v)}(b_2, a_2)`: a coarse geometric grid locates where the mass lies, a
finer grid there (geometric in v and in 1 - v, and linear: 6,000 points) carries a
piecewise-linear density whose CDF is inverted in closed form.  Nothing rejects,
so the cost does not depend on how little prior mass Se + Sp > 1 has; when that
mass is below what double precision represents (about ``1e-300``) the draw is
impossible and :class:`~bayescm.priors.PriorError` names the priors.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from bayescm.priors import PriorError

__all__ = ["KEPT_WARN", "PriorTruncationWarning", "check_truncation", "truncated_pair",
           "truncation_mass", "truncation_note"]

KEPT_WARN = 0.495
"""Warn when the priors give Se + Sp > 1 less prior mass than this: when most of it
is cut.  Priors symmetric in Se and 1 - Sp (flat, Jeffreys, any Beta(a, a) pair) keep
exactly one half, which is the model's design and no cause for a warning; the margin
below 1/2 lies far above :func:`truncation_mass`'s error (about 1e-4 relative)."""


class PriorTruncationWarning(UserWarning):
    """Most of a classifier's prior mass lies where Se + Sp < 1, which the Hui–Walter
    model rules out (label switching): that mass is cut, and the prior used is what is
    left, renormalised."""

_V_MIN = 1e-300  # smallest upper-tail probability of Se considered
_COARSE = 2000
_FINE = 2000
_TAIL = 1e-14  # mass left out on each side of the fine grid


def _se_at(v: np.ndarray, a1: float, b1: float) -> np.ndarray:
    """Se with upper-tail probability ``v`` under Beta(a1, b1).

    SciPy's inverse gives NaN for some tiny ``v`` (where Se is 1 to double
    precision); the mirrored inverse and then the monotone fill (Se decreases in
    ``v``: each NaN takes the value at the next larger ``v``) cover those.
    """
    se = special.betainccinv(a1, b1, v)
    bad = np.isnan(se)
    if bad.any():
        se[bad] = 1.0 - special.betaincinv(b1, a1, v[bad])
        se = np.fmax.accumulate(se[::-1])[::-1]
        se[np.isnan(se)] = 1.0
    return se


def _grid(v: np.ndarray, a1: float, b1: float, a2: float, b2: float
          ) -> tuple[np.ndarray, np.ndarray]:
    """Se at increasing upper-tail probabilities ``v`` and the (unnormalised) density there."""
    se = _se_at(v, a1, b1)
    return se, special.betainc(b2, a2, se)  # P(1 - Sp < Se)


def _cells(v: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Trapezoid masses of the cells between consecutive grid points."""
    return np.diff(v) * (w[:-1] + w[1:]) / 2


def _fine_grid(a1: float, b1: float, a2: float, b2: float
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Grid in ``v`` over the bulk of Se's marginal, Se there and the density (unnormalised).

    The density is all zero when Se + Sp > 1 has no representable mass.
    """
    # coarse pass: where is the mass, in v = P(Beta(a1, b1) > Se)?
    # below v_min, Se is 1 to double precision: no need to resolve it
    v_min = max(_V_MIN, float(special.betaincc(a1, b1, 1 - 2**-53)))
    v = np.unique(np.concatenate([[0.0], np.geomspace(v_min, 1.0, _COARSE),
                                  1 - np.geomspace(1e-17, 1.0, _COARSE // 4)]))
    v = v[(v == 0) | (v >= v_min)]
    se, w = _grid(v, a1, b1, a2, b2)
    cum = np.cumsum(_cells(v, w))
    if not cum[-1] > 0:
        return v, se, w
    cum /= cum[-1]
    lo = max(v[max(int(np.searchsorted(cum, _TAIL)), 1) - 1], v_min)
    hi = v[min(int(np.searchsorted(cum, 1 - _TAIL)) + 1, len(v) - 1)]
    # fine pass: geometric points in v and in 1 - v resolve the ends, linear ones the middle
    v = np.unique(np.concatenate([np.geomspace(lo, hi, _FINE), np.linspace(lo, hi, _FINE),
                                  1 - np.geomspace(max(1 - hi, 1e-17), 1 - lo, _FINE)]))
    v = v[(v >= lo) & (v <= hi)]
    se, w = _grid(v, a1, b1, a2, b2)
    return v, se, w


def truncation_mass(a1: float, b1: float, a2: float, b2: float) -> float:
    """``P(Se + Sp > 1)`` for Se ~ Beta(a1, b1), Sp ~ Beta(a2, b2) independent.

    Accurate to about 1e-4 relative (trapezoid rule on the grid of the module
    notes); 0.0 when the probability is below about 1e-300.

    Examples
    --------
    >>> round(truncation_mass(1, 1, 1, 1), 6)
    0.5
    """
    v, _, w = _fine_grid(a1, b1, a2, b2)
    return float(_cells(v, w).sum())


def check_truncation(se_prior: object, sp_prior: object, a1: float, b1: float, a2: float,
                     b2: float, classifier: str) -> None:
    """Raise :class:`PriorError` when Se + Sp > 1 has no representable prior mass."""
    # Z >= P(Se > 1/2) P(Sp > 1/2): a closed-form bound settles most cases at once
    if special.betaincc(a1, b1, 0.5) * special.betaincc(a2, b2, 0.5) > 1e-300:
        return
    if not truncation_mass(a1, b1, a2, b2) > 0:
        raise PriorError(
            f"The priors of classifier {classifier!r}, sensitivity {se_prior!s} and "
            f"specificity {sp_prior!s}, give Se + Sp > 1 a prior probability below 1e-300: "
            "they contradict the constraint that rules out label switching (a classifier "
            "better than chance), and no draw or fit is possible. Use priors that put "
            "sensitivity and specificity together above 1, e.g. Beta(1, 1).")


def truncation_note(se_prior: object, sp_prior: object, a1: float, b1: float, a2: float,
                    b2: float, classifier: str) -> str | None:
    """The plain-words warning when the priors keep less than :data:`KEPT_WARN` of
    their mass on Se + Sp > 1 (None otherwise): how much is cut and what to check.

    >>> print(truncation_note("Beta(1, 1)", "Beta(1, 1)", 1, 1, 1, 1, "A"))
    None
    >>> truncation_note("Beta(2, 8)", "Beta(2, 8)", 2, 8, 2, 8, "A")[81:121]
    'put 99.83% of their mass where Se + Sp <'
    """
    # Z >= P(Se > 1/2) P(Sp > 1/2): most well-meant priors are settled without quadrature
    if special.betaincc(a1, b1, 0.5) * special.betaincc(a2, b2, 0.5) >= KEPT_WARN:
        return None
    kept = truncation_mass(a1, b1, a2, b2)
    if kept >= KEPT_WARN:
        return None
    return (f"The priors of classifier {classifier!r}, sensitivity {se_prior!s} and "
            f"specificity {sp_prior!s}, put {1 - kept:.2%} of their mass where Se + Sp < 1 "
            "(a classifier worse than chance). The model rules that out to prevent label "
            f"switching, so that part is cut: the prior used is the remaining {kept:.2g} of "
            "the mass, renormalised, and its means are not those of the Betas you gave. "
            "Check that the priors describe sensitivity and specificity (the share of "
            "positives and of negatives called right), not error rates; a Beta(a, b) for "
            "an error rate is Beta(b, a) for the rate.")


def truncated_pair(a1: float, b1: float, a2: float, b2: float, n: int,
                   rng: np.random.Generator, *, classifier: str = "the classifier"
                   ) -> tuple[np.ndarray, np.ndarray]:
    """``n`` i.i.d. draws of (Se, Sp) from Beta(a1, b1) Beta(a2, b2) 1{Se + Sp > 1}.

    Raises
    ------
    PriorError
        When the prior mass of Se + Sp > 1 is below double precision.

    Examples
    --------
    >>> import numpy as np
    >>> se, sp = truncated_pair(2, 15, 2, 15, 1000, np.random.default_rng(1))
    >>> bool((se + sp > 1).all())
    True
    """
    v, se_grid, w = _fine_grid(a1, b1, a2, b2)
    if not w.max() > 0:
        check_truncation(f"Beta({a1:g}, {b1:g})", f"Beta({a2:g}, {b2:g})", a1, b1, a2, b2,
                         classifier)
    w = w / w.max()
    mass = _cells(v, w)
    cum = np.cumsum(mass)
    u = rng.uniform(size=n) * cum[-1]
    k = np.minimum(np.searchsorted(cum, u, side="right"), len(mass) - 1)
    r = np.clip(u - (cum[k] - mass[k]), 0.0, mass[k])
    width = v[k + 1] - v[k]
    slope = (w[k + 1] - w[k]) / width
    # invert the piecewise-linear density: w_k t + slope t^2 / 2 = r, in its stable form
    root = np.sqrt(np.maximum(w[k] ** 2 + 2 * slope * r, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(w[k] + root > 0, 2 * r / (w[k] + root), 0.0)
    se = special.betainccinv(a1, b1, v[k] + np.clip(t, 0.0, width))
    bad = np.isnan(se)
    se[bad] = se_grid[k[bad]]  # Se is 1 to double precision there (see _se_at)
    # Sp | Se: X = 1 - Sp is Beta(b2, a2) truncated to (0, Se), by its inverse CDF
    x = special.betaincinv(b2, a2, rng.uniform(size=n) * special.betainc(b2, a2, se))
    return se, 1.0 - np.minimum(x, se)
