"""bayescm: how good is this classifier, really, and how sure can we be?

Bayesian analysis of binary confusion matrices with PyMC and ArviZ.

>>> import bayescm as bcm
>>> cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
>>> idata = bcm.fit(bcm.models.three_beta(cm), random_seed=1)
>>> table = bcm.summary(idata, metrics=["tpr", "tnr", "bm"])

``import bayescm`` is light: it imports neither PyMC, PyTensor, nutpie, ArviZ nor
matplotlib.  The public names below are resolved on first use (PEP 562); building
a model imports PyMC, making or reading a result imports ArviZ, a plot matplotlib.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from bayescm import _quiet

_quiet.install()

# The data types, and ``summary``, ``report`` and ``app``, whose names are also their
# modules' (importing the module bayescm.summary would otherwise set bcm.summary to the
# module), are imported now: NumPy, pandas and xarray only (bayescm.app loads Panel
# only when called).  So is bayescm.models, which registers the built-in families in
# the one registry (bayescm.family) before any lookup: its builders import PyMC only
# when called.
import bayescm.models  # noqa: E402, F401
from bayescm._version import __version__  # noqa: E402
from bayescm.app import app  # noqa: E402
from bayescm.data import CELLS, ConfusionMatrix, CountsError  # noqa: E402
from bayescm.priors import PriorError  # noqa: E402
from bayescm.report import report  # noqa: E402
from bayescm.summary import summary  # noqa: E402

# public name -> module that defines it (a submodule itself when the name is one)
_LAZY: dict[str, str] = {
    "AgreementTable": "bayescm.data",
    "MulticlassConfusionMatrix": "bayescm.data",
    "RatingsTable": "bayescm.data",
    "ItemResults": "bayescm.data",
    "FoldResults": "bayescm.data",
    "ConvergenceError": "bayescm.inference.convergence",
    "ConvergenceReport": "bayescm.inference.convergence",
    "ConvergenceWarning": "bayescm.inference.convergence",
    "SizeError": "bayescm._errors",
    "check_convergence": "bayescm.inference.convergence",
    "fit": "bayescm.inference.fit",
    "load": "bayescm.inference.persist",
    "rebuild": "bayescm.inference.persist",
    "save": "bayescm.inference.persist",
    "posterior_predictive_check": "bayescm.inference.ppc",
    "analysis": "bayescm.analysis",
    "curves": "bayescm.curves",
    "datasets": "bayescm.data.datasets",
    "exact": "bayescm.exact",
    "intervals": "bayescm.intervals",
    "metrics": "bayescm.metrics",
    "models": "bayescm.models",
    "plots": "bayescm.plots",
    "priors": "bayescm.priors",
    "stats": "bayescm.stats",
    "summary_exact": "bayescm.summary_stream",
    "exact_posterior": "bayescm.exact.posterior",
}

_SUBMODULES = frozenset({"analysis", "curves", "datasets", "exact", "intervals", "metrics",
                         "models", "plots", "priors", "stats"})

__all__ = [
    "CELLS",
    "AgreementTable",
    "ConfusionMatrix",
    "ConvergenceError",
    "ConvergenceReport",
    "ConvergenceWarning",
    "CountsError",
    "FoldResults",
    "ItemResults",
    "MulticlassConfusionMatrix",
    "PriorError",
    "RatingsTable",
    "SizeError",
    "__version__",
    "analysis",
    "app",
    "check_convergence",
    "curves",
    "datasets",
    "exact",
    "exact_posterior",
    "fit",
    "intervals",
    "load",
    "metrics",
    "models",
    "plots",
    "posterior_predictive_check",
    "priors",
    "rebuild",
    "report",
    "save",
    "stats",
    "summary",
    "summary_exact",
]

if TYPE_CHECKING:  # what the lazy names are, for type checkers and IDEs
    from bayescm import analysis, curves, intervals, metrics, models, plots, priors, stats
    from bayescm._errors import SizeError
    from bayescm.data import datasets
    from bayescm.data.agreement import AgreementTable
    from bayescm.data.fold_results import FoldResults
    from bayescm.data.items import ItemResults
    from bayescm.data.multiclass import MulticlassConfusionMatrix
    from bayescm.exact.posterior import exact_posterior
    from bayescm.inference.convergence import (
        ConvergenceError,
        ConvergenceReport,
        ConvergenceWarning,
        check_convergence,
    )
    from bayescm.inference.fit import fit
    from bayescm.inference.persist import load, rebuild, save
    from bayescm.inference.ppc import posterior_predictive_check
    from bayescm.summary_stream import summary_exact


def __getattr__(name: str) -> Any:
    try:
        where = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'bayescm' has no attribute {name!r}") from None
    module = importlib.import_module(where)
    # a subpackage or module is its own value (``bcm.models``); anything else lives in it
    value = module if name in _SUBMODULES else getattr(module, name)
    globals()[name] = value  # resolved once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
