"""Dawid–Skene latent-class models: many raters, K classes, few or no gold labels.

The family's folder holds its builder and hooks (``model``) and its private parts
(``hierarchical`` for ``pooling="partial"``, ``identifiability``, ``kernel``,
``kernel_partial``, ``labelling``, ``likelihood``, ``twin``); the model card is
``models/dawid_skene/README.md`` in the repository.
"""

from bayescm.models.dawid_skene.hierarchical import default_partial_priors
from bayescm.models.dawid_skene.identifiability import RaterIdentifiability, identify
from bayescm.models.dawid_skene.model import (
    DawidSkene,
    LabelSwitchingWarning,
    dawid_skene,
    default_priors_for,
    label_switching,
)

__all__ = [
    "DawidSkene",
    "LabelSwitchingWarning",
    "RaterIdentifiability",
    "dawid_skene",
    "default_partial_priors",
    "default_priors_for",
    "identify",
    "label_switching",
]
