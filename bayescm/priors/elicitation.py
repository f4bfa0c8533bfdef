r"""Priors from expert statements: a mode and a bound, a PERT range, expected values.

An expert rarely says "Beta(34, 4.6)"; they say "most likely 0.9, and I am 95 %
sure it is above 0.8", "between 0.7 and 0.98, most likely 0.9", or "a previous
study found these rates; weigh it like 50 cases".  Each helper here turns one such
statement into a :class:`~bayescm.priors.Beta` or :class:`~bayescm.priors.Dirichlet`
that meets it, and records the statement in the spec's ``elicited`` attribute
(kept through ``coerce``, fitting, ``bcm.save`` and ``bcm.load``; not part of the
spec's equality).  All names are reachable as ``bcm.priors.<name>``.

Examples
--------
>>> import bayescm as bcm
>>> p = bcm.priors.elicit_beta(mode=0.9, lower=0.8, prob=0.95)
>>> p.elicited
'elicit_beta(mode=0.9, lower=0.8, prob=0.95)'
>>> bcm.priors.beta_from_mean(0.8, 10)
Beta(8, 2)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bayescm.priors.specs import Beta, Dirichlet, Prior, PriorError

__all__ = ["beta_from_mean", "beta_pert", "describe", "dirichlet_from_mean", "elicit_beta"]

# Concentrations c = a + b - 2 searched by elicit_beta: from a nearly flat Beta to one
# far sharper than any statement a person makes (sd ~ 1e-6 at mode 0.5).
_LOG_C = (math.log(1e-9), math.log(1e12))


def _number(value: Any, what: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise PriorError(f"{where}: {what} must be a number, got {value!r}.")
    value = float(value)
    if not math.isfinite(value):
        raise PriorError(f"{where}: {what} must be finite, got {value!r}.")
    return value


def elicit_beta(*, mode: float, lower: float | None = None, upper: float | None = None,
                prob: float = 0.95) -> Beta:
    r"""The Beta with a given mode that puts probability ``prob`` beyond a bound.

    "Most likely ``mode``, and ``prob`` sure that it is above ``lower``" (or below
    ``upper``): the approach of the BetaBuster tool (Su, UC Davis) that Branscum,
    Gardner & Johnson ("Estimation of diagnostic-test sensitivity and specificity
    through Bayesian modeling", 2005) use for sensitivity and specificity priors.
    With the concentration :math:`c = a + b - 2 \ge 0`, every Beta with mode
    :math:`m` is

    .. math::

        a = 1 + m\,c, \qquad b = 1 + (1 - m)\,c, \qquad
        \mathrm{mode} = \frac{a - 1}{a + b - 2} = m,

    and :math:`c` solves :math:`P(X > \mathrm{lower}) = \mathrm{prob}` (or
    :math:`P(X < \mathrm{upper}) = \mathrm{prob}`) by Brent's root finder on
    :math:`\log c`.  As :math:`c` runs from 0 (the flat Beta(1, 1)) to infinity (a
    point mass at :math:`m`), :math:`P(X > l)` runs from :math:`1 - l` to 1 (when
    :math:`l < m`), 1/2 (:math:`l = m`) or 0 (:math:`l > m`); a statement outside
    that range fits no Beta with that mode and is an error saying so.  A mode of 0
    or 1 is allowed (Beta(1, b) or Beta(a, 1)).

    Parameters
    ----------
    mode
        The most likely value, in [0, 1].
    lower, upper
        The bound, in (0, 1); give exactly one.
    prob
        The probability that the rate lies above ``lower`` (below ``upper``), in (0, 1).

    Returns
    -------
    Beta
        With ``elicited`` set to the statement.

    Raises
    ------
    PriorError
        When the arguments are invalid or no Beta with that mode meets the statement.

    Examples
    --------
    >>> from scipy import stats
    >>> p = elicit_beta(mode=0.9, lower=0.8, prob=0.95)
    >>> round(float(stats.beta(p.alpha, p.beta).sf(0.8)), 10)
    0.95
    >>> round((p.alpha - 1) / (p.alpha + p.beta - 2), 12)
    0.9
    >>> q = elicit_beta(mode=0.5, upper=0.7, prob=0.95)
    >>> round(float(stats.beta(q.alpha, q.beta).cdf(0.7)), 10), q.alpha == q.beta
    (0.95, True)
    """
    where = "elicit_beta"
    mode = _number(mode, "mode", where)
    prob = _number(prob, "prob", where)
    if (lower is None) == (upper is None):
        raise PriorError(f"{where}: give exactly one bound: lower= (for P(X > lower) = prob) or "
                         f"upper= (for P(X < upper) = prob); got lower={lower!r}, upper={upper!r}.")
    side, bound = ("lower", lower) if lower is not None else ("upper", upper)
    bound = _number(bound, side, where)
    if not 0 <= mode <= 1:
        raise PriorError(f"{where}: mode is a rate's most likely value, in [0, 1]; got {mode!r}.")
    if not 0 < bound < 1:
        raise PriorError(f"{where}: {side} must lie strictly between 0 and 1, got {bound!r}.")
    if not 0 < prob < 1:
        raise PriorError(f"{where}: prob must lie strictly between 0 and 1 (e.g. 0.95), got "
                         f"{prob!r}.")
    statement = f"{where}(mode={mode!r}, {side}={bound!r}, prob={prob!r})"
    # P(X < u) = p for X with mode m is P(Y > 1 - u) = p for Y = 1 - X with mode 1 - m.
    m, low = (mode, bound) if side == "lower" else (1 - mode, 1 - bound)
    a, b = _solve_above(m, low, prob, statement, "above" if side == "lower" else "below")
    if side == "upper":
        a, b = b, a
    return Beta(a, b, elicited=statement)


def _solve_above(m: float, low: float, prob: float, statement: str,
                 beyond: str) -> tuple[float, float]:
    """(a, b) with mode ``m`` and P(X > low) = prob; ``beyond`` words the user's side."""
    from scipy import optimize, special

    def excess(log_c: float) -> float:
        c = math.exp(log_c)
        return float(special.betaincc(1 + m * c, 1 + (1 - m) * c, low)) - prob

    flat = 1 - low  # P(X > low) under Beta(1, 1)
    limit = 1.0 if low < m else 0.5 if low == m else 0.0
    if not min(flat, limit) < prob < max(flat, limit):
        raise PriorError(
            f"No Beta meets {statement}: a Beta with that mode puts a probability between "
            f"{flat:g} (flat) and {limit:g} (all mass at the mode) {beyond} that bound. "
            "Change prob to lie in that range, or move the bound.")
    lo, hi = excess(_LOG_C[0]), excess(_LOG_C[1])
    if lo * hi > 0:
        raise PriorError(f"{statement} needs a Beta sharper than a + b = 1e12 or flatter than "
                         "a + b = 2 + 1e-9; state a bound further from the mode or a prob further "
                         "from its limit.")
    log_c = optimize.brentq(excess, *_LOG_C, xtol=1e-14, rtol=4 * np.finfo(float).eps,
                            maxiter=500)
    c = math.exp(log_c)
    return 1 + m * c, 1 + (1 - m) * c


def beta_pert(minimum: float, mode: float, maximum: float, *, lam: float = 4.0) -> Beta:
    r"""The PERT Beta of "between ``minimum`` and ``maximum``, most likely ``mode``".

    The PERT distribution (Malcolm, Roseboom, Clark & Fazar, "Application of a
    technique for research and development program evaluation", 1959; Vose, "Risk
    Analysis: A Quantitative Guide", 2008) is a Beta on [minimum, maximum] with

    .. math::

        \alpha = 1 + \lambda\,\frac{\mathrm{mode} - \min}{\max - \min}, \qquad
        \beta = 1 + \lambda\,\frac{\max - \mathrm{mode}}{\max - \min}, \qquad
        \mathrm{mean} = \frac{\min + \lambda\,\mathrm{mode} + \max}{\lambda + 2}.

    bayescm's rate priors are Beta distributions on [0, 1] (``Beta(a, b)`` on a
    rate in every model and in the conjugate exact sampler), so only
    ``minimum=0, maximum=1`` gives one: Beta(1 + λ mode, 1 + λ (1 − mode)).  A PERT
    on a narrower range says that values outside it are impossible, which no Beta on
    [0, 1] can say and no bayescm model takes; such a range is refused (rather than
    quietly approximated) with a pointer to :func:`elicit_beta`, which states the
    bound with a probability ("95 % sure it is above 0.7").

    Parameters
    ----------
    minimum, mode, maximum
        The range and most likely value, ``minimum <= mode <= maximum``; the range
        must be [0, 1].
    lam
        λ > 0, the weight of the mode (4 in classical PERT).

    Returns
    -------
    Beta
        With ``elicited`` set to the statement.

    Examples
    --------
    >>> p = beta_pert(0, 0.9, 1)
    >>> p, p.alpha / (p.alpha + p.beta)  # mean (0 + 4 * 0.9 + 1) / 6
    (Beta(4.6, 1.4), 0.7666666666666666)
    """
    where = "beta_pert"
    lo, mo, hi = (_number(v, n, where) for v, n in
                  ((minimum, "minimum"), (mode, "mode"), (maximum, "maximum")))
    lam = _number(lam, "lam", where)
    if not lo <= mo <= hi or not lo < hi:
        raise PriorError(f"{where}: need minimum <= mode <= maximum with minimum < maximum, got "
                         f"({lo!r}, {mo!r}, {hi!r}).")
    if not lam > 0:
        raise PriorError(f"{where}: lam must be > 0 (4 in classical PERT), got {lam!r}.")
    if (lo, hi) != (0.0, 1.0):
        raise PriorError(
            f"{where}({lo!r}, {mo!r}, {hi!r}): a PERT on [{lo:g}, {hi:g}] rules out every value "
            "outside that range, and bayescm's rate priors are Beta distributions on [0, 1]. "
            f"Use beta_pert(0, {mo!r}, 1), or state the bound with a probability, e.g. "
            f"elicit_beta(mode={mo!r}, {'lower' if lo > 0 else 'upper'}="
            f"{lo if lo > 0 else hi!r}, prob=0.95).")
    stated = f"{where}({lo!r}, {mo!r}, {hi!r}" + (")" if lam == 4 else f", lam={lam!r})")
    return Beta(1 + lam * mo, 1 + lam * (1 - mo), elicited=stated)


def beta_from_mean(mean: float, weight: float) -> Beta:
    r"""Beta(w m, w (1 − m)): expected rate ``m`` worth ``w`` pseudo-observations.

    The Beta form of Tötsch & Hoffmann's informative prior ("Classifier
    uncertainty: evidence, potential impact, and probabilistic treatment", 2021):
    a previous study's rate :math:`m`, trusted as much as :math:`w` cases.  Its mean
    is :math:`m` and :math:`a + b = w`; the posterior after :math:`k` of :math:`n`
    is Beta(:math:`w m + k`, :math:`w (1 - m) + n - k`).

    Examples
    --------
    >>> beta_from_mean(0.9, 50)
    Beta(45, 5)
    """
    where = "beta_from_mean"
    mean, weight = _number(mean, "mean", where), _number(weight, "weight", where)
    if not 0 < mean < 1:
        raise PriorError(f"{where}: mean is an expected rate, strictly between 0 and 1; got "
                         f"{mean!r}.")
    if not weight > 0:
        raise PriorError(f"{where}: weight is a number of pseudo-observations, > 0; got "
                         f"{weight!r}.")
    return Beta(weight * mean, weight * (1 - mean),
                elicited=f"{where}(mean={mean!r}, weight={weight!r})")


def dirichlet_from_mean(mean: Any, weight: float) -> Dirichlet:
    r"""Dirichlet(w · m): expected proportions ``m`` worth ``w`` pseudo-observations.

    Tötsch & Hoffmann ("Classifier uncertainty: evidence, potential impact, and
    probabilistic treatment", 2021) build an informative prior from a previous
    study's expected rates :math:`m_j` and a weight :math:`w` in pseudo-observations:

    .. math::

        \alpha_j = w\, m_j, \qquad E[\theta_j] = m_j, \qquad \sum_j \alpha_j = w.

    ``mean`` is a sequence (e.g. the four confusion-matrix cells' rates in
    ``tp, fn, fp, tn`` order, or K class proportions), or a K×K matrix whose rows
    are each a class's expected predicted-class proportions (then every row gets
    weight ``w``; a DataFrame keeps its class labels).  Entries must be positive
    and each sequence must sum to 1 within 1e-9: it is not normalised, because a
    mean that does not sum to one is more often a mistake (counts, a wrong column)
    than a rounding; divide by the sum yourself when you mean that.

    Examples
    --------
    >>> dirichlet_from_mean([0.4, 0.1, 0.05, 0.45], 20)
    Dirichlet(8, 2, 1, 9)
    >>> dirichlet_from_mean([[0.8, 0.2], [0.1, 0.9]], 10)
    Dirichlet([[8, 2], [1, 9]])
    """
    where = "dirichlet_from_mean"
    weight = _number(weight, "weight", where)
    if not weight > 0:
        raise PriorError(f"{where}: weight is a number of pseudo-observations, > 0; got "
                         f"{weight!r}.")
    try:
        arr = np.asarray(mean, dtype=float)
    except (TypeError, ValueError) as err:
        raise PriorError(f"{where}: mean must be numbers, got {mean!r}.") from err
    if arr.ndim not in (1, 2) or arr.shape[-1] < 2:
        raise PriorError(f"{where}: mean is a sequence of K >= 2 proportions or a K×K matrix of "
                         f"them (one row per class), got shape {arr.shape}.")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise PriorError(f"{where}: every expected proportion must be > 0 (a zero gives an "
                         f"improper Dirichlet), got {arr.tolist()}.")
    sums = arr.sum(axis=-1)
    if np.any(np.abs(sums - 1) > 1e-9):
        raise PriorError(f"{where}: expected proportions must sum to 1 (each row, for a matrix); "
                         f"they sum to {np.round(sums, 12).tolist()}. Divide by the sum if you "
                         "mean them as relative sizes.")
    stated = f"{where}(mean={arr.tolist()!r}, weight={weight!r})"
    if hasattr(mean, "columns") and hasattr(mean, "index"):
        return Dirichlet(mean * weight, elicited=stated)
    return Dirichlet(weight * arr, elicited=stated)


def describe(prior: Prior) -> str:
    """A prior with the statement it was elicited from, for reports.

    Examples
    --------
    >>> describe(beta_from_mean(0.9, 50)), describe(Beta(1, 1))
    ('Beta(45, 5) from beta_from_mean(mean=0.9, weight=50.0)', 'Beta(1, 1)')
    """
    how = getattr(prior, "elicited", None)
    return repr(prior) if not how else f"{prior!r} from {how}"
