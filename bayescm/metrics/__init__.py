"""The one registry of metric formulas: binary, per class, averaged and overall.

* :mod:`bayescm.metrics.binary` -- every metric of a binary confusion matrix as a
  function of the named cells ``tp, fn, fp, tn`` (:data:`REGISTRY`, :func:`compute`).
* :mod:`bayescm.metrics.multiclass` -- the same metrics one-vs-rest per class, their
  macro, weighted and micro averages, and the overall multiclass metrics, from a K×K
  table with dims ``actual`` × ``predicted`` (:data:`MULTICLASS_REGISTRY`,
  :func:`compute_multiclass`).

Every formula is a ratio of terms of the same degree, so counts give plug-in values
and posterior draws of the cell probabilities give the metric's posterior.
"""

from bayescm.metrics.binary import (
    ALIASES,
    LOWER_IS_BETTER,
    REGISTRY,
    Metric,
    cells_from_rates,
    compute,
    div,
    evaluate,
    fbeta,
    get,
    higher_is_better,
    names,
    plug_in,
    resolve,
)

__all__ = [
    "ALIASES",
    "LOWER_IS_BETTER",
    "REGISTRY",
    "Metric",
    "cells_from_rates",
    "compute",
    "div",
    "evaluate",
    "fbeta",
    "get",
    "higher_is_better",
    "names",
    "plug_in",
    "resolve",
]
