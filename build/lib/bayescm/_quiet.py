"""Keep library noise out of users' notebooks.

PyTensor announces that it found no optimised BLAS ("Using NumPy C-API based
implementation for BLAS functions" at import, "PyTensor could not link to a BLAS
installation" at its first C compilation).  Neither says anything a bayescm user
can act on: our models have no matrix products.  We filter exactly these two
messages and leave every other warning alone.
"""

import logging
import warnings


def install() -> None:
    warnings.filterwarnings(
        "ignore", message="PyTensor could not link to a BLAS installation", category=UserWarning
    )
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*BLAS.*")
        warnings.filterwarnings("ignore", category=FutureWarning, module="pytensor.*")
        logging.getLogger("pytensor.configdefaults").setLevel(logging.ERROR)
        import pymc  # noqa: F401
        import pytensor  # noqa: F401
