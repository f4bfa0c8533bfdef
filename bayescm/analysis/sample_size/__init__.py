"""How large a test set must be: simulated HDI widths against the number of cases.

* :mod:`bayescm.analysis.sample_size.planning` -- :func:`sample_size` and the normal
  rule :func:`sample_size_rule` (Tötsch & Hoffmann, "Classifier uncertainty: evidence,
  potential impact, and probabilistic treatment", 2021);
* :mod:`bayescm.analysis.sample_size.binary` and
  :mod:`bayescm.analysis.sample_size.multiclass` -- the simulations;
* :mod:`bayescm.analysis.sample_size.items` -- benchmark items: clusters, runs and
  paired differences (:class:`ItemsDesign`, :class:`ItemsPlan`);
* :mod:`bayescm.analysis.sample_size.result` -- :class:`SampleSizePlan` and the search
  over :math:`N`.
"""

from bayescm.analysis.sample_size.items import ItemsDesign, ItemsPlan
from bayescm.analysis.sample_size.planning import (
    SampleSizePlan,
    beta_hdi,
    sample_size,
    sample_size_rule,
)

__all__ = ["ItemsDesign", "ItemsPlan", "SampleSizePlan", "beta_hdi", "sample_size",
           "sample_size_rule"]
