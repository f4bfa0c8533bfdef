"""Hui-Walter / Branscum latent-class models: classifiers without a reference standard.

The family's folder holds its builder and hooks (``model``) and its private parts
(``identifiability``, ``kernel``, ``probabilities``, ``truncated``, ``twin``); the
model card is ``models/hui_walter/README.md`` in the repository.
"""

from bayescm.models.hui_walter.identifiability import (
    Identifiability,
    IdentifiabilityError,
    IdentifiabilityWarning,
    check_identifiability,
)
from bayescm.models.hui_walter.model import HuiWalter, hui_walter
from bayescm.models.hui_walter.truncated import PriorTruncationWarning

__all__ = [
    "HuiWalter",
    "Identifiability",
    "IdentifiabilityError",
    "IdentifiabilityWarning",
    "PriorTruncationWarning",
    "check_identifiability",
    "hui_walter",
]
