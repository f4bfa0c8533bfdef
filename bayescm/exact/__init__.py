"""Exact answers where a closed form exists: no Markov chains, no sampling error.

* :mod:`bayescm.exact.pmf` -- :func:`predictive_pmf`, :func:`metric_pmf`: the exact
  beta-binomial posterior predictive distributions of a future confusion matrix and of
  any metric of it (Lovell, Miller, Capra & Bradley, "Never mind the metrics -- what
  about the uncertainty?", 2022);
* :mod:`bayescm.exact.posterior` -- :func:`exact_posterior`: i.i.d. draws of a
  conjugate family's posterior as lazy, chunked xarray (Dask when asked).
"""

from bayescm.exact.pmf import PREDICTIVE_MODELS, metric_pmf, predictive_pmf
from bayescm.exact.posterior import exact_posterior

__all__ = ["PREDICTIVE_MODELS", "exact_posterior", "metric_pmf", "predictive_pmf"]
