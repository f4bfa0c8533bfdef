"""bayescm's own error for work too large to start, at the floor of the layers.

:class:`SizeError` is raised wherever an input sizes work (draws, chains, K, T, a
lattice, a saved file's declared sizes) and the estimate exceeds what one call may
hold: by :mod:`bayescm.inference.budget` for fits, pmfs and files, and by the model
builders below the inference layer (a Hui–Walter table of too many classifiers).  It
lives here, below every layer, so that each of them raises the one class users catch
as ``bcm.SizeError``.
"""

from __future__ import annotations

__all__ = ["SizeError"]


class SizeError(ValueError):
    """A call would need more memory (or time) than bayescm lets one call plan for
    (:func:`bayescm.inference.budget.memory_limit`); raised before anything is
    allocated, its message says what to use instead.

    A ``ValueError``: code that catches bad inputs catches it too.

    >>> import bayescm as bcm
    >>> try:
    ...     bcm.fit(bcm.models.three_beta(bcm.ConfusionMatrix(tp=5, fn=1, fp=2, tn=9)),
    ...             sampler="exact", draws=10**9)
    ... except bcm.SizeError as err:
    ...     print(str(err).split(" of memory")[0])
    4 chains x 1,000,000,000 steps would need about 29.8 GiB
    """


# shown (and pickled) under the name users import it by: bcm.SizeError
SizeError.__module__ = "bayescm"
