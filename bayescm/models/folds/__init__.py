"""Hierarchical rates across cross-validation folds: binary and K-class.

The family's folder holds the binary builder and hooks (``model``), the K-class model
(``multiclass``: Dirichlet rows around a mean row, integrated out as
Dirichlet-multinomials) and the spread of the fold rates with its default prior
(``spread``); the model card is ``models/folds/README.md`` in the repository.
"""

from bayescm.models.folds.model import Folds, folds
from bayescm.models.folds.multiclass import FoldsMulticlass, folds_multiclass

__all__ = ["Folds", "FoldsMulticlass", "folds", "folds_multiclass"]
