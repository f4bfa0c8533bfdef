"""Decisions under uncertainty: metric uncertainty, deception risk, comparisons,
leaderboards, deployment prevalence and sample-size planning.

Every function takes an InferenceData from :func:`bayescm.fit` or a
:class:`bayescm.ConfusionMatrix` (three-Beta posterior drawn exactly) and returns
tidy pandas or xarray results.
"""

from bayescm.analysis.compare import Comparison, compare, compare_paired, paired_counts
from bayescm.analysis.prevalence import at_prevalence
from bayescm.analysis.uncertainty import deception, metric_uncertainty

__all__ = [
    "Comparison",
    "at_prevalence",
    "compare",
    "compare_paired",
    "deception",
    "metric_uncertainty",
    "paired_counts",
]
