"""The result of sample-size planning and the search over test-set sizes.

:func:`bayescm.analysis.sample_size` simulates HDI widths for a binary or a K-class
metric (:mod:`bayescm.analysis.sample_size`,
:mod:`bayescm.analysis.sample_size.multiclass`); both hand a simulator to
:func:`search`, which evaluates the assurance on a grid of test-set sizes and refines
the first size reaching it by bisection, and both return a :class:`SampleSizePlan`.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["SampleSizePlan", "check_goal", "grid", "is_number", "positive_int", "search"]


@dataclass(frozen=True, eq=False, repr=False)
class SampleSizePlan:
    """Result of :func:`bayescm.analysis.sample_size`.

    Attributes
    ----------
    metric
        Registry key of the planned metric.
    target_width
        The HDI width to reach.
    hdi_prob, assurance
        Mass of the HDI; required share of studies reaching the target.
    n_required
        Smallest test-set size :math:`N` whose simulated assurance reaches
        ``assurance`` (None when no evaluated :math:`N` does: extend ``n_grid``).
    curve
        One row per evaluated :math:`N` (index ``n``, the grid plus the bisection
        steps): ``assurance`` (share of studies with HDI width <= target),
        ``assurance_se`` (its binomial Monte Carlo standard error),
        ``median_width`` and ``width_quantile`` (the ``assurance`` quantile of the
        width: at this :math:`N` a share ``assurance`` of studies is at least this
        precise); K-class plans add ``mean_width`` (the expected HDI width).
    generating
        Description of the generating distribution.
    method
        ``"exact Beta HDI"`` (rates) or ``"posterior draws"`` (composite metrics).
    n_sims, draws
        Simulated studies per :math:`N`; posterior draws per study (None for rates).
    n_rule
        The worst-case normal rule (:func:`sample_size_rule`, :math:`p = 1/2`)
        converted to a total test-set size, for rates; None otherwise.
    note
        Anything the reader should know (e.g. the target is reached already at the
        smallest :math:`N` evaluated).
    label
        The class of a per-class K-class metric (None otherwise, or when every
        class must reach the target).
    """

    metric: str
    target_width: float
    hdi_prob: float
    assurance: float
    n_required: int | None
    curve: pd.DataFrame
    generating: str
    method: str
    n_sims: int
    draws: int | None
    n_rule: float | None
    note: str
    label: Hashable | None = None

    @property
    def reached(self) -> bool:
        """Whether some evaluated N reaches the assurance."""
        return self.n_required is not None

    def to_frame(self) -> pd.DataFrame:
        """The assurance :attr:`curve` (one row per evaluated N) with a column
        ``reached`` (assurance at least the required one); ``attrs`` hold the plan."""
        frame = self.curve.copy()
        frame["reached"] = frame["assurance"] >= self.assurance
        frame.attrs = {**self.curve.attrs, "n_required": self.n_required,
                       "generating": self.generating, "method": self.method,
                       "n_sims": self.n_sims, "draws": self.draws, "n_rule": self.n_rule,
                       **({} if self.label is None else {"label": self.label})}
        return frame

    def _lines(self) -> list[tuple[str, str]]:
        grid = self.curve.index
        if self.n_required is None:
            found = f"not reached up to N = {grid.max()}: extend n_grid"
        else:
            row = self.curve.loc[self.n_required]
            found = (f"{self.n_required}  (assurance {row['assurance']:.3f} "
                     f"± {row['assurance_se']:.3f} MC s.e.)")
        sim = (f"{self.n_sims} studies per N, {self.method}"
               + (f" ({self.draws} draws each)" if self.draws else "")
               + f"; N from {grid.min()} to {grid.max()} ({len(grid)} evaluated)")
        lines = [("n_required", found), ("generating", self.generating), ("simulation", sim)]
        if self.n_rule is not None:
            lines.append(("normal rule", f"{self.n_rule:.0f}  (worst case p = 1/2, "
                                         "Tötsch & Hoffmann S5 with exact z)"))
        if self.note:
            lines.append(("note", self.note))
        return lines

    def _title(self) -> str:
        what = self.metric if self.label is None else f"{self.metric} of class {self.label!r}"
        return (f"SampleSizePlan: {what}, {self.hdi_prob:.0%} HDI width <= "
                f"{self.target_width:g} with assurance {self.assurance:.0%}")

    def __repr__(self) -> str:
        width = max(len(k) for k, _ in self._lines())
        body = "\n".join(f"  {k:<{width}} : {v}" for k, v in self._lines())
        return f"{self._title()}\n{body}"

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                       f"<td style='text-align:left'>{html.escape(v)}</td></tr>"
                       for k, v in self._lines())
        curve = self.curve.to_html(float_format=lambda x: f"{x:.4g}")
        return (f"<div><p><b>{html.escape(self._title())}</b></p><table>{rows}</table>"
                f"<details><summary>curve ({len(self.curve)} rows)</summary>{curve}"
                "</details></div>")


def is_number(x: Any) -> bool:
    return isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool)


def grid(n_grid: Any) -> np.ndarray:
    if n_grid is None:
        return np.unique(np.round(np.logspace(1, 5, 25))).astype(np.int64)
    arr = np.atleast_1d(np.asarray(n_grid, dtype=float))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError("n_grid must be a non-empty 1-d sequence of test-set sizes.")
    if not np.isfinite(arr).all() or (arr < 1).any():
        raise ValueError(
            f"n_grid must hold test-set sizes >= 1, got {arr[~(np.isfinite(arr) & (arr >= 1))]}."
        )
    if (arr != np.round(arr)).any():
        raise ValueError(
            "n_grid must hold whole numbers of cases; round it, e.g. "
            "np.unique(np.round(n_grid))."
        )
    return np.unique(arr).astype(np.int64)


def positive_int(value: Any, default: int, name: str, *, minimum: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}.")
    return int(value)


def check_goal(target_width: Any, span: float, key: str, assurance: Any) -> None:
    """``target_width`` in (0, span] and ``assurance`` in (0, 1), or a ValueError."""
    if not (is_number(target_width) and 0 < target_width <= span):
        raise ValueError(
            f"target_width must be a number in (0, {span:g}] for {key!r} (the width of its "
            f"range), got {target_width!r}; e.g. 0.1 for 10 percentage points."
        )
    if not (is_number(assurance) and 0 < assurance < 1):
        raise ValueError(
            f"assurance must lie in (0, 1) (the share of studies that must reach the "
            f"target, e.g. 0.95), got {assurance!r}."
        )


def search(simulate: Callable[[int], np.ndarray], n_grid: np.ndarray, *, target_width: float,
           assurance: float, n_sims: int, mean_width: bool = False
           ) -> tuple[int | None, pd.DataFrame, str]:
    """Assurance on ``n_grid``, then bisection below the first size that reaches it.

    ``simulate(n)`` returns the HDI widths of the simulated studies at test-set size
    ``n`` (NaN: the metric is undefined, the target not reached).  Returns
    ``n_required`` (None when no size reaches the assurance), the curve (one row per
    evaluated size; ``mean_width`` adds the mean of the widths) and a note.
    """
    rows: dict[int, dict[str, float]] = {}

    def evaluate(n: int) -> bool:
        if n not in rows:
            w = simulate(n)
            w = np.where(np.isnan(w), np.inf, w)  # undefined metric: target not reached
            share = float(np.mean(w <= target_width))
            rows[n] = {
                "assurance": share,
                "assurance_se": float(np.sqrt(share * (1 - share) / n_sims)),
                "median_width": float(np.quantile(w, 0.5, method="inverted_cdf")),
                "width_quantile": float(np.quantile(w, assurance, method="inverted_cdf")),
            }
            if mean_width:
                rows[n]["mean_width"] = float(np.mean(w))
        return rows[n]["assurance"] >= assurance

    hits = [evaluate(int(n)) for n in n_grid]
    note = ""
    n_required: int | None = None
    if any(hits):
        i = hits.index(True)
        n_required = int(n_grid[i])
        if i == 0:
            note = (f"the target is met already at the smallest N evaluated ({n_required}); "
                    "add smaller values to n_grid to find the minimum")
        else:
            lo, hi = int(n_grid[i - 1]), n_required
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (lo, mid) if evaluate(mid) else (mid, hi)
            n_required = hi
    curve = pd.DataFrame.from_dict(rows, orient="index").sort_index()
    curve.index = curve.index.astype(np.int64).rename("n")
    return n_required, curve, note
