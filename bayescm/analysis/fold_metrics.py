r"""Per-fold metric values of two algorithms: the data of fold and data-set comparisons.

:func:`bayescm.analysis.compare_folds` and :func:`bayescm.analysis.compare_datasets`
start from one confusion matrix per fold (binary :class:`bayescm.ConfusionMatrix`
or K-class :class:`bayescm.MulticlassConfusionMatrix` batches, frames or lists of
them) and need, for any registered metric,

* the plug-in value of every fold, :math:`m(\hat\theta_j)` with
  :math:`\hat\theta_j = n_j / N_j` (what baycomp is given as "scores"), and
* exact posterior draws of every fold's metric, :math:`m(\theta_j)` with
  :math:`\theta_j` drawn from the fold's closed-form posterior (the default
  conjugate model of the data: three-Beta for binary matrices, Dirichlet rows for K
  classes, each with its default priors), through :func:`bayescm.exact_posterior`.

This module does both, and the checks the comparisons share.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from bayescm import idata as idata_mod
from bayescm import metrics as registry
from bayescm.data.confusion import CELLS, ConfusionMatrix
from bayescm.data.multiclass import MulticlassConfusionMatrix
from bayescm.exact import exact_posterior

__all__ = ["as_folds", "check_pair", "metric_key", "plug_in_values", "posterior_values"]

Folds = ConfusionMatrix | MulticlassConfusionMatrix


def as_folds(cms: Any, what: str = "cms") -> Folds:
    """A batch of per-fold confusion matrices from a batch, a frame or a list.

    Accepted: a ``ConfusionMatrix`` or ``MulticlassConfusionMatrix`` batch (one matrix
    per fold); a DataFrame with columns ``tp, fn, fp, tn`` (one row per fold) or a
    K-class frame (:meth:`bayescm.MulticlassConfusionMatrix.from_frame`); a list of
    single matrices, of ``{"tp": ..., ...}`` dicts or of K×K arrays.
    """
    if isinstance(cms, ConfusionMatrix | MulticlassConfusionMatrix):
        return cms
    if isinstance(cms, pd.DataFrame):
        if set(CELLS) <= set(cms.columns):
            return ConfusionMatrix.from_frame(cms)
        return MulticlassConfusionMatrix.from_frame(cms)
    if isinstance(cms, Sequence) and not isinstance(cms, str) and len(cms) > 0:
        items = list(cms)
        names = [f"fold{i}" for i in range(len(items))]
        if all(isinstance(c, ConfusionMatrix) for c in items):
            cells = {c: [int(np.sum(m.cell(c))) for m in items] for c in CELLS}
            return ConfusionMatrix(**cells, classifier=names)
        if all(isinstance(c, Mapping) for c in items):
            return ConfusionMatrix(**{c: [m[c] for m in items] for c in CELLS},
                                   classifier=names)
        if all(isinstance(c, MulticlassConfusionMatrix) for c in items):
            labels = items[0].labels
            if any(c.labels != labels for c in items):
                raise ValueError(f"{what}: the folds' K-class matrices have different labels; "
                                 "give every fold the same labels (labels=...).")
            return MulticlassConfusionMatrix(np.concatenate([c.counts for c in items]),
                                             labels, classifier=names)
        arrays = [np.asarray(c) for c in items]
        if all(a.ndim == 2 and a.shape[0] == a.shape[1] for a in arrays):
            return MulticlassConfusionMatrix(np.stack(arrays), classifier=names)
    raise TypeError(f"{what} must hold one confusion matrix per fold: a ConfusionMatrix or "
                    "MulticlassConfusionMatrix batch, a DataFrame of counts, or a list of "
                    f"matrices; got {type(cms).__name__}.")


def check_pair(cms_a: Folds, cms_b: Folds, runs: int) -> int:
    """Check that A and B have the same kind and number of folds; return folds per run."""
    if type(cms_a) is not type(cms_b):
        raise TypeError("cms_a and cms_b must both be binary or both K-class confusion matrices.")
    if isinstance(cms_a, MulticlassConfusionMatrix) and cms_a.labels != cms_b.labels:
        raise ValueError(f"cms_a and cms_b have different class labels ({cms_a.labels} and "
                         f"{cms_b.labels}); both algorithms must be tested on the same classes.")
    if len(cms_a) != len(cms_b):
        raise ValueError(f"cms_a has {len(cms_a)} folds and cms_b {len(cms_b)}: give one matrix "
                         "per fold for each algorithm, runs × folds in the same order.")
    if not isinstance(runs, int | np.integer) or isinstance(runs, bool) or runs < 1:
        raise ValueError(f"runs must be a positive integer (repetitions of k-fold "
                         f"cross-validation), got {runs!r}.")
    n = len(cms_a)
    if n % runs:
        raise ValueError(f"{n} matrices per algorithm cannot be {runs} runs of the same number "
                         "of folds: give runs × folds matrices, run by run.")
    k = n // runs
    if k < 2:
        raise ValueError(
            f"{n} matrices in {runs} run(s) is one fold per run: the correlated t-test's "
            "correlation is rho = 1/k (the test fraction of k-fold cross-validation), and "
            "with k = 1 it is 1, which makes the variance of the mean infinite.  Give the "
            "per-fold matrices of k >= 2 folds (runs × folds, runs=number of repetitions), "
            "not one matrix per run.")
    return k


def metric_key(cms: Folds, metric: str) -> tuple[str, bool]:
    """The canonical key of ``metric`` for these tables, and whether higher is better."""
    reg = registry.registry_for(cms)
    try:
        key = reg.key(metric)
    except KeyError as err:
        raise ValueError(f"Unknown metric {metric!r} for {reg.kind} confusion matrices: "
                         f"use one of {', '.join(reg.names()[:12])}, ...") from err
    if reg.per_class(key):
        raise ValueError(f"{metric!r} has one value per class; compare one number per fold: "
                         f"an average such as '{key}_macro' or '{key}_weighted'.")
    return key, bool(reg.higher_is_better(key))


def check_rope(rope: Any) -> float:
    """The half-width of the region of practical equivalence, checked: a finite number
    >= 0 in metric units (TypeError for a non-number, ValueError otherwise)."""
    if not isinstance(rope, int | float | np.integer | np.floating) or isinstance(rope, bool):
        raise TypeError(f"rope must be a number >= 0 (in metric units), got {rope!r}.")
    if not np.isfinite(rope) or rope < 0:
        raise ValueError(f"rope must be a finite number >= 0 (half-width of the region of "
                         f"practical equivalence), got {rope!r}.")
    return float(rope)


def plug_in_values(cms: Folds, key: str, what: str = "cms",
                   instead: str = "use plug_in=False, whose posterior draws are always "
                                  "defined, or another metric") -> np.ndarray:
    """The plug-in metric of every fold (float array, one value per fold); ``instead``:
    what the error on an undefined value advises."""
    reg = registry.registry_for(cms)
    values = np.asarray(reg.compute(cms.to_xarray(), [key])[key].values, dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        folds = [cms.classifiers[i] for i in np.flatnonzero(bad)]
        raise ValueError(f"{what}: {key!r} is undefined on fold(s) {folds} (a zero "
                         f"denominator, e.g. no predicted positives); {instead}.")
    return values


def posterior_values(cms: Folds, key: str, draws: int, seed: int | None) -> np.ndarray:
    """Exact posterior draws of every fold's metric, shape ``(draws, folds)``."""
    import warnings

    with warnings.catch_warnings():
        # the default prior is the documented choice here; small folds are expected
        warnings.filterwarnings("ignore", message=".*prior weighs too much.*")
        post = idata_mod.group(exact_posterior(cms, draws=int(draws), chains=1,
                                               metrics=[key], random_seed=seed),
                               "posterior")[key]
    values = post.transpose("chain", "draw", ...).values.reshape(int(draws), len(cms))
    return np.asarray(values, dtype=float)
