"""Tötsch & Hoffmann's three-Beta model: prevalence, TPR and TNR each ~ Beta.

The family's folder holds its builder and hooks (``model``); the model card is
``models/three_beta/README.md`` in the repository.
"""

from bayescm.models.three_beta.model import ThreeBeta, three_beta

__all__ = ["ThreeBeta", "three_beta"]
