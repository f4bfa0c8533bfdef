"""Model builders: plain functions returning unsampled ``pm.Model`` objects."""

from bayescm.models._spec import ModelSpec, spec_of
from bayescm.models.dirichlet_multinomial import dirichlet_multinomial
from bayescm.models.folds import folds
from bayescm.models.hui_walter import (
    IdentifiabilityError,
    IdentifiabilityWarning,
    check_identifiability,
    hui_walter,
)
from bayescm.models.three_beta import three_beta

__all__ = [
    "IdentifiabilityError",
    "IdentifiabilityWarning",
    "ModelSpec",
    "check_identifiability",
    "dirichlet_multinomial",
    "folds",
    "hui_walter",
    "spec_of",
    "three_beta",
]
