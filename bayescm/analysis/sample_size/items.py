r"""How many benchmark items (and runs per item) for a target width or to detect a difference.

One model answers :math:`N` items in clusters of :math:`m` items, each item :math:`r`
times; :math:`y_{ik} \in \{0, 1\}` is run :math:`k` of item :math:`i`, the item's score
:math:`s_i = \frac1r \sum_k y_{ik}` and the benchmark's score :math:`\bar s`.  With
:math:`p = E[y]` (the accuracy: the expected score on a new item of a new cluster) and
:math:`p_i` item :math:`i`'s success probability, write

.. math::

    \rho_r = \frac{\operatorname{Var}(p_i)}{p(1-p)} = \operatorname{Corr}(y_{ik}, y_{ik'}),
    \qquad
    \rho_c = \operatorname{Corr}(y_{ik}, y_{jk'})\quad (i \ne j \text{ in one cluster}),

the correlation of two runs of one item (``run_icc``) and the intra-cluster correlation
of single scores (``icc``; :math:`0 \le \rho_c \le \rho_r \le 1`).  Runs are independent
given the item, so :math:`\operatorname{Var}(s_i) = \operatorname{Var}(p_i) +
E[p_i(1 - p_i)]/r = p(1-p)\,f(r)` with :math:`f(r) = \rho_r + (1 - \rho_r)/r`, and two
items of one cluster have covariance :math:`\rho_c\,p(1-p)`.  Summing the :math:`N`
variances and :math:`N(m-1)` covariances,

.. math::

    \operatorname{Var}(\bar s) = \frac{p(1-p)}{N}\,D,\qquad
    D = f(r) + (m - 1)\rho_c,

Kish's design effect :math:`1 + (m-1)\rho_c` at one run.  A normal interval of mass
:math:`1 - \gamma` (and bayescm's HDI, whose posterior is close to that normal once
:math:`N` is moderate) has width :math:`w = 2z\sqrt{\operatorname{Var}(\bar s)}`,
:math:`z = \Phi^{-1}(1 - \gamma/2)`, so

.. math::

    N_\text{width} = \frac{(2z)^2\, p(1-p)\, D}{w^2}.

**Two models on the same items** (Miller, "Adding error bars to evals: a statistical
approach to language model evaluations", 2024: paired differences).  With accuracies
:math:`p_{A,B} = p \pm \delta/2`, :math:`v_X = p_X(1-p_X)` and :math:`\rho_{AB}` the
correlation of the two models' single scores on one item (``correlation``; runs of
different models are independent given the item, so :math:`\operatorname{Cov}(s_{Ai},
s_{Bi}) = \rho_{AB}\sqrt{v_A v_B}` at any :math:`r`), the per-item difference
:math:`d_i = s_{Ai} - s_{Bi}` has

.. math::

    \sigma_d^2(r) = (v_A + v_B) f(r) - 2\rho_{AB}\sqrt{v_A v_B},\qquad
    \operatorname{Var}(\bar d) = \frac{\sigma_d^2(r) + (m-1)\rho_d\,\sigma_d^2(1)}{N},

:math:`\rho_d` the intra-cluster correlation of single-run differences
(``difference_icc``; default :math:`\rho_c`).  A two-sided test at level
:math:`\alpha` (equivalently: P(A better) above :math:`1 - \alpha/2` under a flat
prior) detects :math:`\delta` with probability ``power`` when

.. math::

    N_\text{difference} = \frac{(z_{1-\alpha/2} + z_\text{power})^2\,
        N \operatorname{Var}(\bar d)}{\delta^2}.

Both are normal approximations at the design's values: the realised width varies
from benchmark to benchmark around the planned one (its spread shrinks like
:math:`1/\sqrt N`).  The tests check the variances and the power against
simulated benchmarks (:func:`bayescm.analysis.simulate_items`) and the width against
bayescm's exact Beta HDI.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from bayescm.analysis.items_intervals import icc_anova
from bayescm.data.items import ItemResults
from bayescm.stats import check_hdi_prob

__all__ = ["ItemsDesign", "ItemsPlan", "plan_items"]

_RUNS = (1, 2, 3, 5, 10)  # the runs per item the plan's curve shows


def _fraction(value: Any, name: str, *, low_open: bool = False) -> float:
    ok = isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)
    if not ok or not (0 < value < 1 if low_open else 0 <= value <= 1):
        rng = "(0, 1)" if low_open else "[0, 1]"
        raise ValueError(f"{name} must be a number in {rng}, got {value!r}.")
    return float(value)


@dataclass(frozen=True)
class ItemsDesign:
    r"""The planned benchmark: accuracy, clusters, runs and correlations (module docs).

    Attributes
    ----------
    accuracy
        Expected accuracy :math:`p` (for a difference: the mean of the two models').
    icc
        :math:`\rho_c`: correlation of one model's single scores on two items of one
        cluster (0: independent items).
    cluster_size
        :math:`m`: items per cluster (1: no clusters).
    runs
        :math:`r`: runs of every item by every model.
    run_icc
        :math:`\rho_r`: correlation of two runs of one item by one model (how much of
        the score's variance is the item's difficulty); needed when ``runs > 1``.
    correlation
        :math:`\rho_{AB}`: correlation of two models' single scores on one item
        (differences only; 0 is conservative when models find the same items hard).
    difference_icc
        :math:`\rho_d`: intra-cluster correlation of single-run differences (default
        ``icc``).

    Examples
    --------
    >>> d = ItemsDesign(accuracy=0.7, icc=0.1, cluster_size=5, runs=3, run_icc=0.4)
    >>> round(d.design_effect(), 4)  # 0.4 + 0.6 / 3 + 4 * 0.1
    1.0
    """

    accuracy: float = 0.7
    icc: float = 0.0
    cluster_size: float = 1.0
    runs: int = 1
    run_icc: float | None = None
    correlation: float = 0.0
    difference_icc: float | None = None
    source: str = field(default="given", compare=False)

    def __post_init__(self) -> None:
        _fraction(self.accuracy, "accuracy", low_open=True)
        _fraction(self.icc, "icc")
        _fraction(self.correlation, "correlation")
        if self.difference_icc is not None:
            _fraction(self.difference_icc, "difference_icc")
        m = self.cluster_size
        if isinstance(m, bool) or not isinstance(m, int | float | np.integer | np.floating) \
                or not 1 <= m < math.inf:
            raise ValueError(f"cluster_size must be a finite number >= 1 (items per cluster; 1: no "
                             f"clusters), got {m!r}.")
        _runs(self.runs)
        if self.run_icc is not None:
            rho_r = _fraction(self.run_icc, "run_icc")
            if rho_r < self.icc:
                raise ValueError(f"run_icc ({rho_r:g}) cannot be below icc ({self.icc:g}): "
                                 "two runs of one item agree at least as much as two items "
                                 "of one cluster.")
            if self.correlation > rho_r:
                raise ValueError(
                    f"correlation ({self.correlation:g}) cannot exceed run_icc ({rho_r:g}): "
                    "two models' scores on one item covary only through the item itself, "
                    "whose share of a score's variance is run_icc. Lower correlation or "
                    "raise run_icc.")

    def _f(self, runs: int) -> float:
        """f(r) = rho_r + (1 - rho_r)/r; rho_r matters only from two runs on."""
        if runs == 1:
            return 1.0
        if self.run_icc is None:
            raise ValueError(f"Planning {runs} runs per item needs run_icc= (the correlation "
                             "of two runs of one item: 1 if a model always answers an item "
                             "the same way, 0 if runs are as different as items); estimate it "
                             "from a pilot with repeated runs: ItemsDesign.from_results(...).")
        return self.run_icc + (1 - self.run_icc) / runs

    def design_effect(self, runs: int | None = None) -> float:
        """:math:`D = f(r) + (m - 1)\\rho_c`: the variance of the mean over :math:`p(1-p)/N`."""
        r = self.runs if runs is None else _runs(runs)
        return self._f(r) + (self.cluster_size - 1) * self.icc

    def difference_variance(self, difference: float, runs: int | None = None) -> float:
        r""":math:`N \operatorname{Var}(\bar d)` for accuracies :math:`p \pm \delta/2`."""
        r = self.runs if runs is None else _runs(runs)
        pa, pb = self.accuracy + difference / 2, self.accuracy - difference / 2
        if not (0 < pb < pa < 1 or 0 < pa < pb < 1):
            raise ValueError(f"accuracy ± difference/2 must lie in (0, 1): {pb:g} and {pa:g}.")
        if self.correlation >= 1:
            # two 0/1 scores with different means cannot correlate fully; from a pilot,
            # models that scored alike on every item (their difference has no spread)
            raise ValueError(
                "correlation 1 (models that score alike on every item, as in this pilot) "
                "leaves their difference no spread, and planning a comparison on it would "
                "ask for a handful of items. Give the design's correlation instead, e.g. "
                "items={'accuracy': 0.7, 'correlation': 0.5}, or a larger pilot.")
        va, vb = pa * (1 - pa), pb * (1 - pb)
        cov = 2 * self.correlation * math.sqrt(va * vb)
        one = va + vb - cov
        var = (va + vb) * self._f(r) - cov
        if var <= 0 or one <= 0:
            raise ValueError(f"correlation {self.correlation:g} is too high for run_icc "
                             f"{self.run_icc}: the difference would have no variance.")
        rho_d = self.icc if self.difference_icc is None else self.difference_icc
        return var + (self.cluster_size - 1) * rho_d * one

    @classmethod
    def from_results(cls, results: ItemResults, *, models: Sequence[str] | None = None,
                     runs: int | None = None) -> ItemsDesign:
        r"""Moment estimates of the design from a pilot benchmark.

        Per model: :math:`\hat p` the mean item score; :math:`\hat\rho_r` from the
        item scores' variance minus the within-item (run) variance
        :math:`\overline{s_i(1-s_i)/(n_i - 1)}` (needs repeated runs, else None);
        :math:`\hat\rho_c` from the ANOVA intra-cluster correlation of the item
        scores times their variance over :math:`\hat p(1-\hat p)`.  Pairs of models
        give :math:`\hat\rho_{AB}` (covariance of their item scores) and
        :math:`\hat\rho_d` (clustered covariance of the differences over
        :math:`\hat\sigma_d^2(1)`).  Estimates are averaged over ``models`` (default
        all) and clipped to their valid ranges.  ``runs`` sets the planned runs
        (default the pilot's, rounded).
        """
        if not isinstance(results, ItemResults):
            raise TypeError(f"from_results needs a bayescm.ItemResults, got "
                            f"{type(results).__name__}.")
        names = list(results.models if models is None else models)
        unknown = [m for m in names if m not in results.models]
        if unknown or not names:
            raise ValueError(f"models must name models of the results {list(results.models)}, "
                             f"got {names!r}.")
        rows = [results.models.index(m) for m in names]
        clustered = results.clusters is not None
        if results.n_items < 2 or (clustered and results.n_clusters < 2):
            raise ValueError(
                f"A pilot of {results.n_items} item(s)"
                + (f" in {results.n_clusters} cluster(s)" if clustered else "")
                + " cannot estimate the variances a plan needs: give at least 2 items"
                + (" in 2 or more clusters" if clustered else "")
                + ", or the design's values, e.g. items={'accuracy': 0.7, 'icc': 0.1, "
                "'cluster_size': 5}.")
        y, n = results.successes_array[rows], results.trials_array[rows]
        s = y / n
        cl = results.cluster_index
        p = s.mean(axis=1)
        if ((p <= 0) | (p >= 1)).any():
            raise ValueError("A pilot model scored 0 or 1 on every item: its accuracy and "
                             "correlations cannot be estimated; give the design's values.")
        v = p * (1 - p)
        var_s = s.var(axis=1, ddof=1)
        rho_r = None
        repeated = n > 1
        if repeated.any():
            within = np.where(repeated, s * (1 - s) / np.maximum(n - 1, 1), 0.0).mean(axis=1)
            rho_r = float(np.clip(np.mean((var_s - within) / v), 0, 1))
        rho_c = 0.0
        if clustered:
            rho_c = float(np.mean([icc_anova(s[k], cl) * var_s[k] / v[k]
                                   for k in range(len(rows))]))
            rho_c = min(max(rho_c, 0.0), 1.0 if rho_r is None else rho_r)
        corr, rho_d = [], []
        for a in range(len(rows)):
            for b in range(a + 1, len(rows)):
                c = float(np.cov(s[a], s[b])[0, 1] / math.sqrt(v[a] * v[b]))
                corr.append(c)
                one = v[a] + v[b] - 2 * c * math.sqrt(v[a] * v[b])
                d = s[a] - s[b]
                if clustered and one > 0:
                    rho_d.append(icc_anova(d, cl) * d.var(ddof=1) / one)
        r_plan = round(float(n.mean())) if runs is None else _runs(runs)
        return cls(accuracy=float(p.mean()), icc=rho_c,
                   cluster_size=float(results.cluster_sizes.mean()) if clustered else 1.0,
                   runs=r_plan, run_icc=rho_r,
                   # at most rho_r: models covary only through the items themselves
                   correlation=float(np.clip(np.mean(corr), 0, 1 if rho_r is None else rho_r))
                   if corr else 0.0,
                   difference_icc=float(np.clip(np.mean(rho_d), 0, 1)) if rho_d else None,
                   source=f"pilot of {results.n_items} items, models {names}")


def _runs(runs: Any) -> int:
    if isinstance(runs, bool) or not isinstance(runs, int | np.integer) or runs < 1:
        raise ValueError(f"runs must be a whole number >= 1, got {runs!r}.")
    return int(runs)


def _design(items: Any) -> ItemsDesign:
    if isinstance(items, ItemsDesign):
        return items
    if isinstance(items, ItemResults):
        return ItemsDesign.from_results(items)
    if isinstance(items, Mapping):
        known = {f.name for f in fields(ItemsDesign)} - {"source"}
        extra = sorted(set(items) - known)
        if extra:
            raise ValueError(f"Unknown items design key(s) {extra}; known: {sorted(known)}.")
        return ItemsDesign(**items)
    raise TypeError("items= takes an ItemsDesign, a mapping of its fields (accuracy=, icc=, "
                    "cluster_size=, runs=, run_icc=, correlation=, difference_icc=) or a pilot "
                    f"bayescm.ItemResults, got {type(items).__name__}.")


@dataclass(frozen=True, eq=False, repr=False)
class ItemsPlan:
    """Result of :func:`bayescm.analysis.sample_size` for benchmark items.

    Attributes
    ----------
    goal
        ``"width"`` (the interval of one model's accuracy) or ``"difference"``
        (detect a paired difference between two models).
    target
        The width, or the difference :math:`\\delta`.
    n_required
        Items needed at the design's runs (the ceiling of the formula).
    n_clusters
        Clusters needed, :math:`\\lceil N/m \\rceil`.
    n_independent
        Items needed if they were independent and answered once (no clustering).
    design
        The :class:`ItemsDesign`.
    curve
        Index ``runs``; columns ``n_items``, ``n_clusters``, ``answers`` (items × runs
        per model), ``design_effect`` (variance over the independent one-run case).
    """

    goal: str
    target: float
    hdi_prob: float
    power: float | None
    alpha: float | None
    n_required: int
    n_clusters: int
    n_independent: int
    design: ItemsDesign
    curve: pd.DataFrame
    note: str = ""

    @property
    def metric(self) -> str:
        return "acc"

    def width(self, n_items: float, runs: int | None = None) -> float:
        """The planned interval width of one model's accuracy at ``n_items`` items."""
        z = stats.norm.ppf(0.5 + self.hdi_prob / 2)
        d = self.design
        return float(2 * z * math.sqrt(d.accuracy * (1 - d.accuracy)
                                       * d.design_effect(runs) / n_items))

    def power_at(self, n_items: float, runs: int | None = None) -> float:
        """Power of the paired test at ``n_items`` items (``goal="difference"``)."""
        if self.goal != "difference":
            raise ValueError("power_at belongs to plans for a difference (difference=...).")
        se = math.sqrt(self.design.difference_variance(self.target, runs) / n_items)
        return float(stats.norm.cdf(abs(self.target) / se
                                    - stats.norm.ppf(1 - self.alpha / 2)))

    def to_frame(self) -> pd.DataFrame:
        """The :attr:`curve` with the plan in ``attrs``."""
        frame = self.curve.copy()
        frame.attrs = {"goal": self.goal, "target": self.target, "hdi_prob": self.hdi_prob,
                       "power": self.power, "alpha": self.alpha,
                       "n_required": self.n_required, "n_clusters": self.n_clusters,
                       "n_independent": self.n_independent}
        return frame

    def _title(self) -> str:
        if self.goal == "width":
            return (f"ItemsPlan: {self.hdi_prob:.0%} interval of accuracy at most "
                    f"{self.target:g} wide")
        return (f"ItemsPlan: detect a paired difference of {self.target:g} in accuracy "
                f"(power {self.power:.0%}, two-sided alpha {self.alpha:g})")

    def _lines(self) -> list[tuple[str, str]]:
        d = self.design
        lines = [("n_required", f"{self.n_required} items at {d.runs} run(s) each"
                  + (f", in {self.n_clusters} clusters of {d.cluster_size:g}"
                     if d.cluster_size > 1 else "")),
                 ("without clustering", f"{self.n_independent} independent items, one run "
                                        "each"),
                 ("design", f"accuracy {d.accuracy:.3g}, icc {d.icc:.3g}, run_icc "
                            f"{'-' if d.run_icc is None else f'{d.run_icc:.3g}'}"
                            + (f", correlation {d.correlation:.3g}"
                               if self.goal == "difference" else "") + f" ({d.source})"),
                 ("method", "normal approximation with the design effect (Kish 1965; "
                            "Miller 2024)")]
        if self.note:
            lines.append(("note", self.note))
        return lines

    def __repr__(self) -> str:
        width = max(len(k) for k, _ in self._lines())
        body = "\n".join(f"  {k:<{width}} : {v}" for k, v in self._lines())
        return f"{self._title()}\n{body}"

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                       f"<td style='text-align:left'>{html.escape(v)}</td></tr>"
                       for k, v in self._lines())
        return (f"<div><p><b>{html.escape(self._title())}</b></p><table>{rows}</table>"
                f"{self.curve.to_html(float_format=lambda x: f'{x:.4g}')}</div>")


def plan_items(target_width: float | None = None, *, items: Any = None,
               difference: float | None = None, power: float = 0.8, alpha: float = 0.05,
               hdi_prob: float = 0.95) -> ItemsPlan:
    r"""Items (and runs) for a target width, or to detect a paired difference.

    The formulas are in the module documentation.  ``items`` is an
    :class:`ItemsDesign`, a mapping of its fields or a pilot
    :class:`bayescm.ItemResults`; give ``target_width`` or ``difference``.

    Examples
    --------
    Accuracy near 0.7, clusters of 5 items with intra-cluster correlation 0.1: a 95%
    interval 0.1 wide needs 1.4 times the items of independent ones:

    >>> plan = plan_items(0.1, items={"accuracy": 0.7, "icc": 0.1, "cluster_size": 5})
    >>> plan.n_required, plan.n_clusters, plan.n_independent
    (452, 91, 323)

    Detect a difference of 0.05 between two models whose scores correlate 0.5 per item:

    >>> plan_items(items={"accuracy": 0.7, "correlation": 0.5}, difference=0.05).n_required
    659
    """
    hdi_prob = check_hdi_prob(hdi_prob)
    design = _design(items)
    if (target_width is None) == (difference is None):
        raise ValueError("Give target_width (the interval of one model's accuracy) or "
                         "difference= (two models on the same items), one of them.")
    goal = "width" if difference is None else "difference"
    if goal == "width":
        target = _fraction(target_width, "target_width", low_open=True)
        z2 = (2 * stats.norm.ppf(0.5 + hdi_prob / 2)) ** 2
        pq = design.accuracy * (1 - design.accuracy)

        def needed(var: float) -> float:
            return z2 * pq * var / target**2

        base = needed(1.0)
    else:
        ok = isinstance(difference, int | float | np.integer | np.floating) and difference != 0
        if not ok or isinstance(difference, bool):
            raise ValueError(f"difference must be a non-zero number (the accuracy difference "
                             f"to detect, e.g. 0.05), got {difference!r}.")
        target = float(difference)
        _fraction(power, "power", low_open=True)
        _fraction(alpha, "alpha", low_open=True)
        k2 = (stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)) ** 2
        plain = replace(design, icc=0.0, cluster_size=1.0, runs=1, difference_icc=None)

        def needed(var: float) -> float:
            return k2 * var / target**2

        base = needed(plain.difference_variance(target, 1))
    runs = sorted({*_RUNS, design.runs} if design.run_icc is not None else {design.runs})
    rows = {}
    for r in runs:
        if goal == "width":
            deff = design.design_effect(r)
            n = needed(deff)
        else:
            n = needed(design.difference_variance(target, r))
            deff = n / base
        n_items = max(2, math.ceil(n - 1e-9))
        rows[r] = {"n_items": n_items,
                   "n_clusters": math.ceil(n_items / design.cluster_size - 1e-9),
                   "answers": n_items * r, "design_effect": deff}
    curve = pd.DataFrame.from_dict(rows, orient="index")
    curve.index = curve.index.rename("runs")
    chosen = rows[design.runs]
    note = ""
    if design.run_icc is None and goal == "width" and design.runs == 1:
        note = "give run_icc= to see how more runs per item trade against more items"
    return ItemsPlan(goal=goal, target=target, hdi_prob=hdi_prob,
                     power=power if goal == "difference" else None,
                     alpha=alpha if goal == "difference" else None,
                     n_required=int(chosen["n_items"]), n_clusters=int(chosen["n_clusters"]),
                     n_independent=max(2, math.ceil(base - 1e-9)), design=design,
                     curve=curve, note=note)
