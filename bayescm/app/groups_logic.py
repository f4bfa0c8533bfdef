r"""The Upload page's pooled analysis of grouped cases: one classifier, many groups.

A CSV with a group column (or several: every intersection is a slice) gives each
group's exact, unpooled posterior at once (:mod:`bayescm.app.upload_logic`).  Small
groups make those wide; *Pool the groups* fits the partially pooled hierarchy
:func:`bayescm.models.groups` with NUTS, in a
:class:`~bayescm.app.nolabels_logic.FitJob` (a child process, progress by stage,
cancel), and shows, per group,

* TPR and TNR: the pooled posterior mean and HDI next to the unpooled exact ones
  (:func:`bayescm.summary` of the fit, :func:`bayescm.summary_exact` of the counts);
* the disparity of TPR across groups, :func:`bayescm.analysis.disparity` with the
  page's threshold :math:`t`: the gap :math:`\max_g \mathrm{TPR}_g - \min_g
  \mathrm{TPR}_g` with P(gap > t), and each group against the rest.

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
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any

import pandas as pd

import bayescm as bcm
from bayescm.app.nolabels_logic import FitJob
from bayescm.app.pages_common import field

__all__ = ["PooledResult", "job", "prepare", "summarise"]

METRICS = ("tpr", "tnr")
COLUMNS = ("mean", "hdi_lower", "hdi_upper")
HDI_PROB = 0.95


@dataclasses.dataclass(frozen=True)
class PooledResult:
    """What the page shows after the pooled fit.

    Attributes
    ----------
    path
        The fit as NetCDF.
    pooled
        Index (slice, metric); columns ``pooled_mean``, ``pooled_hdi_lower``,
        ``pooled_hdi_upper`` (the hierarchy) and ``exact_mean``, ``exact_hdi_lower``,
        ``exact_hdi_upper`` (each group alone, exact).
    disparity
        :meth:`bayescm.analysis.Disparity.to_frame` of TPR at the threshold.
    """

    path: Path
    pooled: pd.DataFrame
    disparity: pd.DataFrame
    converged: bool
    convergence: str
    threshold: float


def prepare(cm: bcm.ConfusionMatrix, state: Any) -> functools.partial:
    """Check the options against the library before any sampling and return the
    model's builder (picklable, for the child process).

    The threshold is checked by :func:`bayescm.analysis.disparity` itself (on a few
    exact draws of the unpooled slices, milliseconds), the model by building it, so
    that each gets the library's message next to its field.
    """
    with field("threshold"):
        few = bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=20,
                      random_seed=state.seed)
        bcm.analysis.disparity(few, "tpr", threshold=state.threshold)
    with field("group"):
        bcm.models.groups(cm)
    return functools.partial(bcm.models.groups, cm)


def summarise(idata: Any, path: Path, *, exact: pd.DataFrame,
              threshold: float) -> PooledResult:
    """The pooled table (next to ``exact``, :func:`bayescm.summary_exact` of the same
    matrix), the disparity table and the convergence verdict of a fit."""
    pooled = bcm.summary(idata, metrics=list(METRICS), hdi_prob=HDI_PROB)
    both = pd.concat({"pooled": pooled[list(COLUMNS)],
                      "exact": exact.loc[pooled.index, list(COLUMNS)]}, axis=1)
    both.columns = [f"{a}_{b}" for a, b in both.columns]
    disparity = bcm.analysis.disparity(idata, "tpr", threshold=threshold,
                                       hdi_prob=HDI_PROB).to_frame()
    report = bcm.check_convergence(idata)
    return PooledResult(Path(path), both, disparity, report.ok, report.message(), threshold)


def job(cm: bcm.ConfusionMatrix, exact: pd.DataFrame, state: Any, *,
        directory: str | Path | None = None) -> FitJob:
    """A (not yet started) fit of the partially pooled model of ``cm`` with the
    sampler options of ``state`` (draws, tune, chains, seed, threshold); the fit's
    NetCDF goes to ``directory`` (default: a new temporary one).

    Typical use (the tests run it)::

        j = job(cm, exact, UploadState(draws=200, tune=200, chains=2)).start()
        while j.poll().state == "running":
            time.sleep(0.2)
        result = j.result()          # a PooledResult
    """
    return FitJob(state, model=prepare(cm, state),
                  summary=functools.partial(summarise, exact=exact, threshold=state.threshold),
                  directory=directory)
