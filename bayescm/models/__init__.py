"""Model builders: plain functions returning unsampled ``pm.Model`` objects."""

from bayescm.models._spec import ModelSpec, spec_of
from bayescm.models.dirichlet_multinomial import dirichlet_multinomial
from bayescm.models.three_beta import three_beta

__all__ = ["ModelSpec", "dirichlet_multinomial", "spec_of", "three_beta"]
