r"""Rank probabilities from joint metric draws: the Leaderboard and its computation.

Given a ``(draws, submissions)`` matrix of joint posterior draws of one metric, every
row is a synthetic leaderboard (Tötsch & Hoffmann 2021, §2D).  This module ranks the
rows, counts how often each submission holds each rank, and summarises the result as
a :class:`Leaderboard`; where the draws come from (a fit, confusion matrices, published
accuracies) is the business of :func:`bayescm.analysis.leaderboard` and
:func:`bayescm.analysis.leaderboard_from_accuracy`.  Everything is vectorised over
draws and submissions and runs chunk by chunk on two threads.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from bayescm import metrics as registry
from bayescm.analysis.ranks_kernels import (
    default_chunk,
    rank_counts,
    sample_values,
    summaries,
)
from bayescm.stats import check_hdi_prob

__all__ = ["DENSE_MAX", "TOP_DEFAULT", "Leaderboard", "build_leaderboard", "check_options",
           "default_chunk", "need_two", "rank_counts", "sample_values", "summaries"]

DENSE_MAX = 2000
"""Up to this many submissions the full K x K rank-probability table is kept by default."""

TOP_DEFAULT = 100
"""Ranks kept by default (columns 1..100) when there are more than ``DENSE_MAX`` submissions."""


@dataclass(frozen=True, eq=False)
class Leaderboard:
    """Rank probabilities and per-submission summaries of a probabilistic leaderboard.

    Attributes
    ----------
    rank_probabilities
        DataFrame, index = submissions ordered by posterior mean (best first),
        columns = ranks ``1..top``: entry ``(i, r)`` is :math:`P(R_i = r)`.  Every
        column sums to 1; rows sum to 1 only when all ranks are kept (``top == K``).
        float64, or float32 when the table has more than ``2000**2`` entries.
    summary
        DataFrame, same index: ``mean, hdi_lower, hdi_upper, p_best, expected_rank``
        and ``prize_share`` when prizes were given.  ``p_best`` and
        ``expected_rank`` are computed for every submission whatever ``top`` is.
    metric, label
        Metric key and readable name (naming the class of a per-class metric).
    higher_is_better
        Direction of the ranking (rank 1 has the largest value when True).
    n_draws
        Joint posterior draws behind every probability.
    hdi_prob
        Mass of the highest-density interval in ``summary``.
    prizes
        Prize per rank (rank 1 first), or None.
    class_label
        The class of a per-class multiclass metric (``leaderboard(..., label=)``), or
        None.
    """

    rank_probabilities: pd.DataFrame
    summary: pd.DataFrame
    metric: str
    label: str
    higher_is_better: bool
    n_draws: int
    hdi_prob: float
    prizes: tuple[float, ...] | None = None
    class_label: Hashable | None = None

    @property
    def top(self) -> int:
        """Number of ranks (columns) kept in ``rank_probabilities``."""
        return self.rank_probabilities.shape[1]

    def _header(self) -> str:
        k = len(self.summary)
        way = "higher" if self.higher_is_better else "lower"
        kept = "all ranks" if self.top == k else f"ranks 1..{self.top} of {k}"
        return (f"Leaderboard of {k} submissions by {self.label} ({self.metric}, {way} is "
                f"better): {self.n_draws} joint posterior draws, {self.hdi_prob:.0%} HDI, "
                f"{kept} kept")

    def to_frame(self) -> pd.DataFrame:
        """One row per submission, best first: ``summary``'s columns, then
        ``p_rank_1, p_rank_2, ...`` (the kept columns of ``rank_probabilities``).

        ``attrs`` record metric, direction, ``n_draws``, ``hdi_prob`` and ``prizes``
        (and ``class_label`` for a per-class metric).
        """
        ranks = self.rank_probabilities.add_prefix("p_rank_")
        ranks.columns = [str(c) for c in ranks.columns]
        frame = pd.concat([self.summary, ranks], axis=1)
        frame.attrs = {"metric": self.metric, "higher_is_better": self.higher_is_better,
                       "n_draws": self.n_draws, "hdi_prob": self.hdi_prob,
                       "prizes": self.prizes}
        if self.class_label is not None:
            frame.attrs["class_label"] = self.class_label
        return frame

    def __repr__(self) -> str:
        rows = 10
        table = self.summary.head(rows).to_string(float_format="{:.4g}".format)
        text = f"{self._header()}\n{table}"
        if len(self.summary) > rows:
            text += f"\n... {len(self.summary) - rows} more"
        return text

    def _repr_html_(self) -> str:
        rows, cols = 10, 10
        probs = self.rank_probabilities.iloc[:rows, :cols]
        more = len(self.summary) - rows
        cut = probs.shape != self.rank_probabilities.shape
        return (f"<p><b>{self._header()}</b></p>"
                + self.summary.head(rows).to_html(float_format="{:.4g}".format)
                + (f"<p>... {more} more</p>" if more > 0 else "")
                + "<p>Rank probabilities P(rank = r)"
                + (f" (first {rows} rows, {cols} ranks)" if cut else "") + "</p>"
                + probs.to_html(float_format="{:.3f}".format))


# -- options ---------------------------------------------------------------------


def need_two(k: int) -> None:
    if k < 2:
        raise ValueError(f"A leaderboard needs at least 2 submissions, got {k}.")


def check_options(
    hdi_prob: float,
    prizes: Sequence[float] | None,
    draws: int,
    chunk: int | None,
    top: int | None,
) -> dict[str, Any]:
    check_hdi_prob(hdi_prob)
    for name, value in (("draws", draws), ("chunk", chunk), ("top", top)):
        if value is None and name != "draws":
            continue
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {value!r}.")
    prize_arr = None
    if prizes is not None:
        try:
            prize_arr = np.asarray(prizes, dtype=float)
        except (TypeError, ValueError) as err:
            raise ValueError(f"prizes must be a sequence of numbers, got {prizes!r}.") from err
        if prize_arr.ndim != 1 or prize_arr.size == 0:
            raise ValueError(
                "prizes must be a non-empty 1-d sequence: the prize for rank 1, 2, ... "
                "(or None for no prizes)."
            )
        for r, c in enumerate(prize_arr, start=1):
            if not np.isfinite(c) or c < 0:
                raise ValueError(
                    f"The prize for rank {r} is {c:g}; prizes must be finite and >= 0."
                )
    return {"hdi_prob": float(hdi_prob), "prizes": prize_arr, "chunk": chunk, "top": top}


# -- computation -----------------------------------------------------------------


def build_leaderboard(
    values: np.ndarray,
    names: list[str],
    metric: Any,
    *,
    unit: str,
    seed: int | None,
    hdi_prob: float,
    prizes: np.ndarray | None,
    chunk: int | None,
    top: int | None,
    class_label: Hashable | None = None,
    client: Any = None,
) -> Leaderboard:
    """The Leaderboard of ``values`` (draws x submissions, float64, joint draws).

    ``metric`` is the registry's metric object (binary or multiclass: key, readable
    label, direction); ``class_label`` the class of a per-class metric.  With a
    ``dask.distributed`` ``client`` (``values`` NumPy or Dask) the statistics are
    computed on its cluster, chunk of draws by chunk of draws
    (:mod:`bayescm.analysis.ranks_dask`).
    """
    key = metric.key
    s_total, k = values.shape
    higher = registry.higher_is_better(metric)
    if top is None:
        top = k if k <= DENSE_MAX else min(k, TOP_DEFAULT)
    width = min(k, max(top, 0 if prizes is None else prizes.size))
    chunk = chunk or default_chunk(k)
    if client is not None:
        from bayescm.analysis.ranks_dask import statistics

        nan, mean, lower, upper, counts, rank_sum = statistics(
            values, higher=higher, width=width, chunk=chunk, seed=seed, hdi_prob=hdi_prob,
            client=client)
    else:
        nan = np.isnan(values).any(axis=0)
    if nan.any():
        bad = [names[i] for i in np.flatnonzero(nan)[:5]]
        raise ValueError(
            f"Metric {key!r} has NaN draws for {bad}: it is undefined there (e.g. a zero "
            "denominator); rank by a metric defined for every draw."
        )
    if prizes is not None and prizes.size > k:
        warnings.warn(
            f"{prizes.size} prizes for {k} submissions: prizes for ranks beyond {k} are never "
            "awarded.", UserWarning, stacklevel=3)
    if client is None:
        mean, lower, upper = summaries(values, hdi_prob)
        counts, rank_sum = rank_counts(values, higher, width, chunk, seed)

    order = np.argsort(-mean if higher else mean, kind="stable")
    index = pd.Index([names[i] for i in order], name=unit)
    dtype = np.float64 if k * width <= DENSE_MAX**2 else np.float32
    probs = counts[order].astype(dtype) / dtype(s_total)
    table = {
        "mean": mean[order], "hdi_lower": lower[order], "hdi_upper": upper[order],
        "p_best": counts[order, 0] / s_total, "expected_rank": rank_sum[order] / s_total,
    }
    if prizes is not None:
        n_paid = min(prizes.size, k)
        table["prize_share"] = counts[order, :n_paid].astype(np.float64) @ prizes[:n_paid] / s_total
    summary = pd.DataFrame(table, index=index)
    summary.attrs["hdi_prob"] = hdi_prob
    rank_probs = pd.DataFrame(probs, index=index, columns=pd.RangeIndex(1, width + 1, name="rank"))
    return Leaderboard(
        rank_probabilities=rank_probs, summary=summary, metric=key,
        label=metric.label if class_label is None else f"{metric.label} of class {class_label!r}",
        higher_is_better=higher, n_draws=s_total, hdi_prob=hdi_prob,
        prizes=None if prizes is None else tuple(float(c) for c in prizes),
        class_label=class_label,
    )
