"""Priors are data: typed specifications, one grammar to read them, and the defaults.

* :mod:`bayescm.priors.specs` -- :class:`Beta`, :class:`Dirichlet`, :class:`Gamma`;
* :mod:`bayescm.priors.normal` -- :class:`Normal`, :class:`HalfNormal` (location and
  scale priors of the groups family);
* :mod:`bayescm.priors.read` -- :func:`coerce`, :func:`parse`, :func:`resolve`: every
  accepted form (specs, ``"beta:a,b"`` strings, ``pymc_extras`` ``Prior``, scipy) read
  one way in Python, the CLI and the app;
* :mod:`bayescm.priors.defaults` -- :func:`defaults`: what each model family states;
* :mod:`bayescm.priors.elicitation` -- :func:`elicit_beta`, :func:`beta_pert`, ...:
  priors from statements an expert can make (imported on first use: scipy.optimize).

Examples
--------
>>> from bayescm import priors
>>> priors.defaults("three_beta")
{'prevalence': Beta(1, 1), 'tpr': Beta(1, 1), 'tnr': Beta(1, 1)}
>>> priors.parse("beta:20,4")
Beta(20, 4)
"""

from __future__ import annotations

import importlib
from typing import Any

from bayescm.priors.defaults import defaults
from bayescm.priors.normal import HalfNormal, Normal
from bayescm.priors.read import check_names, coerce, named, parse, resolve, to_attrs
from bayescm.priors.specs import Beta, Dirichlet, Gamma, Prior, PriorError, match_rows

# Reached as ``priors.elicit_beta`` etc. and imported on first use, which keeps
# ``import bayescm`` free of scipy.optimize.
_ELICITATION = ("beta_from_mean", "beta_pert", "describe", "dirichlet_from_mean", "elicit_beta")

__all__ = [
    "Beta",
    "Dirichlet",
    "Gamma",
    "HalfNormal",
    "Normal",
    "Prior",
    "PriorError",
    "check_names",
    "coerce",
    "defaults",
    "match_rows",
    "named",
    "parse",
    "resolve",
    "to_attrs",
    *_ELICITATION,
]


def __getattr__(name: str) -> Any:
    if name in _ELICITATION:
        return getattr(importlib.import_module("bayescm.priors.elicitation"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_ELICITATION})
