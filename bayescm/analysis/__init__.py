"""Decisions under uncertainty: metric uncertainty, deception risk, comparisons,
leaderboards, deployment prevalence, sample-size planning, prior sensitivity, and
for sliced fits disparity posteriors and monitoring alerts.

Every function takes an InferenceData from :func:`bayescm.fit` or a
:class:`bayescm.ConfusionMatrix` (three-Beta posterior drawn exactly) and returns
tidy pandas or xarray results.
"""

from bayescm.analysis.alerts import Alerts, alerts
from bayescm.analysis.compare import Comparison, compare
from bayescm.analysis.compare_datasets import DatasetComparison, compare_datasets
from bayescm.analysis.compare_folds import FoldComparison, compare_folds
from bayescm.analysis.disparity import Disparity, disparity
from bayescm.analysis.item_classes import ItemClasses, item_classes
from bayescm.analysis.items_intervals import benchmark_intervals
from bayescm.analysis.items_simulate import simulate_items
from bayescm.analysis.items_ties import tied_sets
from bayescm.analysis.judged import JudgedEvaluation, judge_assisted
from bayescm.analysis.leaderboard import Leaderboard, leaderboard, leaderboard_from_accuracy
from bayescm.analysis.paired import compare_paired, paired_counts, paired_table
from bayescm.analysis.prevalence import at_prevalence
from bayescm.analysis.sample_size import SampleSizePlan, beta_hdi, sample_size, sample_size_rule
from bayescm.analysis.sensitivity import PriorSensitivity, prior_sensitivity
from bayescm.analysis.uncertainty import deception, metric_uncertainty

__all__ = [
    "Alerts",
    "Comparison",
    "DatasetComparison",
    "Disparity",
    "FoldComparison",
    "ItemClasses",
    "JudgedEvaluation",
    "Leaderboard",
    "PriorSensitivity",
    "SampleSizePlan",
    "alerts",
    "at_prevalence",
    "benchmark_intervals",
    "beta_hdi",
    "compare",
    "compare_datasets",
    "compare_folds",
    "compare_paired",
    "deception",
    "disparity",
    "item_classes",
    "judge_assisted",
    "leaderboard",
    "leaderboard_from_accuracy",
    "metric_uncertainty",
    "paired_counts",
    "paired_table",
    "prior_sensitivity",
    "sample_size",
    "sample_size_rule",
    "simulate_items",
    "tied_sets",
]
