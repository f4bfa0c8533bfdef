"""Caelen's Dirichlet-multinomial model: the four cells ~ Dirichlet.

The family's folder holds its builder and hooks (``model``); the model card is
``models/dirichlet_multinomial/README.md`` in the repository.
"""

from bayescm.models.dirichlet_multinomial.model import DirichletMultinomial, dirichlet_multinomial

__all__ = ["DirichletMultinomial", "dirichlet_multinomial"]
