"""Decisions under uncertainty: metric uncertainty, deception risk, comparisons,
leaderboards, deployment prevalence, sample-size planning and prior sensitivity.

Every function takes an InferenceData from :func:`bayescm.fit` or a
:class:`bayescm.ConfusionMatrix` (three-Beta posterior drawn exactly) and returns
tidy pandas or xarray results.
"""

from bayescm.analysis.compare import Comparison, compare
from bayescm.analysis.leaderboard import Leaderboard, leaderboard, leaderboard_from_accuracy
from bayescm.analysis.paired import compare_paired, paired_counts, paired_table
from bayescm.analysis.prevalence import at_prevalence
from bayescm.analysis.sample_size import SampleSizePlan, beta_hdi, sample_size, sample_size_rule
from bayescm.analysis.sensitivity import PriorSensitivity, prior_sensitivity
from bayescm.analysis.uncertainty import deception, metric_uncertainty

__all__ = [
    "Comparison",
    "Leaderboard",
    "PriorSensitivity",
    "SampleSizePlan",
    "at_prevalence",
    "beta_hdi",
    "compare",
    "compare_paired",
    "deception",
    "leaderboard",
    "leaderboard_from_accuracy",
    "metric_uncertainty",
    "paired_counts",
    "paired_table",
    "prior_sensitivity",
    "sample_size",
    "sample_size_rule",
]
