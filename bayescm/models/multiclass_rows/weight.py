r"""How much a K-class prior weighs against the data: the pseudo-case check.

A Dirichlet prior of total concentration :math:`B` on a row (or on the class mix)
acts as :math:`B` pseudo-cases added to that row's :math:`n` test cases: the
posterior mean of every share in the row is the weighted average

.. math::

    \mathrm{E}[\rho_{ap} \mid C] = \frac{n}{n + B}\,\hat\rho_{ap}
                                 + \frac{B}{n + B}\,\frac{\beta_{ap}}{B},

so the prior's mean carries the weight :math:`B / (n + B)`.  The check warns
(:class:`PriorWeightWarning`) when a prior's pseudo-cases exceed :data:`SHARE` = 25 % of
the test cases they are added to -- the prior then carries more than a fifth of the
posterior mean -- for

* each actual class's row: the row prior's total :math:`B_a` against the class's size
  :math:`r_a` (``multiclass_rows``: the ``rows`` prior; ``multiclass_cells``: the
  row sums :math:`\alpha_{a+}` of the cells prior, which is its row prior);
* the class mix: the prevalence prior's total :math:`A` against all :math:`N` test
  cases (``multiclass_rows``: ``prevalence``; ``multiclass_cells``: the sum of the
  cells prior).

The K-class defaults (two pseudo-cases per row and on the class mix; four over the K²
cells) pass for every class of 8 or more test cases (16 for the cells model's total).
The warning names the lighter prior to use: Perks' :math:`\mathrm{Dirichlet}(1/K)`
(one pseudo-case) when it passes, else a symmetric Dirichlet of the largest weight that
does.  A class without test cases is named too: its row is the prior alone, whatever
the prior.

Examples
--------
>>> import warnings
>>> import bayescm as bcm
>>> mc = bcm.MulticlassConfusionMatrix([[9, 1, 0], [2, 1, 0], [0, 3, 9]],
...                                    labels=["cat", "dog", "bird"])
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     _ = bcm.models.multiclass_rows(mc)
>>> print(caught[0].message)  # doctest: +NORMALIZE_WHITESPACE
multiclass_rows: a prior weighs too much against the data. A prior's pseudo-cases should be
at most 25% of the test cases they are added to, but 'rows' adds 2 pseudo-cases to each
class, and these have fewer than 8 test cases: 'dog' (3). Their posterior (recall,
precision, F1) leans towards the prior. Use a lighter prior, e.g. priors={'rows':
bcm.priors.Dirichlet.weighted(3, total=0.75)} (0.75 pseudo-cases per class), or keep this
one if it states what you know (to silence this: warnings.simplefilter('ignore',
bcm.models.PriorWeightWarning)).
"""

from __future__ import annotations

import inspect
import math
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["SHARE", "PriorWeightWarning", "Weight", "check_prior_weight", "heavy"]

SHARE = 0.25
"""A prior may add at most this share of the test cases it is added to (25 %)."""

_LISTED = 6  # findings named in one message; the rest are counted
_TOLERANCE = 1e-9  # 2/K summed K times is not always 2 in floating point


class PriorWeightWarning(UserWarning):
    """A K-class prior adds more pseudo-cases than 25 % of a class's (or the table's)
    test cases, so the posterior leans towards it; the message names a lighter prior."""


@dataclass(frozen=True)
class Weight:
    """The pseudo-cases one prior adds, per actual class and on the whole table.

    Attributes
    ----------
    parameter
        The prior's name (``"rows"``, ``"prevalence"``, ``"theta"``).
    categories
        Length of the 1-d Dirichlet that the prior takes (K, or K² for the cells):
        the lighter prior is suggested at that length.
    per_class
        ``(classifiers, K)`` pseudo-cases added to each actual class's row, or None.
    total
        ``(classifiers,)`` pseudo-cases added to the class mix of all test cases, or None.
    per_class_of_total
        What share of a symmetric prior's total weight each row gets (1 for a row
        prior, 1/K for the cells).
    what
        The quantities that lean towards the prior, in words.
    """

    parameter: str
    categories: int
    per_class: np.ndarray | None = None
    total: np.ndarray | None = None
    per_class_of_total: float = 1.0
    what: str = "recall, precision, F1"


def heavy(weight: np.ndarray, cases: np.ndarray, share: float = SHARE) -> np.ndarray:
    """Where ``weight`` pseudo-cases exceed ``share`` of ``cases`` test cases."""
    return np.asarray(weight, float) > share * np.asarray(cases, float) + _TOLERANCE


def _round_down(x: float) -> float:
    """``x`` rounded down to two significant digits (a weight that still passes)."""
    if x <= 0:
        return 0.0
    scale = 10.0 ** (math.floor(math.log10(x)) - 1)
    return math.floor(x / scale + 1e-9) * scale


def _lighter(w: Weight, rows: np.ndarray, n: np.ndarray) -> str:
    """The lighter prior to use for ``w``: Perks' when it passes, else the heaviest
    symmetric Dirichlet that does ("" when none does)."""
    limits = []
    if w.per_class is not None and np.any(rows > 0):
        limits.append(SHARE * float(rows[rows > 0].min()) / w.per_class_of_total)
    if w.total is not None:
        limits.append(SHARE * float(n.min()))
    allowed = min(limits) if limits else 0.0
    per_class = "per class" if w.per_class is not None and w.per_class_of_total == 1 else "in all"
    if allowed >= 1:
        return (f"priors={{{w.parameter!r}: bcm.priors.Dirichlet.perks({w.categories})}} "
                f"(1 pseudo-case {per_class})")
    total = _round_down(allowed)
    if total <= 0:
        return ""
    return (f"priors={{{w.parameter!r}: bcm.priors.Dirichlet.weighted({w.categories}, "
            f"total={total:g})}} ({total:g} pseudo-cases {per_class})")


def _some(items: Sequence[str]) -> str:
    """The first few items, and how many more."""
    more = f" and {len(items) - _LISTED} more" if len(items) > _LISTED else ""
    return ", ".join(items[:_LISTED]) + more


def _findings(w: Weight, rows: np.ndarray, n: np.ndarray, labels: Sequence[str],
              classifiers: Sequence[str]) -> tuple[list[str], list[str]]:
    """Phrases naming where ``w`` is heavy (one per classifier and kind), and the classes
    with no test cases."""
    many = len(classifiers) > 1
    found, empty = [], []
    for c, name in enumerate(classifiers):
        of = f"for classifier {name!r}, " if many else ""
        if w.per_class is not None:
            flagged = np.flatnonzero(heavy(w.per_class[c], rows[c]))
            empty += [f"{labels[a]!r}" + (f" (classifier {name!r})" if many else "")
                      for a in flagged if rows[c, a] == 0]
            flagged = [a for a in flagged if rows[c, a] > 0]
            weights = {float(w.per_class[c, a]) for a in flagged}
            if len(weights) == 1:  # one weight for every row: name the class sizes
                b = weights.pop()
                found.append(f"{of}{w.parameter!r} adds {b:.3g} pseudo-cases to each class, "
                             f"and these have fewer than {b / SHARE:.3g} test cases: " + _some(
                                 [f"{labels[a]!r} ({int(rows[c, a])})" for a in flagged]))
            elif flagged:
                found.append(f"{of}{w.parameter!r} adds to class " + _some(
                    [f"{labels[a]!r} {w.per_class[c, a]:.3g} pseudo-cases against "
                     f"{int(rows[c, a])} test cases" for a in flagged]))
        if w.total is not None and heavy(w.total[c], n[c]):
            found.append(f"{of}{w.parameter!r} adds {w.total[c]:.3g} pseudo-cases to the class "
                         f"mix of only {int(n[c])} test cases")
    return found, empty


def check_prior_weight(model: str, counts: np.ndarray, labels: Sequence[str],
                       classifiers: Sequence[str], weights: Sequence[Weight]) -> str | None:
    """Warn (:class:`PriorWeightWarning`, once) where a prior outweighs the data.

    Parameters
    ----------
    model
        The family's name, for the message.
    counts
        ``(classifiers, K, K)`` observed counts (rows actual).
    labels, classifiers
        Names of the classes and classifiers.
    weights
        The pseudo-cases of each prior (:class:`Weight`).

    Returns
    -------
    str or None
        The warning's message, or None when every prior is light enough.
    """
    counts = np.asarray(counts)
    rows, n = counts.sum(axis=2), counts.sum(axis=(1, 2))
    found, empty, lighter, what = [], [], [], []
    for w in weights:
        heavy_rows, no_cases = _findings(w, rows, n, labels, classifiers)
        empty += [x for x in no_cases if x not in empty]
        if heavy_rows:
            found += heavy_rows
            if any("class mix" not in x for x in heavy_rows):
                what.append(w.what)
            if any("class mix" in x for x in heavy_rows):
                what.append("the class mix")
            if (suggestion := _lighter(w, rows, n)):
                lighter.append(suggestion)
    if not found and not empty:
        return None
    parts = [f"{model}: a prior weighs too much against the data."]
    if found:
        listed = "; ".join(found[:_LISTED])
        more = f"; and {len(found) - _LISTED} more findings" if len(found) > _LISTED else ""
        leaning = ", ".join(dict.fromkeys(what))
        parts.append(f"A prior's pseudo-cases should be at most {SHARE:.0%} of the test "
                     f"cases they are added to, but {listed}{more}. Their posterior "
                     f"({leaning}) leans towards the prior.")
        if lighter:
            parts.append(f"Use a lighter prior, e.g. {' and '.join(lighter)}, or keep this "
                         "one if it states what you know")
        else:
            parts.append("Keep the prior only if it states what you know")
        parts[-1] += (" (to silence this: warnings.simplefilter('ignore', "
                      "bcm.models.PriorWeightWarning)).")
    if empty:
        parts.append(f"Class(es) {_some(empty)} have no test cases: their "
                     "recall is the prior alone, whatever prior is used; report them as "
                     "untested.")
    message = " ".join(parts)
    warnings.warn(message, PriorWeightWarning, stacklevel=_outside_bayescm())
    return message


def _outside_bayescm() -> int:
    """The stack level of the first caller outside the bayescm package (the user's line)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep
    here = inspect.currentframe()
    frame, level = here.f_back if here is not None else None, 1  # the warner is level 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(root):
        frame, level = frame.f_back, level + 1
    return level
