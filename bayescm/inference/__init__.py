"""From an unsampled model to a checked InferenceData, and back from a file.

* :mod:`bayescm.inference.fit` -- :func:`fit`: asks the model's family (never names
  one) for its exact posterior, compiled density or PyMC model, and samples;
* :mod:`bayescm.inference.shell` -- :func:`fit_kernel`: ``fit`` on a family's compiled
  density made from data and priors, without PyMC (the shell's path);
* :mod:`bayescm.inference.engines` -- the NUTS engines (nutpie on a compiled kernel,
  nutpie on the PyMC model, ``pm.sample``);
* :mod:`bayescm.inference.draws` -- draws completed with ``theta`` and every metric,
  prior and predictive draws, case log-likelihoods;
* :mod:`bayescm.inference.convergence` and :mod:`bayescm.inference.diagnostics` --
  R-hat, bulk and tail ESS, divergences, said in plain words on every fit;
* :mod:`bayescm.inference.jags` -- the JAGS twin runner (a second engine);
* :mod:`bayescm.inference.persist` -- :func:`save`, :func:`load`, :func:`rebuild`;
* :mod:`bayescm.inference.ppc` -- :func:`posterior_predictive_check`.
"""

from bayescm.inference.convergence import (
    ConvergenceError,
    ConvergenceReport,
    ConvergenceWarning,
    check_convergence,
)
from bayescm.inference.fit import (
    ENGINES,
    FIT_STAGES,
    SAMPLERS,
    FitProgress,
    check_sizes,
    fit,
    fit_closed_form,
)
from bayescm.inference.persist import FileMismatchWarning, load, rebuild, save
from bayescm.inference.ppc import PredictiveCheck, posterior_predictive_check
from bayescm.inference.shell import fit_kernel

__all__ = [
    "ENGINES",
    "FIT_STAGES",
    "SAMPLERS",
    "ConvergenceError",
    "ConvergenceReport",
    "ConvergenceWarning",
    "FileMismatchWarning",
    "FitProgress",
    "PredictiveCheck",
    "check_convergence",
    "check_sizes",
    "fit",
    "fit_closed_form",
    "fit_kernel",
    "load",
    "posterior_predictive_check",
    "rebuild",
    "save",
]
