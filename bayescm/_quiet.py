"""Keep library noise out of users' notebooks.

PyTensor announces at import that it found no optimised BLAS ("Using NumPy
C-API based implementation for BLAS functions"), which says nothing a bayescm
user can act on.  We import PyTensor once with that message filtered, and leave
every other warning alone.
"""

import logging
import warnings


def install() -> None:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*BLAS.*")
        warnings.filterwarnings("ignore", category=FutureWarning, module="pytensor.*")
        logging.getLogger("pytensor.configdefaults").setLevel(logging.ERROR)
        import pymc  # noqa: F401
        import pytensor  # noqa: F401
