"""Classical and Bayesian intervals side by side, and their coverage."""

from bayescm.intervals.core import METHODS, binomial, coverage, coverage_composite, metric_interval

__all__ = ["METHODS", "binomial", "coverage", "coverage_composite", "metric_interval"]
