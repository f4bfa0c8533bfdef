"""The default priors of a model family, as the family itself states them.

There is one registry of families (:mod:`bayescm.family`); each family's folder
under :mod:`bayescm.models` writes its defaults, and this module only shows them.

Examples
--------
>>> from bayescm import priors
>>> priors.defaults("three_beta")
{'prevalence': Beta(1, 1), 'tpr': Beta(1, 1), 'tnr': Beta(1, 1)}
"""

from __future__ import annotations

from bayescm.family import families
from bayescm.priors.specs import Prior

__all__ = ["defaults"]


def defaults(model: str) -> dict[str, Prior]:
    """Default priors of a model family (a fresh dict: change it freely).

    Tötsch & Hoffmann (2021) use the Laplace prior Beta(1, 1) for prevalence,
    tpr and tnr; Caelen (2017) a flat Dirichlet(1, 1, 1, 1) over the cells.

    Raises
    ------
    KeyError
        When no registered family of that name states default priors; the message
        lists those that do.
    """
    known = {name: f.default_priors for name, f in families().items() if f.default_priors}
    if model not in known:
        raise KeyError(f"Unknown model {model!r}; models: {sorted(known)}.")
    return dict(known[model])
