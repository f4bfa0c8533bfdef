"""K classes: one Dirichlet over the K² cells.

The family's folder holds its builder and hooks (``model``); the model card is
``models/multiclass_cells/README.md`` in the repository.
"""

from bayescm.models.multiclass_cells.model import MulticlassCells, default_priors, multiclass_cells

__all__ = ["MulticlassCells", "default_priors", "multiclass_cells"]
