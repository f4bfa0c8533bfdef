r"""Probabilistic leaderboards: how sure is each rank?

A leaderboard ranks submissions by a metric measured on a finite test set.  Each
metric is uncertain, so the ranks are too: Tötsch & Hoffmann (2021, §2D) drew
synthetic leaderboards from the accuracy posteriors of the top Kaggle submissions
and counted how often each submission landed at each position.  The winner of the
Recursion Cellular Image Classification challenge was best with probability 0.93,
and weighing the prize money by the rank probabilities paid submissions outside
the top three.

:func:`leaderboard` does this for a batch of classifiers (a fitted InferenceData,
binary or multiclass, a :class:`~bayescm.ConfusionMatrix` or a
:class:`~bayescm.MulticlassConfusionMatrix`); :func:`leaderboard_from_accuracy`
(:mod:`bayescm.analysis.leaderboard_accuracy`) for a published table of accuracies
in percent plus the test-set size.  This module turns each input into joint metric
draws; :mod:`bayescm.analysis.ranks` ranks them.  Both are fully vectorised over
draws and submissions: 10,000 submissions x 4,000 draws take a few seconds
(``benchmarks/bench_leaderboard.py``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm import idata as idata_mod
from bayescm import metrics as registry
from bayescm.analysis import ranks_dask
from bayescm.analysis.leaderboard_accuracy import leaderboard_from_accuracy
from bayescm.analysis.ranks import (
    DENSE_MAX,
    TOP_DEFAULT,
    Leaderboard,
    build_leaderboard,
    check_options,
    default_chunk,
    need_two,
    sample_values,
)
from bayescm.data.confusion import CELLS, ConfusionMatrix, unit_of
from bayescm.data.multiclass import MulticlassConfusionMatrix
from bayescm.family import default_family
from bayescm.inference.posterior import (
    class_index,
    missing_metric,
    multiclass_theta_sampler,
    select_class,
)
from bayescm.metrics import LOWER_IS_BETTER
from bayescm.scheduling import check_scheduler, client_for
from bayescm.stats import SAMPLE_DIMS, draw_conjugate

if TYPE_CHECKING:
    import arviz as az

__all__ = ["DECISIVE", "DENSE_MAX", "LOWER_IS_BETTER", "TOP_DEFAULT", "Leaderboard",
           "NotedLeaderboard", "SameCasesWarning", "leaderboard", "leaderboard_from_accuracy"]

DECISIVE = 0.95
"""P(first better than second) from which the order of the top two counts as settled:
the pairing check of :func:`leaderboard` warns when pairing could settle it."""


class SameCasesWarning(UserWarning):
    """Classifiers scored on one test set ranked as independent, where pairing their
    predictions could change the conclusion about the top two."""


@dataclass(frozen=True, eq=False, repr=False)
class NotedLeaderboard(Leaderboard):
    """A :class:`Leaderboard` with a note on how to read it (``note``: shown under its
    header and recorded in ``to_frame().attrs["note"]``)."""

    note: str = ""

    def _header(self) -> str:
        return super()._header() + (f"\nNote: {self.note}" if self.note else "")

    def to_frame(self) -> pd.DataFrame:
        frame = super().to_frame()
        frame.attrs["note"] = self.note
        return frame


def leaderboard(
    data: az.InferenceData | ConfusionMatrix | MulticlassConfusionMatrix | pd.DataFrame,
    metric: str = "acc",
    *,
    label: Hashable | None = None,
    hdi_prob: float = 0.95,
    prizes: Sequence[float] | None = None,
    draws: int = 4000,
    random_seed: int | None = None,
    chunk: int | None = None,
    top: int | None = None,
    scheduler: Any = None,
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
        * a :class:`~bayescm.MulticlassConfusionMatrix` batch: ``draws`` i.i.d. draws
          of :math:`\theta` from the ``multiclass_rows`` posterior with flat
          priors, :math:`\pi \sim \mathrm{Dirichlet}(1 + r)` and
          :math:`\rho_a \sim \mathrm{Dirichlet}(1 + C_{a\cdot})`, the metric through
          the multiclass registry (as ``bcm.fit(bcm.models.multiclass_rows(mc))``).
    metric
        Key or alias of the registry that answers for the data
        (:func:`bayescm.metrics.registry_for`): binary keys
        (``bayescm.metrics.names()``) or multiclass ones
        (``bayescm.metrics.multiclass_names()``: ``"f1_macro"``, ``"acc"``,
        ``"kappa"``, per-class ``"f1"`` with ``label=``, ...).
    label
        The class of a per-class multiclass metric (one of the data's labels);
        only for those.
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
    scheduler
        Where the draws are made and ranked: None (this process, two threads),
        ``"dask"`` (the active ``dask.distributed.Client``, else a local cluster of
        threads started for this call) or a ``dask.distributed.Client``.  On Dask the
        draws form an array chunked along draws (a rank needs every submission of one
        draw): each chunk is drawn and ranked on a worker and only its rank counts come
        back (:mod:`bayescm.analysis.ranks_dask`).  Same seed, ``draws`` and ``chunk``:
        the same leaderboard, bit for bit.

    Returns
    -------
    Leaderboard
        ``.rank_probabilities`` and ``.summary``, both ordered by posterior mean,
        best first; readable in a terminal and in Jupyter.

    Raises
    ------
    KeyError
        Unknown metric or class label, or a metric missing from the InferenceData
        posterior.
    ValueError
        Fewer than two submissions, no ``classifier`` dim, NaN draws, invalid prizes,
        ``hdi_prob``, ``draws``, ``chunk`` or ``top``; a per-class metric without
        ``label`` or ``label`` for another metric.
    TypeError
        Unsupported ``data``.

    Notes
    -----
    Classifiers scored on one test set (confusion matrices with the same class sizes)
    are ranked as if their posteriors were independent: their errors on the shared
    cases are not in the counts.  Such a leaderboard is a :class:`NotedLeaderboard`
    whose ``note`` says so and points to
    :func:`~bayescm.analysis.compare_paired`, which models the joint outcomes of two
    classifiers' predictions.  Positively correlated errors make the independent
    ranking too timid; for binary matrices a :class:`SameCasesWarning` is raised when
    this could change the conclusion about the top two: P(first better than second)
    is below :data:`DECISIVE` (0.95) as ranked, but at least that under the most
    favourable pairing of the same counts (each class's correct cases shared as far as
    possible), i.e. the order of the top two hinges on the pairing.

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

    Three 3-class classifiers, by macro-F1 and by the recall of one class:

    >>> mc = bcm.MulticlassConfusionMatrix(
    ...     [[[50, 3, 2], [4, 40, 6], [1, 2, 30]], [[45, 8, 2], [6, 38, 6], [3, 2, 28]],
    ...      [[40, 9, 6], [9, 33, 8], [4, 5, 24]]],
    ...     labels=["cat", "dog", "bird"], classifier=["a", "b", "c"])
    >>> list(leaderboard(mc, "f1_macro", random_seed=1).summary.index)
    ['a', 'b', 'c']
    >>> leaderboard(mc, "recall", label="bird", random_seed=1).label
    "True positive rate (sensitivity, recall), one vs rest of class 'bird'"
    """
    counts = isinstance(data, ConfusionMatrix | MulticlassConfusionMatrix)
    # the registry that answers for the data (a DataFrame holds binary counts)
    reg = (registry.registry_for(data) if counts or _is_fit(data)
           else registry.BINARY)
    chosen = reg.get(metric)
    key = chosen.key
    if isinstance(data, pd.DataFrame):
        cols = {str(c).lower() for c in data.columns}
        if not set(CELLS) <= cols:
            raise TypeError(
                "A DataFrame needs columns tp, fn, fp, tn (one row per classifier); for a "
                "table of accuracies in percent use leaderboard_from_accuracy(acc, n)."
            )
        data = ConfusionMatrix.from_frame(data)
    opts = check_options(hdi_prob, prizes, draws, chunk, top)
    check_scheduler(scheduler)
    with client_for(scheduler) as client:
        values, names, unit = _values(data, key, label, draws, opts["chunk"], random_seed,
                                      lazy=client is not None)
        board = build_leaderboard(values, names, chosen, unit=unit, seed=random_seed,
                                  class_label=label, client=client, **opts)
    note = _same_cases(data, unit)
    if note is None:
        return board
    if isinstance(data, ConfusionMatrix) and isinstance(values, np.ndarray):
        _check_pairing(data, values, names, key, draws, random_seed)
    return NotedLeaderboard(**{f.name: getattr(board, f.name) for f in fields(board)},
                            note=note)


def _same_cases(data: Any, unit: str) -> str | None:
    """The note for classifiers with the same class sizes (one test set), else None."""
    if unit != "classifier" or not isinstance(data, ConfusionMatrix | MulticlassConfusionMatrix):
        return None
    sizes = (np.stack([data.n_pos, data.n_neg], axis=1) if isinstance(data, ConfusionMatrix)
             else data.counts.sum(axis=2))
    if not (sizes == sizes[0]).all():
        return None
    return ("the classifiers have the same class sizes, as on one test set; they are ranked "
            "as independent, their errors on shared cases unknown to the counts. With the "
            "predictions, bcm.analysis.compare_paired(y_true, pred_a, pred_b, metric) "
            "compares two of them on the same cases.")


def _check_pairing(cm: ConfusionMatrix, values: np.ndarray, names: list[str], key: str,
                   draws: int, seed: int | None) -> None:
    """Warn when the most favourable pairing of the top two's counts settles an order
    that the independent ranking leaves open (:data:`DECISIVE`)."""
    from bayescm.analysis.paired import paired_binary

    higher = registry.higher_is_better(key)
    with np.errstate(all="ignore"):
        means = np.nanmean(np.where(np.isfinite(values), values, np.nan), axis=0)
    order = np.argsort(-means if higher else means, kind="stable")
    i, j = (int(x) for x in order[:2])
    diff = values[:, i] - values[:, j]
    independent = float(np.mean(diff > 0 if higher else diff < 0))
    if independent >= DECISIVE:
        return
    rows = {}
    for row, cell, total in (("positive", "tp", cm.n_pos), ("negative", "tn", cm.n_neg)):
        a, b = float(cm.cell(cell)[i]), float(cm.cell(cell)[j])
        both = min(a, b)  # each class's correct cases shared as far as the counts allow
        rows[row] = [both, a - both, b - both, float(total[i]) - max(a, b)]
    counts = pd.DataFrame.from_dict(rows, orient="index", columns=["11", "10", "01", "00"])
    paired = paired_binary(counts, key, draws=max(int(draws), 1000), random_seed=seed,
                           names=(names[i], names[j])).probability
    if paired >= DECISIVE:
        warnings.warn(
            f"{names[i]!r} and {names[j]!r} lead the leaderboard by {key}, scored on one test "
            f"set but ranked as independent: P({names[i]} better) = {independent:.3f}. If "
            f"their errors fall on the same cases it may be as high as {paired:.3f}: the "
            "order of the top two depends on how their predictions pair up. Compare them on "
            "the cases with bcm.analysis.compare_paired(y_true, pred_a, pred_b, "
            f"{key!r}).", SameCasesWarning, stacklevel=3)


leaderboard.from_accuracy = leaderboard_from_accuracy  # type: ignore[attr-defined]


# -- inputs --------------------------------------------------------------------------

def _values(data: Any, key: str, label: Hashable | None, draws: int, chunk: int | None,
            seed: int | None, *, lazy: bool) -> tuple[Any, list[str], str]:
    """The ``(draws, submissions)`` joint draws of ``key`` (a Dask array when ``lazy``),
    the submissions' names and their dim."""
    sample = ranks_dask.lazy_values if lazy else sample_values
    unit = "classifier"
    if isinstance(data, ConfusionMatrix):
        unit = data.unit  # a sliced matrix ranks its slices
        class_index(None, label, key)  # binary metrics have no classes: no label
        names = list(data.classifiers)
        need_two(len(names))
        sampler = _confusion_sampler(data, key)
        values = sample(sampler, draws, len(names), chunk, seed)
    elif isinstance(data, MulticlassConfusionMatrix):
        names = list(data.classifiers)
        need_two(len(names))
        sampler = _multiclass_sampler(data, key, label)
        # a draw holds K x K cells per submission: size the chunks by cells, not draws
        size = chunk or default_chunk(len(names) * data.n_classes**2)
        values = sample(sampler, draws, len(names), size, seed)
    elif _is_fit(data):
        values, names, unit = _posterior_values(data, key, label)
    elif isinstance(data, Mapping):
        raise TypeError(
            "For a dict of accuracies in percent use leaderboard_from_accuracy(acc, n); "
            "leaderboard() takes an InferenceData, a ConfusionMatrix or a "
            "MulticlassConfusionMatrix."
        )
    else:
        raise TypeError(
            "leaderboard() takes an arviz.InferenceData from bayescm.fit (pass the whole "
            "InferenceData and choose the metric with metric=...), a bayescm.ConfusionMatrix, "
            "a bayescm.MulticlassConfusionMatrix or a DataFrame of counts; got "
            f"{type(data).__name__}."
        )
    return values, names, unit


def _is_fit(data: Any) -> bool:
    """An InferenceData, or the DataTree of ``fit_closed_form`` / ``exact_posterior``."""
    return idata_mod.is_inference_data(data) or isinstance(data, xr.DataTree)


def _posterior_values(idata: az.InferenceData, key: str, label: Hashable | None
                      ) -> tuple[np.ndarray, list[str], str]:
    post = idata_mod.group(idata, "posterior")
    if key not in post:
        raise missing_metric(post, key)
    da = select_class(post[key], label, key)
    unit = unit_of(da)
    if unit is None:
        raise ValueError(
            f"Posterior variable {key!r} has dims {da.dims} and no 'classifier' dim: a "
            "leaderboard ranks a batch of classifiers (fit one model to a ConfusionMatrix batch)."
        )
    extra = [d for d in da.dims if d not in (*SAMPLE_DIMS, unit)]
    if extra:
        raise ValueError(
            f"Posterior variable {key!r} has extra dims {extra}; select one value of each, "
            f"e.g. idata.sel({extra[0]}=...), before ranking classifiers."
        )
    names = [str(c) for c in da[unit].values]
    need_two(len(names))
    values = np.ascontiguousarray(
        da.transpose(*SAMPLE_DIMS, unit).values.reshape(-1, len(names)),
        dtype=np.float64,
    )
    return values, names, unit


def _confusion_sampler(
    cm: ConfusionMatrix, key: str
) -> Callable[[np.random.Generator, int], np.ndarray]:
    params = default_family("binary").rate_posteriors({c: cm.cell(c) for c in CELLS})
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


def _multiclass_sampler(
    cm: MulticlassConfusionMatrix, key: str, label: Hashable | None
) -> Callable[[np.random.Generator, int], np.ndarray]:
    """(size, classifiers) draws of ``key`` (class ``label``'s for a per-class metric)
    from the flat-prior posterior the analysis gives a MulticlassConfusionMatrix."""
    reg = registry.registry_for(cm)
    i = class_index(list(cm.labels) if reg.per_class(key) else None, label, key)
    draw_theta = multiclass_theta_sampler(cm)

    def sampler(rng: np.random.Generator, size: int) -> np.ndarray:
        da = reg.compute(draw_theta(rng, size), [key])[key]
        if i is not None:
            da = da.isel({"class": i})
        return da.transpose(*SAMPLE_DIMS, "classifier").values.reshape(size, -1)

    return sampler
