"""Classical and Bayesian intervals side by side, and how often they cover the truth.

* :mod:`bayescm.intervals.binomial` -- :func:`binomial`: a rate's interval by seven
  methods (Wald, Wilson, Agresti-Coull, Clopper-Pearson, Jeffreys, Beta HDI and
  equal-tailed), and :func:`metric_interval` for a fitted model's metrics;
* :mod:`bayescm.intervals.coverage` -- :func:`coverage` (exact or simulated) and
  :func:`coverage_composite` (composite metrics, by simulation).
"""

from bayescm.intervals.binomial import METHODS, binomial, metric_interval
from bayescm.intervals.coverage import coverage, coverage_composite

__all__ = ["METHODS", "binomial", "coverage", "coverage_composite", "metric_interval"]
