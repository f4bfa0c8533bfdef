r"""Pointwise log-likelihood: one entry per case, for ``az.loo`` and ``az.compare``.

A model whose data are counts of cases over categories (cells of a confusion matrix,
outcome patterns of an agreement table) with category probabilities :math:`p_c`
has, for a case :math:`i` that fell in category :math:`c_i`,

.. math::

    \log L_i = \log p_{c_i},\qquad
    \sum_i \log L_i = \sum_c y_c \log p_c
    = \log \mathrm{Multinomial}(y \mid n, p) - \log \binom{n}{y_1, \dots, y_C},

so the pointwise values sum to the multinomial log-likelihood up to the multinomial
coefficient, which does not depend on the parameters (and cancels between models of
the same data).  The log probabilities are computed per category (draws ×
categories) and only the last step repeats them per case, so the cost is the size
of the result, not more.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from bayescm.stats import SAMPLE_DIMS

__all__ = ["CASE_DIM", "case_index", "case_log_likelihood"]

#: The dim of the pointwise log-likelihood.
CASE_DIM = "case"


def case_index(counts: xr.DataArray) -> tuple[np.ndarray, dict[str, tuple[str, np.ndarray]]]:
    """Flat category position of every case, and the coords naming each case.

    Cases are laid out unit by unit (row-major over ``counts.dims``), a category's
    cases next to each other.  The coords are one non-index coordinate per dim of
    ``counts`` on dim ``case`` (e.g. ``population`` and ``pattern``), so that
    ``ll.where(ll.pattern == "+-", drop=True)`` picks the cases of a pattern.
    """
    values = np.asarray(counts.values)
    n = np.rint(values).astype(np.int64).ravel()
    index = np.repeat(np.arange(n.size), n)
    grids = np.unravel_index(index, values.shape)
    coords = {}
    for dim, pos in zip(counts.dims, grids, strict=True):
        labels = (np.asarray(counts[dim].values) if dim in counts.coords
                  else np.arange(values.shape[counts.dims.index(dim)]))
        coords[str(dim)] = (CASE_DIM, labels[pos])
    return index, coords


def case_log_likelihood(prob: xr.DataArray, counts: xr.DataArray, *, name: str = "counts",
          dims: Sequence[str] | None = None) -> xr.DataArray:
    """The log of each case's category probability, per draw (dims chain, draw, case).

    Parameters
    ----------
    prob
        Category probabilities with the sample dims and every dim of ``counts``.
    counts
        Observed counts of cases per category (the model's observed data).
    name
        Name of the result (the observed variable's).
    dims
        Order of ``counts``' dims (default: its own).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> counts = xr.DataArray([2, 0, 1], dims="cell", coords={"cell": ["a", "b", "c"]})
    >>> prob = xr.DataArray(np.array([[[0.5, 0.3, 0.2]]]), dims=("chain", "draw", "cell"))
    >>> ll = case_log_likelihood(prob, counts)
    >>> ll.dims, ll.cell.values.tolist()
    (('chain', 'draw', 'case'), ['a', 'a', 'c'])
    >>> bool(np.isclose(float(ll.sum()), 2 * np.log(0.5) + np.log(0.2)))
    True
    """
    dims = tuple(dims or counts.dims)
    counts = counts.transpose(*dims)
    index, coords = case_index(counts)
    p = prob.transpose(*SAMPLE_DIMS, *dims).values
    # log per category first (draws x categories), then repeat per case: the only
    # array as large as the result is the result
    logp = np.log(p.reshape(*p.shape[:2], -1))
    out = np.take(logp, index, axis=-1)
    return xr.DataArray(out, dims=(*SAMPLE_DIMS, CASE_DIM), name=name,
                        coords={CASE_DIM: np.arange(index.size), **coords,
                                **{d: prob[d].values for d in SAMPLE_DIMS if d in prob.coords}})
