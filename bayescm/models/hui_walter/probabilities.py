r"""Probabilities of the Hui–Walter model: complete patterns given the class, and cells.

Written once for NumPy arrays and PyTensor tensors (``xp``), so that the PyMC model,
the prior draws, the identifiability check and the tests share one formula.  With
:math:`q^+_t = Se_t^{r_t}(1 - Se_t)^{1 - r_t}` and the covariance :math:`c^+_{ij}`
of each dependent pair (Dendukuri & Joseph 2001, as a second-order Bahadur
expansion for T > 2),

.. math::

    \Pr(r \mid D^+) = \prod_t q^+_t + \sum_{(i,j)} s_{ij}(r)\,c^+_{ij}
                      \prod_{t \ne i,j} q^+_t,

likewise for :math:`D^-` with :math:`1 - Sp_t` in place of :math:`Se_t`.  A cell
:math:`c` of an agreement table (a complete pattern, one with missing results, or a
verified case; see :mod:`bayescm.data.agreement_cells`) has

.. math::

    \Pr_p(c) = \pi_p\,(\mathrm{pos} \cdot \Pr(\cdot \mid D^+))_c
             + (1 - \pi_p)\,(\mathrm{neg} \cdot \Pr(\cdot \mid D^-))_c .
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bayescm._errors import SizeError
from bayescm.data.agreement import pattern_matrix
from bayescm.data.agreement_cells import CellDesign
from bayescm.stats import multinomial

__all__ = ["MAX_DESIGN", "block_draws", "block_totals", "cell_probabilities", "check_size",
           "class_probabilities", "pattern_probabilities"]

MAX_DESIGN = 2**22
"""Most entries of a table's cell design (cells x complete patterns), the bound on T.

The model maps the :math:`2^T` complete patterns to the table's cells through two
dense ``cells x 2**T`` matrices (:class:`~bayescm.data.agreement_cells.CellDesign`),
which the compiled density copies; building them takes time quadratic in their
size.  Measured for complete tables (``cells = 2**T``): T = 10, 10^6 entries, 4.5 s
to build the model; T = 11, 4.2 x 10^6, 16 s and 0.6 GB; T = 12, 41 s and 1.2 GB;
T = 16 would be 4.3 x 10^9 entries, 32 GiB per matrix.  The bound admits T = 11.
"""


def check_size(classifiers: Sequence[str], patterns: Sequence[str]) -> None:
    """Raise :class:`bayescm.SizeError` (a ``ValueError``) when the cell design would
    exceed :data:`MAX_DESIGN` entries: checked before the design is made, so a table of
    many classifiers is refused at once.

    >>> check_size([f"c{i}" for i in range(16)], ["+" * 16] * 2**16)
    Traceback (most recent call last):
    ...
    bayescm.SizeError: An agreement table of 16 classifiers has 65,536 complete patterns...
    """
    t, cells = len(classifiers), len(patterns)
    entries = float(cells) * 2.0**t
    if entries > MAX_DESIGN:
        raise SizeError(
            f"An agreement table of {t} classifiers has {2**t:,} complete patterns; the "
            f"Hui–Walter model maps them to the table's {cells:,} cells through two "
            f"{cells:,} x {2**t:,} matrices ({entries * 8 / 2**30:,.1f} GiB each), which take "
            "far too long and too much memory to build. It handles up to "
            f"{MAX_DESIGN:,} such entries (11 classifiers with complete results, about 16 s "
            "to build). For many raters use bcm.models.dawid_skene on "
            "bcm.RatingsTable.from_wide(frame): at K = 2 with conditionally independent "
            "raters it is the same model, and it keeps only the rating patterns observed. "
            "Or compare fewer classifiers at a time.")


def class_probabilities(
    se: Any, sp: Any, cov_se_u: Any, cov_sp_u: Any, n_classifiers: int,
    pairs: Sequence[tuple[int, int]], xp: Any = np,
) -> tuple[Any, Any, Any, Any]:
    """``Pr(r | D+)`` and ``Pr(r | D-)`` of the ``2**T`` complete patterns.

    Parameters
    ----------
    se, sp
        Sensitivities and specificities, shape ``(..., T)``.
    cov_se_u, cov_sp_u
        Covariance positions in (0, 1) within their bounds, shape ``(..., K)``
        (ignored when there are no pairs).
    xp
        ``numpy`` or ``pytensor.tensor``.

    Returns
    -------
    p_pos, p_neg, cov_se, cov_sp
        The class-conditional pattern probabilities ``(..., 2**T)`` and the
        covariances ``(..., K)`` (None without pairs).

    Examples
    --------
    >>> import numpy as np
    >>> p_pos, p_neg, _, _ = class_probabilities(np.array([0.9]), np.array([0.8]), None, None,
    ...                                          1, [])
    >>> p_pos.tolist(), p_neg.round(12).tolist()
    ([0.9, 0.09999999999999998], [0.2, 0.8])
    """
    r = pattern_matrix(n_classifiers)  # (R, T)
    # tensors first, so that NumPy never tries to broadcast over a PyTensor variable
    q_pos = se[..., None, :] * r + (1 - se[..., None, :]) * (1 - r)  # (..., R, T)
    q_neg = (1 - sp[..., None, :]) * r + sp[..., None, :] * (1 - r)
    p_pos = xp.prod(q_pos, axis=-1)
    p_neg = xp.prod(q_neg, axis=-1)
    cov_se = cov_sp = None
    if pairs:
        k = len(pairs)
        ii = np.array([a for a, _ in pairs])
        jj = np.array([b for _, b in pairs])
        sign = np.where(r[:, ii] == r[:, jj], 1.0, -1.0)  # (R, K)
        rest = np.ones((len(r), k, n_classifiers))
        rest[:, np.arange(k), ii] = 0
        rest[:, np.arange(k), jj] = 0
        rest_mask = rest.astype(bool)

        def dependent(a, q, u):
            # a: P(test + | class) per classifier; bounds keep every pair's 2x2 table valid,
            # and 1/K of them keeps every pattern valid with K dependent pairs.
            ai, aj = a[..., ii], a[..., jj]
            lower = xp.maximum(-(1 - ai) * (1 - aj), -ai * aj) / k
            upper = xp.minimum(ai * (1 - aj), (1 - ai) * aj) / k
            cov = lower + u * (upper - lower)
            others = xp.prod(xp.where(rest_mask, q[..., :, None, :], 1.0), axis=-1)  # (.., R, K)
            return xp.sum(cov[..., None, :] * sign * others, axis=-1), cov

        extra_pos, cov_se = dependent(se, q_pos, cov_se_u)
        extra_neg, cov_sp = dependent(1 - sp, q_neg, cov_sp_u)
        p_pos = p_pos + extra_pos
        p_neg = p_neg + extra_neg
    return p_pos, p_neg, cov_se, cov_sp


def pattern_probabilities(
    se: Any, sp: Any, prev: Any, cov_se_u: Any, cov_sp_u: Any,
    n_classifiers: int, pairs: Sequence[tuple[int, int]], xp: Any = np,
) -> tuple[Any, Any, Any]:
    """Probabilities of the complete patterns in each population.

    Parameters as :func:`class_probabilities`, plus ``prev`` of shape ``(..., P)``.

    Returns
    -------
    prob, cov_se, cov_sp
        ``prob`` has shape ``(..., P, 2**T)``; the covariances ``(..., K)``.
    """
    p_pos, p_neg, cov_se, cov_sp = class_probabilities(
        se, sp, cov_se_u, cov_sp_u, n_classifiers, pairs, xp=xp)
    return _mix(prev, p_pos, p_neg), cov_se, cov_sp


def cell_probabilities(p_pos: Any, p_neg: Any, prev: Any, design: CellDesign) -> Any:
    """Probabilities of the cells of ``design`` in each population, ``(..., P, C)``.

    ``p_pos``, ``p_neg`` are :func:`class_probabilities`' ``(..., 2**T)``; a table of
    complete, unverified cases gives exactly :func:`pattern_probabilities`.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescm.data.agreement_cells import cell_design
    >>> d = cell_design(["+", "-", "?", "+|D+", "-|D+", "+|D-", "-|D-"], 1)
    >>> cell_probabilities(np.array([0.9, 0.1]), np.array([0.2, 0.8]), np.array([0.5]),
    ...                    d).round(3).tolist()
    [[0.55, 0.45, 1.0, 0.45, 0.05, 0.1, 0.4]]
    """
    if design.complete:
        return _mix(prev, p_pos, p_neg)
    return _mix(prev, p_pos @ design.pos.T, p_neg @ design.neg.T)


def _mix(prev: Any, pos: Any, neg: Any) -> Any:
    return prev[..., :, None] * pos[..., None, :] + (1 - prev[..., :, None]) * neg[..., None, :]


def block_totals(counts: np.ndarray, design: CellDesign) -> np.ndarray:
    """Cases per (population, block): ``(P, B)`` from counts ``(P, C)``."""
    return np.asarray(counts) @ np.eye(len(design.blocks), dtype=np.int64)[design.block]


def block_draws(rng: np.random.Generator, prob: np.ndarray, totals: np.ndarray,
                design: CellDesign) -> np.ndarray:
    """Multinomial(n_pb, cell probabilities of block b, renormalised) per block.

    ``prob`` has shape ``(..., P, C)``, ``totals`` ``(P, B)`` (broadcast over the
    leading dims); returns integer counts of ``prob``'s shape.
    """
    out = np.zeros(prob.shape, dtype=np.int64)
    for b in range(len(design.blocks)):
        idx = np.flatnonzero(design.block == b)
        pb = prob[..., idx]
        out[..., idx] = multinomial(rng, np.broadcast_to(totals[:, b], pb.shape[:-1]),
                                    pb / pb.sum(-1, keepdims=True))
    return out
