r"""The Upload page's pooled analysis of grouped cases: one classifier, many groups.

A CSV with a group column (or several: every intersection is a slice) gives each
group's exact, unpooled posterior at once (:mod:`bayescm.app.upload_logic`).  Small
groups make those wide; *Pool the groups* fits the partially pooled hierarchy
:func:`bayescm.models.groups` with NUTS, in a
:class:`~bayescm.app.nolabels_logic.FitJob` (a child process, progress by stage,
cancel), and shows, for the disparity measure the reader chose (:func:`measure`),

* per group, the metrics the measure involves: the pooled posterior mean and HDI next
  to the unpooled exact ones (:func:`bayescm.summary` of the fit,
  :func:`bayescm.summary_exact` of the counts);
* the measure's rows of :func:`bayescm.analysis.disparity` with the page's threshold
  :math:`t` -- P(measure > t), and each group against the rest.

The measures (per posterior draw, :math:`m_g` a metric of group :math:`g`):

================================  ==================================================
measure                           per draw
================================  ==================================================
a metric key (``tpr``, ``ppv``,   its largest gap :math:`\max_g m_g - \min_g m_g`
``acc``, ...; the registry's)
``equalized_odds``                :math:`\max(\Delta_{TPR}, \Delta_{FPR})`
``demographic_parity``            the largest gap of the predicted-positive rate
                                  :math:`\theta_{tp} + \theta_{fp}` (``bias``)
================================  ==================================================

The last two are the posterior of fairlearn's ``equalized_odds_difference`` and
``demographic_parity_difference`` (their plug-in values are the same numbers).  The
measure and the threshold only change what is read from the fit: :func:`resummarise`
reads a shown fit again for new ones, without sampling.

Examples
--------
>>> import bayescm as bcm
>>> from bayescm.app.upload_logic import UploadState
>>> cm = bcm.ConfusionMatrix.from_predictions([1, 1, 0, 0], [1, 0, 0, 1],
...                                           groups={"site": ["a", "b", "a", "b"]})
>>> prepare(cm, UploadState(threshold=-1))
Traceback (most recent call last):
...
bayescm.app.pages_common.InputError: threshold must be a finite number >= 0, got -1.
>>> measure("Equalized odds").metrics
('tpr', 'fpr')
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any

import pandas as pd

import bayescm as bcm
from bayescm.app.fitjob import check_memory, check_sampler
from bayescm.app.nolabels_logic import FitJob
from bayescm.app.pages_common import InputError, field, message_of
from bayescm.app.upload_logic import SUMMARY_DRAWS

__all__ = ["FAIRNESS", "Measure", "PooledResult", "check", "exact_table", "job", "measure",
           "prepare", "resummarise", "summarise"]

COLUMNS = ("mean", "hdi_lower", "hdi_upper")
HDI_PROB = 0.95
FAIRNESS: dict[str, dict[str, tuple[str, ...]]] = {
    # measure -> {metric: the overall rows of disparity(idata, metric).to_frame() shown};
    # every metric also shows its "<metric> vs rest" rows
    "equalized_odds": {"tpr": ("equalized odds", "tpr gap", "fpr gap"), "fpr": ()},
    "demographic_parity": {"bias": ("demographic parity",)},
}
"""The fairness measures beyond one metric's gap (names as in
:meth:`bayescm.analysis.Disparity.probability`) and the metrics each involves."""


@dataclasses.dataclass(frozen=True)
class Measure:
    """A disparity measure: its name and, per metric it involves, the overall rows of
    :meth:`bayescm.analysis.Disparity.to_frame` that show it."""

    name: str
    rows: dict[str, tuple[str, ...]]

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metrics the measure involves (registry keys)."""
        return tuple(self.rows)

    def disparities(self, idata: Any, *, threshold: float) -> tuple[Any, ...]:
        """:func:`bayescm.analysis.disparity` of ``idata`` for each metric involved."""
        return tuple(bcm.analysis.disparity(idata, metric, threshold=threshold,
                                            hdi_prob=HDI_PROB) for metric in self.rows)

    def table(self, idata: Any, *, threshold: float) -> pd.DataFrame:
        """The measure's rows of :func:`bayescm.analysis.disparity` of ``idata`` (for
        each metric: the overall rows, then each group against the rest)."""
        return self.frame(self.disparities(idata, threshold=threshold))

    def frame(self, found: tuple[Any, ...]) -> pd.DataFrame:
        """:meth:`table` of disparities already computed (:meth:`disparities`)."""
        return pd.concat([d.to_frame().loc[[*overall, f"{d.metric} vs {d.reference}"]]
                          for d, overall in zip(found, self.rows.values(), strict=True)])


def measure(name: str) -> Measure:
    """The measure called ``name``: ``equalized_odds``, ``demographic_parity`` or a
    metric's key or alias (case and spaces as typed: ``"Equalized odds"``,
    ``"balanced accuracy"``).

    Raises
    ------
    InputError
        For field ``measure``: the registry's message for an unknown metric, and the
        fairness measures' names.
    """
    text = name.strip().lower().replace(" ", "_").replace("-", "_")
    if text in FAIRNESS:
        return Measure(text, FAIRNESS[text])
    try:
        key = bcm.metrics.get(text).key
    except KeyError as err:
        raise InputError("measure", f"{message_of(err)} Or a fairness measure: "
                                    f"{', '.join(FAIRNESS)}.") from None
    return Measure(key, {key: (f"{key} gap",)})


@dataclasses.dataclass(frozen=True)
class PooledResult:
    """What the page shows after the pooled fit.

    Attributes
    ----------
    path
        The fit as NetCDF.
    pooled
        Index (slice, metric) over the measure's metrics; columns ``pooled_mean``,
        ``pooled_hdi_lower``, ``pooled_hdi_upper`` (the hierarchy) and ``exact_mean``,
        ``exact_hdi_lower``, ``exact_hdi_upper`` (each group alone, exact).
    disparity
        :meth:`Measure.table` of the fit at the threshold.
    measure
        The measure's name (:func:`measure`).
    disparities
        The :class:`bayescm.analysis.Disparity` of each metric of the measure (what
        ``disparity`` and :func:`figure` show).
    """

    path: Path
    pooled: pd.DataFrame
    disparity: pd.DataFrame
    converged: bool
    convergence: str
    threshold: float
    measure: str
    disparities: tuple[Any, ...] = ()


def figure(result: PooledResult) -> Any:
    """The library's disparity forests (:func:`bayescm.plots.disparity`) of the pooled
    fit: per metric of the measure, each group minus the rest, the band within the
    threshold shaded (drawn from ``result.disparities``: no file is read).

    Examples
    --------
    >>> import bayescm as bcm
    >>> cm = bcm.ConfusionMatrix.from_predictions(
    ...     [1, 1, 0, 1, 1, 0, 1, 0], [1, 0, 0, 1, 1, 1, 1, 0], groups={"site": list("aabbccdd")})
    >>> fit = bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=100, random_seed=1)
    >>> found = measure("equalized_odds").disparities(fit, threshold=0.1)
    >>> res = PooledResult(Path("fit.nc"), pd.DataFrame(), pd.DataFrame(), True, "", 0.1,
    ...                    "equalized_odds", found)
    >>> [ax.get_xlabel() for ax in figure(res).axes]
    ['tpr minus rest', 'fpr minus rest']
    """
    from matplotlib.figure import Figure

    found = result.disparities
    groups = max(len(d.groups) for d in found)
    longest = max(len(str(g)) for d in found for g in d.groups.index)
    each, left = 1.5 + 0.3 * groups, 0.3 + 0.075 * longest  # inches: room for the labels
    fig = Figure(figsize=(6.4, each * len(found)))
    fig.subplots_adjust(left=left / 6.4, right=1 - 0.2 / 6.4, hspace=0.9 / each,
                        top=1 - 0.4 / (each * len(found)), bottom=0.55 / (each * len(found)))
    for ax, d in zip(fig.subplots(len(found), 1, squeeze=False)[:, 0], found, strict=True):
        bcm.plots.disparity(d, ax=ax)
    return fig


def check(cm: bcm.ConfusionMatrix, state: Any) -> Measure:
    """The chosen :class:`Measure`, once the threshold and the measure have passed
    :func:`bayescm.analysis.disparity` itself (on a few exact draws of the unpooled
    slices, milliseconds), each with the library's message for its field."""
    with field("threshold"):
        few = bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=20,
                      random_seed=state.seed)
        bcm.analysis.disparity(few, "tpr", threshold=state.threshold)
    with field("measure"):
        chosen = measure(state.measure)
        chosen.table(few, threshold=state.threshold)
    return chosen


def prepare(cm: bcm.ConfusionMatrix, state: Any) -> tuple[functools.partial, Measure]:
    """Check the options against the library before any sampling (:func:`check`, and
    the model by building it); return the model's builder (picklable, for the child
    process) and the chosen :class:`Measure`.

    Examples
    --------
    >>> from bayescm.app.upload_logic import UploadState
    >>> cm = bcm.ConfusionMatrix.from_predictions(
    ...     [1, 1, 0, 0, 1, 0, 1, 0], [1, 0, 0, 1, 1, 0, 1, 1], groups={"site": list("abababab")})
    >>> builder, chosen = prepare(cm, UploadState(measure="Equalized odds"))
    >>> chosen.metrics, builder.func is bcm.models.groups, builder.args == (cm,)
    (('tpr', 'fpr'), True, True)
    """
    chosen = check(cm, state)
    check_sampler(state)
    with field("group"):
        model = bcm.models.groups(cm)
    check_memory(model, state)  # the fit's memory estimate, before any fit starts
    return functools.partial(bcm.models.groups, cm), chosen


def exact_table(cm: bcm.ConfusionMatrix, chosen: Measure, state: Any) -> pd.DataFrame:
    """:func:`bayescm.summary_exact` of the measure's metrics with the Upload page's
    draws and seed (the numbers of its per-group table)."""
    return bcm.summary_exact(cm, metrics=list(chosen.metrics), draws=SUMMARY_DRAWS,
                             random_seed=state.seed, hdi_prob=HDI_PROB)


def summarise(idata: Any, path: Path, *, exact: pd.DataFrame, chosen: Measure,
              threshold: float) -> PooledResult:
    """The pooled table (next to ``exact``, :func:`bayescm.summary_exact` of the same
    matrix and metrics), the measure's disparity table and the convergence verdict of
    a fit.

    Examples
    --------
    Summarising reads any fit of the sliced matrix alike: here the exact posterior of
    the groups taken one by one stands in for the pooled NUTS fit (milliseconds).

    >>> from bayescm.app.upload_logic import UploadState
    >>> cm = bcm.ConfusionMatrix.from_predictions(
    ...     [1, 1, 0, 0, 1, 0, 1, 0], [1, 0, 0, 1, 1, 0, 1, 1], groups={"site": list("abababab")})
    >>> state = UploadState(measure="tpr", threshold=0.1)
    >>> chosen = measure(state.measure)
    >>> fit = bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=500, chains=2,
    ...               random_seed=2)
    >>> result = summarise(fit, "fit.nc", exact=exact_table(cm, chosen, state),
    ...                    chosen=chosen, threshold=0.1)
    >>> list(result.pooled.index), result.converged
    ([('site=a', 'tpr'), ('site=b', 'tpr')], True)
    >>> gap = bcm.analysis.disparity(fit, "tpr", threshold=0.1).to_frame()
    >>> bool(result.disparity.loc[("tpr gap", ""), "p_exceeds"]
    ...      == gap.loc[("tpr gap", ""), "p_exceeds"])       # the library's disparity
    True
    """
    pooled = bcm.summary(idata, metrics=list(chosen.metrics), hdi_prob=HDI_PROB)
    both = pd.concat({"pooled": pooled[list(COLUMNS)],
                      "exact": exact.loc[pooled.index, list(COLUMNS)]}, axis=1)
    both.columns = [f"{a}_{b}" for a, b in both.columns]
    report = bcm.check_convergence(idata)
    found = chosen.disparities(idata, threshold=threshold)
    return PooledResult(Path(path), both, chosen.frame(found), report.ok, report.message(),
                        threshold, chosen.name, found)


def resummarise(result: PooledResult, cm: bcm.ConfusionMatrix, state: Any) -> PooledResult:
    """The fit of ``result`` summarised for the measure and threshold of ``state``:
    another measure needs no new sampling, only the fit's file and the counts."""
    chosen = check(cm, state)
    return summarise(bcm.load(result.path), result.path,
                     exact=exact_table(cm, chosen, state), chosen=chosen,
                     threshold=state.threshold)


def job(cm: bcm.ConfusionMatrix, state: Any, *,
        directory: str | Path | None = None) -> FitJob:
    """A (not yet started) fit of the partially pooled model of ``cm`` with the
    options of ``state`` (draws, tune, chains, seed, threshold, measure); the fit's
    NetCDF goes to ``directory`` (default: a new temporary one).

    Typical use (the tests run it)::

        j = job(cm, UploadState(draws=200, tune=200, chains=2)).start()
        while j.poll().state == "running":
            time.sleep(0.2)
        result = j.result()          # a PooledResult
    """
    model, chosen = prepare(cm, state)
    return FitJob(state, model=model,
                  summary=functools.partial(summarise, exact=exact_table(cm, chosen, state),
                                            chosen=chosen, threshold=state.threshold),
                  directory=directory)
