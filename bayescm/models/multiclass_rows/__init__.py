"""K classes: class prevalence and one Dirichlet row per actual class.

The family's folder holds its builder and hooks (``model``) and its private parts
(``twin``); the model card is ``models/multiclass_rows/README.md`` in the repository.
"""

from bayescm.models.multiclass_rows.model import MulticlassFamily, MulticlassRows, multiclass_rows

__all__ = ["MulticlassFamily", "MulticlassRows", "multiclass_rows"]
