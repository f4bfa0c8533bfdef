"""Model builders: plain functions returning unsampled ``pm.Model`` objects.

Each family is one unit (:mod:`bayescm.family`): its builder, and what
``fit``, the draws, the exact sampler, the JAGS runner and ``rebuild`` need to know
about it, registered once with :func:`register_family`.
"""

from bayescm.family import (
    ClosedForm,
    Conjugate,
    Family,
    JagsTwin,
    Kernel,
    ModelSpec,
    attach,
    families,
    family_of,
    get_family,
    is_unmodified,
    register_family,
    spec_of,
)
from bayescm.models._loglik import case_log_likelihood
from bayescm.models.dawid_skene import dawid_skene
from bayescm.models.dirichlet_multinomial import dirichlet_multinomial
from bayescm.models.folds import folds
from bayescm.models.groups import groups
from bayescm.models.hui_walter import (
    IdentifiabilityError,
    IdentifiabilityWarning,
    check_identifiability,
    hui_walter,
)
from bayescm.models.items import items
from bayescm.models.multiclass_cells import multiclass_cells
from bayescm.models.multiclass_rows import multiclass_rows
from bayescm.models.multiclass_rows.weight import PriorWeightWarning
from bayescm.models.three_beta import three_beta

__all__ = [
    "ClosedForm",
    "Conjugate",
    "Family",
    "IdentifiabilityError",
    "IdentifiabilityWarning",
    "JagsTwin",
    "Kernel",
    "ModelSpec",
    "PriorWeightWarning",
    "attach",
    "case_log_likelihood",
    "check_identifiability",
    "dawid_skene",
    "dirichlet_multinomial",
    "families",
    "family_of",
    "folds",
    "get_family",
    "groups",
    "hui_walter",
    "is_unmodified",
    "items",
    "multiclass_cells",
    "multiclass_rows",
    "register_family",
    "spec_of",
    "three_beta",
]
