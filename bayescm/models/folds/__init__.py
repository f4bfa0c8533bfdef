"""Hierarchical Beta-binomial rates across cross-validation folds.

The family's folder holds its builder and hooks (``model``); the model card is
``models/folds/README.md`` in the repository.
"""

from bayescm.models.folds.model import Folds, folds

__all__ = ["Folds", "folds"]
