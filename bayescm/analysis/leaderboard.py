r"""Probabilistic leaderboards: how sure is each rank?

A leaderboard ranks submissions by a metric measured on a finite test set.  Each
metric is uncertain, so the ranks are too: Tötsch & Hoffmann (2021, §2D) drew
synthetic leaderboards from the accuracy posteriors of the top Kaggle submissions
and counted how often each submission landed at each position.  The winner of the
Recursion Cellular Image Classification challenge was best with probability 0.93,
and weighing the prize money by the rank probabilities paid submissions outside
the top three.

:func:`leaderboard` does this for a batch of classifiers (a fitted InferenceData
or a :class:`~bayescm.ConfusionMatrix`); :func:`leaderboard_from_accuracy` for a
published table of accuracies in percent plus the test-set size.  Both are fully
vectorised over draws and submissions: 10,000 submissions x 4,000 draws take a
few seconds (``benchmarks/bench_leaderboard.py``).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from bayescm import idata as idata_mod
from bayescm import metrics as registry
from bayescm.analysis.posterior import three_beta_params
from bayescm.data import CELLS, ConfusionMatrix
from bayescm.metrics import LOWER_IS_BETTER
from bayescm.stats import SAMPLE_DIMS, check_hdi_prob, draw_conjugate, hdi

if TYPE_CHECKING:
    import arviz as az

__all__ = ["DENSE_MAX", "LOWER_IS_BETTER", "TOP_DEFAULT", "Leaderboard", "leaderboard",
           "leaderboard_from_accuracy"]

DENSE_MAX = 2000
"""Up to this many submissions the full K x K rank-probability table is kept by default."""

TOP_DEFAULT = 100
"""Ranks kept by default (columns 1..100) when there are more than ``DENSE_MAX`` submissions."""

_CHUNK_CELLS = 2**22  # draws x submissions per chunk (~34 MB per float64 array)
_BINCOUNT_CELLS = 2**23  # submissions x ranks per bincount call (~67 MB of int64)
_WORKERS = 2


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
        Metric key and readable name.
    higher_is_better
        Direction of the ranking (rank 1 has the largest value when True).
    n_draws
        Joint posterior draws behind every probability.
    hdi_prob
        Mass of the highest-density interval in ``summary``.
    prizes
        Prize per rank (rank 1 first), or None.
    """

    rank_probabilities: pd.DataFrame
    summary: pd.DataFrame
    metric: str
    label: str
    higher_is_better: bool
    n_draws: int
    hdi_prob: float
    prizes: tuple[float, ...] | None = None

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

        ``attrs`` record metric, direction, ``n_draws``, ``hdi_prob`` and ``prizes``.
        """
        ranks = self.rank_probabilities.add_prefix("p_rank_")
        ranks.columns = [str(c) for c in ranks.columns]
        frame = pd.concat([self.summary, ranks], axis=1)
        frame.attrs = {"metric": self.metric, "higher_is_better": self.higher_is_better,
                       "n_draws": self.n_draws, "hdi_prob": self.hdi_prob,
                       "prizes": self.prizes}
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


def leaderboard(
    data: az.InferenceData | ConfusionMatrix | pd.DataFrame,
    metric: str = "acc",
    *,
    hdi_prob: float = 0.95,
    prizes: Sequence[float] | None = None,
    draws: int = 4000,
    random_seed: int | None = None,
    chunk: int | None = None,
    top: int | None = None,
) -> Leaderboard:
    r"""Probabilistic leaderboard: the probability of every submission to hold every rank.

    Each joint posterior draw :math:`s = 1..S` of the metric :math:`m_i^{(s)}` of all
    submissions :math:`i = 1..K` is a synthetic leaderboard.  The rank of :math:`i` in
    it is

    .. math::

        R_i^{(s)} = 1 + \#\{j \ne i : m_j^{(s)} \succ m_i^{(s)}\}
        \quad(+\text{random tie-break}),

    where :math:`\succ` is "larger" (or "smaller" for the lower-is-better metrics
    ``fpr, fnr, fdr, for, err, lr_neg``: :data:`bayescm.metrics.LOWER_IS_BETTER`).
    The rank probability is the share of draws in which :math:`i` is
    :math:`r`-th, and the expected prize weighs the prizes :math:`c_r` by it
    (Tötsch & Hoffmann 2021, §2D):

    .. math::

        \hat P(R_i = r) = \frac1S \sum_{s=1}^S \mathbf 1[R_i^{(s)} = r],\qquad
        \hat E[R_i] = \frac1S \sum_s R_i^{(s)} = \sum_r r\, \hat P(R_i = r),\qquad
        \text{prize}_i = \sum_{r=1}^{P} \hat P(R_i = r)\, c_r .

    Each probability is a binomial proportion with Monte Carlo standard error
    :math:`\sqrt{p(1-p)/S}` for independent draws (use the effective sample size
    for MCMC draws).

    Parameters
    ----------
    data
        * an ``arviz.InferenceData`` from :func:`bayescm.fit` whose posterior holds
          ``metric`` with dims ``(chain, draw, classifier)``: all its draws are used
          (``draws`` is ignored);
        * a :class:`~bayescm.ConfusionMatrix` batch (or a DataFrame with columns
          ``tp, fn, fp, tn``, index = names): ``draws`` i.i.d. draws from the
          three-Beta posterior with Beta(1, 1) priors.  ``tpr ~ Beta(tp+1, fn+1)``,
          ``tnr ~ Beta(tn+1, fp+1)``, ``prevalence ~ Beta(tp+fn+1, fp+tn+1)`` and
          ``fpr, fnr, ba, bm`` (functions of one or both) are drawn directly; every
          other metric, accuracy included, from
          :math:`\theta = (\mathrm{TPR}\,\phi, (1-\mathrm{TPR})\phi,
          (1-\mathrm{TNR})(1-\phi), \mathrm{TNR}(1-\phi))` through the metric
          registry, so the result agrees with ``bcm.fit(bcm.models.three_beta(cm))``.
          (Tötsch's Kaggle treatment, accuracy ~ Beta(k+1, n-k+1), is
          :func:`leaderboard_from_accuracy`.)
    metric
        Registry key or alias (``bayescm.metrics.names()``).
    hdi_prob
        Mass of the highest-density interval reported in ``summary``.
    prizes
        Prize for ranks 1, 2, ... (finite, non-negative).  Adds column
        ``prize_share`` (the expected prize).  Ranks are always kept at least up to
        ``len(prizes)``.
    draws
        Posterior draws for count inputs: i.i.d. draws from the closed form in one
        chain, so ``draws`` is the total (for an InferenceData every chain's draws are
        used, ``fit``'s ``draws`` per chain times its chains).
    random_seed
        Seed of the posterior draws and of the tie-breaking; results are reproducible
        for the same seed, ``draws`` and ``chunk``.
    chunk
        Draws processed at once (default: about 4 million draws x submissions,
        ~34 MB per array; two chunks are in flight).  Lower it to save memory.
    top
        Ranks kept in ``rank_probabilities`` (columns ``1..top``).  Default: all when
        there are at most 2,000 submissions, else 100 (a dense 10,000 x 10,000 table
        would hold 10^8 numbers).  ``p_best`` and ``expected_rank`` are exact for every
        submission whatever ``top`` is.

    Returns
    -------
    Leaderboard
        ``.rank_probabilities`` and ``.summary``, both ordered by posterior mean,
        best first; readable in a terminal and in Jupyter.

    Raises
    ------
    KeyError
        Unknown metric, or a metric missing from the InferenceData posterior.
    ValueError
        Fewer than two submissions, no ``classifier`` dim, NaN draws, invalid prizes,
        ``hdi_prob``, ``draws``, ``chunk`` or ``top``.
    TypeError
        Unsupported ``data``.

    Notes
    -----
    Ties (two submissions with exactly the same value in one draw: discrete metrics,
    float32 draws of large test sets) are broken **at random**: in the draws that
    contain a tie, submissions are ordered by value and then by a uniform random
    key, so tied submissions share the tied ranks equally in expectation.

    Memory: the ``(draws, K)`` matrix of metric draws is held in float64 (320 MB
    for 4,000 x 10,000); ranks are computed chunk by chunk and counted with
    ``np.bincount`` on ``submission * width + rank``, so the rank table never
    exceeds ``K x top`` entries.

    Examples
    --------
    >>> import bayescm as bcm
    >>> from bayescm.analysis.leaderboard import leaderboard
    >>> cms = bcm.ConfusionMatrix(tp=[45, 40, 30], fn=[5, 10, 20], fp=[3, 4, 9],
    ...                           tn=[47, 46, 41], classifier=["a", "b", "c"])
    >>> board = leaderboard(cms, "ba", prizes=[100, 50], random_seed=1)
    >>> list(board.summary.index)
    ['a', 'b', 'c']
    >>> board.rank_probabilities.shape
    (3, 3)
    >>> round(float(board.summary["prize_share"].sum()), 6)
    150.0
    """
    key = registry.get(metric).key
    if isinstance(data, pd.DataFrame):
        cols = {str(c).lower() for c in data.columns}
        if not set(CELLS) <= cols:
            raise TypeError(
                "A DataFrame needs columns tp, fn, fp, tn (one row per classifier); for a "
                "table of accuracies in percent use leaderboard_from_accuracy(acc, n)."
            )
        data = ConfusionMatrix.from_frame(data)
    opts = _check_options(hdi_prob, prizes, draws, chunk, top)
    if isinstance(data, ConfusionMatrix):
        names = list(data.classifiers)
        _need_two(len(names))
        sampler = _confusion_sampler(data, key)
        values = _sample(sampler, draws, len(names), opts["chunk"], random_seed)
        unit = "classifier"
        seed = random_seed
    elif idata_mod.is_inference_data(data):
        values, names = _posterior_values(data, key)
        unit = "classifier"
        seed = random_seed
    elif isinstance(data, Mapping):
        raise TypeError(
            "For a dict of accuracies in percent use leaderboard_from_accuracy(acc, n); "
            "leaderboard() takes an InferenceData or a ConfusionMatrix."
        )
    else:
        raise TypeError(
            "leaderboard() takes an arviz.InferenceData from bayescm.fit (pass the whole "
            "InferenceData and choose the metric with metric=...), a bayescm.ConfusionMatrix "
            f"or a DataFrame of counts; got {type(data).__name__}."
        )
    return _build(values, names, key, unit=unit, seed=seed, **opts)


def leaderboard_from_accuracy(
    accuracy_percent: Any,
    n: int | Sequence[int],
    names: Sequence[str] | None = None,
    *,
    hdi_prob: float = 0.95,
    prizes: Sequence[float] | None = None,
    draws: int = 4000,
    random_seed: int | None = None,
    chunk: int | None = None,
    top: int | None = None,
) -> Leaderboard:
    r"""Probabilistic leaderboard from published accuracies (percent) and the test-set size.

    The way Tötsch & Hoffmann (2021, §2D) treated a Kaggle private leaderboard: with
    :math:`n` test cases and accuracy :math:`a_i` percent, submission :math:`i` was
    right on :math:`k_i = \mathrm{round}(a_i n / 100)` cases, and with a uniform prior

    .. math::

        \mathrm{ACC}_i \mid k_i \sim \mathrm{Beta}(k_i + 1,\ n - k_i + 1),

    independently across submissions.  Ranks are then counted as in
    :func:`leaderboard` (see there for the estimator and the options).

    Parameters
    ----------
    accuracy_percent
        Accuracies in percent, in ``[0, 100]``: a sequence or array (names from
        ``names``, default ``"s0", "s1", ...``), a pandas Series or a dict (names
        from the index or keys), or a one-column DataFrame (names from the index).
    n
        Test-set size, one for all submissions or one per submission (whole numbers
        >= 1).
    names
        Submission names, overriding those of a Series, dict or DataFrame.
    hdi_prob, prizes, draws, random_seed, chunk, top
        As in :func:`leaderboard`.

    Returns
    -------
    Leaderboard
        For metric ``acc``; index named ``submission``.

    Raises
    ------
    ValueError
        Naming the submission whose accuracy is NaN or outside [0, 100], or whose
        ``n`` is not a whole number >= 1; for fewer than two submissions.

    Examples
    --------
    The top of the Recursion Cellular Image Classification private leaderboard is
    close; with :math:`n = 15123` (the paper's estimate) nobody is safely first:

    >>> from bayescm.analysis.leaderboard import leaderboard_from_accuracy
    >>> board = leaderboard_from_accuracy([97.1, 97.0, 96.5], n=15123,
    ...                                   names=["A", "B", "C"], random_seed=1)
    >>> list(board.summary.index)
    ['A', 'B', 'C']
    >>> 0.6 < board.summary.loc["A", "p_best"] < 0.8
    np.True_
    """
    acc, labels = _accuracies(accuracy_percent, names)
    _need_two(len(labels))
    bad = [labels[i] for i in np.flatnonzero(np.isnan(acc))]
    if bad:
        raise ValueError(f"Accuracy of submission {bad[0]!r} is NaN; drop it or give its value.")
    out = np.flatnonzero((acc < 0) | (acc > 100))
    if out.size:
        i = out[0]
        raise ValueError(
            f"Accuracy of submission {labels[i]!r} is {acc[i]:g}, outside [0, 100]; give "
            "accuracies in percent."
        )
    if (acc <= 1).all():
        warnings.warn(
            "Every accuracy is <= 1 %: did you pass fractions? Accuracies are in percent "
            "(multiply by 100).", UserWarning, stacklevel=2)
    sizes = _sizes(n, labels)
    k = np.rint(acc / 100 * sizes)
    a, b = k + 1, sizes - k + 1
    opts = _check_options(hdi_prob, prizes, draws, chunk, top)

    def sampler(rng: np.random.Generator, size: int) -> np.ndarray:
        return draw_conjugate(rng, (size,), betas={"acc": (a, b)})["acc"]

    values = _sample(sampler, draws, len(labels), opts["chunk"], random_seed)
    return _build(values, labels, "acc", unit="submission", seed=random_seed, **opts)


leaderboard.from_accuracy = leaderboard_from_accuracy  # type: ignore[attr-defined]


# -- inputs --------------------------------------------------------------------------


def _need_two(k: int) -> None:
    if k < 2:
        raise ValueError(f"A leaderboard needs at least 2 submissions, got {k}.")


def _check_options(
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


def _accuracies(values: Any, names: Sequence[str] | None) -> tuple[np.ndarray, list[str]]:
    labels: list[str] | None = None
    if isinstance(values, pd.DataFrame):
        if values.shape[1] != 1:
            raise ValueError(
                f"The DataFrame has {values.shape[1]} columns {list(values.columns)}; pass the "
                "accuracy column alone, e.g. frame['accuracy']."
            )
        values = values.iloc[:, 0]
    if isinstance(values, pd.Series):
        labels, values = [str(i) for i in values.index], values.to_numpy()
    elif isinstance(values, Mapping):
        labels, values = [str(i) for i in values], list(values.values())
    try:
        acc = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError(f"Accuracies must be numbers (percent), got {values!r}.") from err
    if acc.ndim != 1:
        raise ValueError(f"Accuracies must be 1-d (one per submission), got shape {acc.shape}.")
    if names is not None:
        labels = [str(x) for x in ([names] if isinstance(names, str) else names)]
    if labels is None:
        labels = [f"s{i}" for i in range(acc.size)]
    if len(labels) != acc.size:
        raise ValueError(f"{len(labels)} names given for {acc.size} accuracies.")
    if len(set(labels)) != len(labels):
        dup = sorted({x for x in labels if labels.count(x) > 1})[:10]
        raise ValueError(f"Submission names must be unique; repeated: {dup}.")
    return acc, labels


def _sizes(n: Any, labels: list[str]) -> np.ndarray:
    try:
        arr = np.asarray(n, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError(f"n (test-set size) must be a whole number >= 1, got {n!r}.") from err
    if arr.ndim > 1 or (arr.ndim == 1 and arr.size != len(labels)):
        raise ValueError(
            f"n must be one number or one per submission ({len(labels)}), got shape {arr.shape}."
        )
    arr = np.broadcast_to(arr, (len(labels),))
    bad = np.flatnonzero(~np.isfinite(arr) | (arr < 1) | (arr != np.floor(arr)))
    if bad.size:
        i = bad[0]
        raise ValueError(
            f"n of submission {labels[i]!r} is {arr[i]:g}; the test-set size must be a whole "
            "number >= 1."
        )
    return arr.astype(float)


def _posterior_values(idata: az.InferenceData, key: str) -> tuple[np.ndarray, list[str]]:
    post = idata_mod.group(idata, "posterior")
    if key not in post:
        raise KeyError(
            f"Metric {key!r} is not in the posterior; refit with bcm.fit(..., metrics=None) to "
            "compute every metric."
        )
    da = post[key]
    if "classifier" not in da.dims:
        raise ValueError(
            f"Posterior variable {key!r} has dims {da.dims} and no 'classifier' dim: a "
            "leaderboard ranks a batch of classifiers (fit one model to a ConfusionMatrix batch)."
        )
    extra = [d for d in da.dims if d not in (*SAMPLE_DIMS, "classifier")]
    if extra:
        raise ValueError(
            f"Posterior variable {key!r} has extra dims {extra}; select one value of each, "
            f"e.g. idata.sel({extra[0]}=...), before ranking classifiers."
        )
    names = [str(c) for c in da["classifier"].values]
    _need_two(len(names))
    values = np.ascontiguousarray(
        da.transpose(*SAMPLE_DIMS, "classifier").values.reshape(-1, len(names)),
        dtype=np.float64,
    )
    return values, names


def _confusion_sampler(
    cm: ConfusionMatrix, key: str
) -> Callable[[np.random.Generator, int], np.ndarray]:
    params = three_beta_params(*(cm.cell(c).astype(float) for c in CELLS))
    # the rates a metric needs, in the order they are drawn (seeded results depend on it)
    needs = {"prevalence": ("prevalence",), "tpr": ("tpr",), "fnr": ("tpr",), "tnr": ("tnr",),
             "fpr": ("tnr",), "ba": ("tpr", "tnr"), "bm": ("tpr", "tnr")}
    names = needs.get(key, ("tpr", "tnr", "prevalence"))

    def sampler(rng: np.random.Generator, size: int) -> np.ndarray:
        d = draw_conjugate(rng, (size,), betas={n: params[n] for n in names})
        if key in ("prevalence", "tpr", "tnr"):
            return d[key]
        if key in ("fnr", "fpr"):
            rate = d[names[0]]
            return np.subtract(1, rate, out=rate)
        if key == "ba":
            return (d["tpr"] + d["tnr"]) / 2
        if key == "bm":
            return d["tpr"] + d["tnr"] - 1
        cells = registry.cells_from_rates(d["prevalence"], d["tpr"], d["tnr"])
        return np.asarray(registry.evaluate(key, *cells), dtype=np.float64)

    return sampler


# -- computation ---------------------------------------------------------------------


def _default_chunk(k: int) -> int:
    return max(1, _CHUNK_CELLS // k)


def _sample(
    sampler: Callable[[np.random.Generator, int], np.ndarray],
    draws: int,
    k: int,
    chunk: int | None,
    seed: int | None,
) -> np.ndarray:
    """(draws, k) float64 draws, filled chunk by chunk in two threads (one RNG per chunk)."""
    chunk = chunk or _default_chunk(k)
    starts = list(range(0, draws, chunk))
    seeds = np.random.SeedSequence(seed).spawn(len(starts))
    values = np.empty((draws, k), dtype=np.float64)

    def work(i: int) -> None:
        s = starts[i]
        size = min(chunk, draws - s)
        values[s:s + size] = sampler(np.random.default_rng(seeds[i]), size)

    with ThreadPoolExecutor(_WORKERS) as pool:
        list(pool.map(work, range(len(starts))))
    return values


def _rank_counts(
    values: np.ndarray, higher: bool, width: int, chunk: int, seed: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """Counts of (submission, rank) for ranks 1..width and the sum of ranks per submission."""
    s_total, k = values.shape
    counts = np.zeros((k, width), dtype=np.int32)  # counts <= draws < 2**31
    rank_sum = np.zeros(k, dtype=np.int64)
    positions = np.arange(1, k + 1, dtype=np.int32)[None, :]
    block = max(1, min(width, _BINCOUNT_CELLS // k))
    starts = list(range(0, s_total, chunk))
    # a separate stream from the posterior draws' (which used SeedSequence(seed).spawn)
    seeds = np.random.SeedSequence(seed, spawn_key=(2**31,)).spawn(len(starts))
    lock = threading.Lock()

    def work(i: int) -> None:
        x = values[starts[i]:starts[i] + chunk]
        key = np.negative(x) if higher else x  # ascending key: position 0 is rank 1
        order = np.argsort(key, axis=1)
        ordered = np.take_along_axis(key, order, axis=1)
        tied = (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)
        if tied.any():  # random tie-break: by value, then by a uniform random key
            sub = key[tied]
            noise = np.random.default_rng(seeds[i]).random(sub.shape)
            order[tied] = np.lexsort((noise, sub), axis=-1)
        ranks = np.empty(order.shape, dtype=np.int32)
        np.put_along_axis(ranks, order, positions, axis=1)
        part_sum = ranks.sum(axis=0, dtype=np.int64)
        del ranks, ordered, key
        for r0 in range(0, width, block):
            w = min(block, width - r0)
            idx = order[:, r0:r0 + w] * w + np.arange(w)
            part = np.bincount(idx.ravel(), minlength=k * w).reshape(k, w)
            del idx
            with lock:
                counts[:, r0:r0 + w] += part
        with lock:
            rank_sum[:] += part_sum

    with ThreadPoolExecutor(_WORKERS) as pool:
        list(pool.map(work, range(len(starts))))
    return counts, rank_sum


def _summaries(values: np.ndarray, hdi_prob: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and HDI of every column, in blocks of submissions on two threads."""
    s_total, k = values.shape
    mean = np.empty(k)
    lower, upper = np.empty(k), np.empty(k)
    step = max(1, _CHUNK_CELLS // s_total)

    def work(a: int) -> None:
        x = values[:, a:a + step].T
        mean[a:a + step] = x.mean(axis=1)
        lower[a:a + step], upper[a:a + step] = hdi(x, hdi_prob)

    with ThreadPoolExecutor(_WORKERS) as pool:
        list(pool.map(work, range(0, k, step)))
    return mean, lower, upper


def _build(
    values: np.ndarray,
    names: list[str],
    key: str,
    *,
    unit: str,
    seed: int | None,
    hdi_prob: float,
    prizes: np.ndarray | None,
    chunk: int | None,
    top: int | None,
) -> Leaderboard:
    s_total, k = values.shape
    nan = np.isnan(values).any(axis=0)
    if nan.any():
        bad = [names[i] for i in np.flatnonzero(nan)[:5]]
        raise ValueError(
            f"Metric {key!r} has NaN draws for {bad}: it is undefined there (e.g. a zero "
            "denominator); rank by a metric defined for every draw."
        )
    higher = registry.higher_is_better(key)
    if top is None:
        top = k if k <= DENSE_MAX else min(k, TOP_DEFAULT)
    width = min(k, max(top, 0 if prizes is None else prizes.size))
    if prizes is not None and prizes.size > k:
        warnings.warn(
            f"{prizes.size} prizes for {k} submissions: prizes for ranks beyond {k} are never "
            "awarded.", UserWarning, stacklevel=3)
    mean, lower, upper = _summaries(values, hdi_prob)
    counts, rank_sum = _rank_counts(values, higher, width, chunk or _default_chunk(k), seed)

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
    metric = registry.get(key)
    return Leaderboard(
        rank_probabilities=rank_probs, summary=summary, metric=key, label=metric.label,
        higher_is_better=higher, n_draws=s_total, hdi_prob=hdi_prob,
        prizes=None if prizes is None else tuple(float(c) for c in prizes),
    )
