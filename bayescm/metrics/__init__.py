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
    REGISTRY,
    Metric,
    cells_from_rates,
    div,
    evaluate,
    fbeta,
    get,
    names,
    plug_in,
    resolve,
)
from bayescm.metrics.binary import LOWER_IS_BETTER as BINARY_LOWER_IS_BETTER
from bayescm.metrics.kinds import (
    BINARY,
    MULTICLASS,
    Registry,
    compute,
    is_multiclass_dims,
    registry_for,
)
from bayescm.metrics.multiclass import (
    AVERAGED,
    MULTICLASS_ALIASES,
    MULTICLASS_LOWER_IS_BETTER,
    MULTICLASS_REGISTRY,
    OVERALL,
    MulticlassMetric,
    compute_multiclass,
    evaluate_multiclass,
    get_multiclass,
    higher_is_better,
    multiclass_names,
    resolve_multiclass,
)

LOWER_IS_BETTER: frozenset[str] = BINARY_LOWER_IS_BETTER | MULTICLASS_LOWER_IS_BETTER
"""Binary and multiclass metrics for which a smaller value is better."""

__all__ = [
    "ALIASES",
    "AVERAGED",
    "BINARY",
    "LOWER_IS_BETTER",
    "MULTICLASS",
    "MULTICLASS_ALIASES",
    "MULTICLASS_LOWER_IS_BETTER",
    "MULTICLASS_REGISTRY",
    "OVERALL",
    "REGISTRY",
    "Metric",
    "MulticlassMetric",
    "Registry",
    "cells_from_rates",
    "compute",
    "compute_multiclass",
    "div",
    "evaluate",
    "evaluate_multiclass",
    "fbeta",
    "get",
    "get_multiclass",
    "higher_is_better",
    "is_multiclass_dims",
    "multiclass_names",
    "names",
    "plug_in",
    "registry_for",
    "resolve",
    "resolve_multiclass",
]
