"""Keep library noise out of users' notebooks.

PyTensor announces that it found no optimised BLAS ("Using NumPy C-API based
implementation for BLAS functions" at import, "PyTensor could not link to a BLAS
installation" at its first C compilation).  Neither says anything a bayescm user
can act on: our models have no matrix products.  We filter exactly these messages
and leave every other warning alone.  PyMC and PyTensor are imported when a model
is built, not with bayescm, so the filters are installed before either is imported
and hold from then on.
"""

import logging
import warnings


def install() -> None:
    warnings.filterwarnings(
        "ignore", message="PyTensor could not link to a BLAS installation", category=UserWarning
    )
    warnings.filterwarnings("ignore", message=".*BLAS.*", module="pytensor")
    warnings.filterwarnings("ignore", message=".*BLAS.*", module="pytensor[.].*")
    logging.getLogger("pytensor.configdefaults").setLevel(logging.ERROR)
