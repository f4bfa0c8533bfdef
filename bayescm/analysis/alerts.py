r"""Monitoring alerts over time windows: P(metric below a threshold) per window.

A sliced fit with a time-window level (``ConfusionMatrix.from_predictions(...,
time=..., window="7D")``) has per draw the confusion probabilities of every
(group values, window) slice.  :func:`alerts` pools the slices of each window
(over the other factors, by case counts, see :mod:`bayescm.analysis.pooling`;
or keeps the levels of ``by`` as separate series), computes the metric from the
pooled :math:`\theta` with :mod:`bayescm.metrics`, and reports per window

.. math::

    p_w = P(m_w < \tau \mid \text{data})
    \quad\text{(or } P(m_w > \tau) \text{ for a metric where lower is better)},

and the **alert**: the first window whose :math:`p_w` reaches ``prob``.  Windows
without cases are kept in the table, flagged, and never alert.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm import metrics as registry
from bayescm.analysis.pooling import GROUP, as_levels, group_slices, sliced_fit
from bayescm.analysis.slice_blocks import pooled_chunks
from bayescm.data.confusion import CELLS
from bayescm.scheduling import client_for
from bayescm.stats import check_hdi_prob, hdi

__all__ = ["Alerts", "alerts"]


@dataclass(frozen=True)
class Alerts:
    """Per-window breach probabilities and the first alert (result of :func:`alerts`).

    Attributes
    ----------
    metric, threshold, prob, window, by, hdi_prob
        What was asked.
    table
        One row per (series, window): ``series`` (the ``by`` levels, ``""`` without
        ``by``), ``window``, ``n``, ``empty``, ``median``, ``hdi_lower``,
        ``hdi_upper``, ``p_breach`` and ``alert`` (True from the first window whose
        ``p_breach`` reaches ``prob`` on).
    first
        Per series, the window of the first alert (NaT/None when none fired).
    higher_is_better
        The metric's direction: a breach is ``metric < threshold`` when True,
        ``metric > threshold`` otherwise.
    """

    metric: str
    threshold: float
    prob: float
    window: str
    by: tuple[str, ...] | None
    hdi_prob: float
    table: pd.DataFrame
    first: pd.Series
    higher_is_better: bool

    def to_frame(self) -> pd.DataFrame:
        """:attr:`table` (a copy)."""
        return self.table.copy()

    @property
    def event(self) -> str:
        return f"{self.metric} {'<' if self.higher_is_better else '>'} {self.threshold:g}"

    def __repr__(self) -> str:
        lines = [f"Alerts on P({self.event}) >= {self.prob:g} over "
                 f"{self.table['window'].nunique()} windows:"]
        for series, when in self.first.items():
            name = f"{series}: " if series else ""
            lines.append(f"  {name}" + ("no alert" if pd.isna(when) else f"first alert at "
                                        f"{self.window}={_fmt(when)}"))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        lines = [html.escape(line) for line in repr(self).splitlines()]
        return (f"<p><b>{lines[0]}</b><br>{'<br>'.join(lines[1:])}</p>"
                + self.table.to_html(index=False, float_format="{:.4g}".format))

    def plot(self, *, ax: Any = None) -> Any:
        """Timeline of the metric's posterior median and HDI band with the threshold and
        the alert (see :func:`bayescm.plots.alert_timeline`)."""
        from bayescm.plots.fairness import alert_timeline

        return alert_timeline(self, ax=ax)


def _fmt(value: Any) -> str:
    if isinstance(value, pd.Timestamp) and value == value.normalize():
        return value.strftime("%Y-%m-%d")
    return str(value)


def alerts(
    idata: Any,
    metric: str = "tpr",
    *,
    threshold: float = 0.8,
    prob: float = 0.9,
    window: str = "window",
    by: str | Sequence[str] | None = None,
    hdi_prob: float = 0.95,
    chunk: int | None = None,
    scheduler: Any = None,
) -> Alerts:
    r"""Per time window, P(metric breaches ``threshold``) and the first alert.

    Parameters
    ----------
    idata
        A fit of a sliced ConfusionMatrix with a time-window level (posterior
        ``theta`` on dims ``slice``, ``cell``; any model family).
    metric
        Registry key; its direction (:func:`bayescm.metrics.higher_is_better`) says
        whether a breach is falling below (TPR, accuracy, ...) or rising above
        (FPR, error rate, ...) the threshold.
    threshold
        The level the metric must not cross, strictly inside the metric's range
        (``bcm.metrics.get(metric).bounds``; e.g. (0, 1) for a rate).
    prob
        Alert level: a window alerts when P(breach | data) >= ``prob``.
    window
        Name of the time level of the slices.
    by
        Factor(s) to monitor as separate series; other factors are pooled by case
        counts within each window.
    hdi_prob
        Mass of the HDI band.
    chunk
        Draws per chunk (default: about 16 MB of draws); the result does not depend on
        it.
    scheduler
        None: in this process for a NumPy posterior, on Dask's active scheduler for a
        Dask-backed one (``bcm.exact_posterior(..., chunk=c)``); ``"dask"`` or a
        ``dask.distributed.Client``: block by block of slices on that cluster (see
        :func:`bayescm.analysis.disparity`).

    Returns
    -------
    Alerts
        ``table`` per (series, window), ``first`` alert per series, ``plot()``.

    Notes
    -----
    :math:`p_w = \frac{1}{D}\sum_d \mathbf 1[m_w^{(d)} < \tau]` over the :math:`D`
    draws, with :math:`m_w^{(d)}` the metric of window :math:`w`'s pooled
    :math:`\theta^{(d)}_w = \sum_{s \in w} n_s \theta^{(d)}_s / \sum_{s \in w} n_s`;
    the alert is :math:`\min\{w : p_w \ge \text{prob}\}`.  Testing every window
    at level ``prob`` is a sequence of decisions: on a stable timeline of :math:`W`
    windows the chance of a false alert somewhere grows with :math:`W`; raise
    ``prob`` for long timelines.

    Examples
    --------
    >>> import numpy as np, pandas as pd, bayescm as bcm
    >>> rng = np.random.default_rng(0)
    >>> t = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 70, 3000), "D")
    >>> y = rng.random(3000) < 0.4
    >>> tpr = np.where(t >= pd.Timestamp("2024-02-12"), 0.65, 0.9)  # drop in week 7
    >>> pred = np.where(y, rng.random(3000) < tpr, rng.random(3000) < 0.1)
    >>> cm = bcm.ConfusionMatrix.from_predictions(y, pred, time=t, window="7D")
    >>> fit = bcm.fit(bcm.models.three_beta(cm), sampler="exact", random_seed=1)
    >>> a = bcm.analysis.alerts(fit, "tpr", threshold=0.8, prob=0.9)
    >>> a.first.iloc[0].strftime("%Y-%m-%d")
    '2024-02-12'
    """
    hdi_prob = check_hdi_prob(hdi_prob)
    if isinstance(prob, bool) or not 0 < prob < 1:
        raise ValueError(f"prob must lie in (0, 1), got {prob!r}.")
    if not isinstance(threshold, int | float | np.integer | np.floating) or isinstance(
            threshold, bool) or not np.isfinite(threshold):
        raise ValueError(f"threshold must be a finite number, got {threshold!r}.")
    found = registry.get(metric)
    key, (low, high) = found.key, found.bounds
    if not low < threshold < high:
        # at or beyond a bound the breach probability is 0 or 1 whatever the data
        raise ValueError(f"threshold must lie strictly inside the range of {key} "
                         f"({low:g}, {high:g}), got {threshold!r}; e.g. 0.8 for a rate.")
    higher = registry.higher_is_better(key)
    fit = sliced_fit(idata)
    if window not in fit.levels.columns:
        raise ValueError(f"The slices have no time level {window!r} (levels: "
                         f"{list(fit.levels.columns)}); slice by time with "
                         "ConfusionMatrix.from_predictions(..., time=..., window='7D').")
    series_by = as_levels(by) or ()
    groups = group_slices(fit.levels, fit.n, [*series_by, window])
    flat = np.empty((len(groups.labels), *fit.theta.shape[:2]))
    with client_for(scheduler) as client:  # a chunk of draws at a time (or on Dask)
        for ch, dr, pooled, _ in pooled_chunks(fit, groups, sums=False, chunk=chunk,
                                               client=client):
            cells = xr.DataArray(pooled, dims=("draw", GROUP, "cell"),
                                 coords={"cell": list(CELLS)})
            flat[:, ch, dr] = registry.compute(cells, [key])[key].values.T
    flat = flat.reshape(len(groups.labels), -1)
    frame = groups.frame.reset_index(drop=True)
    breach = flat < threshold if higher else flat > threshold
    lo, hi = hdi(flat, hdi_prob, axis=-1)
    empty = frame["empty"].to_numpy()
    table = pd.DataFrame({
        "series": ["|".join(f"{b}={frame.loc[i, b]}" for b in series_by)
                   for i in range(len(frame))],
        "window": frame[window].to_numpy(), "n": frame["n"].to_numpy(), "empty": empty,
        "median": np.where(empty, np.nan, np.nanmedian(np.where(empty[:, None], 0, flat), 1)),
        "hdi_lower": lo, "hdi_upper": hi,
        "p_breach": np.where(empty, np.nan, breach.mean(axis=1))})
    table = table.sort_values(["series", "window"], kind="stable").reset_index(drop=True)
    hit = table["p_breach"].to_numpy() >= prob  # NaN (empty) compares False: never alerts
    table["alert"] = pd.Series(hit).groupby(table["series"]).cummax().to_numpy()
    first = table[hit].groupby("series")["window"].first().reindex(table["series"].unique())
    return Alerts(metric=key, threshold=float(threshold), prob=float(prob), window=window,
                  by=series_by or None, hdi_prob=hdi_prob, table=table, first=first,
                  higher_is_better=higher)
