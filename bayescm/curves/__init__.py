"""ROC and precision-recall curves with pointwise credible bands and area posteriors.

* :mod:`bayescm.curves.sweep` -- :func:`roc`, :func:`precision_recall`: the threshold
  sweep, per-threshold Beta bands and the Bayesian bootstrap of the area (the math is
  in that module's docstring);
* :mod:`bayescm.curves.curve` -- :class:`Curve`, the result (table, figure, HTML).
"""

from bayescm.curves.curve import Curve
from bayescm.curves.sweep import precision_recall, roc

__all__ = ["Curve", "precision_recall", "roc"]
