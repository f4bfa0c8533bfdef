"""bayescm: how good is this classifier, really, and how sure can we be?

Bayesian analysis of binary confusion matrices with PyMC and ArviZ.

>>> import bayescm as bcm
>>> cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
>>> idata = bcm.fit(bcm.models.three_beta(cm), random_seed=1)
>>> table = bcm.summary(idata, metrics=["tpr", "tnr", "bm"])
"""

from bayescm import _quiet

_quiet.install()

from bayescm import (  # noqa: E402
    analysis,
    curves,
    datasets,
    intervals,
    metrics,
    models,
    plots,
    priors,
    stats,
)
from bayescm.agreement import AgreementTable  # noqa: E402
from bayescm.convergence import (  # noqa: E402
    ConvergenceError,
    ConvergenceReport,
    ConvergenceWarning,
    check_convergence,
)
from bayescm.data import CELLS, ConfusionMatrix, CountsError  # noqa: E402
from bayescm.inference import fit  # noqa: E402
from bayescm.persist import load, rebuild, save  # noqa: E402
from bayescm.ppc import posterior_predictive_check  # noqa: E402
from bayescm.priors import PriorError  # noqa: E402
from bayescm.summary import summary  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "CELLS",
    "AgreementTable",
    "ConfusionMatrix",
    "ConvergenceError",
    "ConvergenceReport",
    "ConvergenceWarning",
    "CountsError",
    "PriorError",
    "__version__",
    "analysis",
    "check_convergence",
    "curves",
    "datasets",
    "fit",
    "intervals",
    "load",
    "metrics",
    "models",
    "plots",
    "posterior_predictive_check",
    "priors",
    "rebuild",
    "save",
    "stats",
    "summary",
]
