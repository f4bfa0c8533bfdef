"""K classes: class prevalence and one Dirichlet row per actual class.

The family's folder holds its builder and hooks (``model``), its private parts
(``twin``) and the check that warns when a prior outweighs a class's data (``weight``,
:class:`PriorWeightWarning`, shared with multiclass_cells); the model card is
``models/multiclass_rows/README.md`` in the repository.
"""

from bayescm.models.multiclass_rows.model import (
    MulticlassFamily,
    MulticlassRows,
    default_priors,
    multiclass_rows,
)
from bayescm.models.multiclass_rows.weight import PriorWeightWarning

__all__ = ["MulticlassFamily", "MulticlassRows", "PriorWeightWarning", "default_priors",
           "multiclass_rows"]
