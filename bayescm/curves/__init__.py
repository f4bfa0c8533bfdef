"""ROC and precision-recall curves with credible bands."""

from bayescm.curves.core import Curve, precision_recall, roc

__all__ = ["Curve", "precision_recall", "roc"]
