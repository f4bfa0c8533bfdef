r"""The Dawid–Skene likelihood of collapsed rating patterns, in NumPy and PyTensor.

For a pattern :math:`p` (the counts :math:`n_{prl}` of label :math:`l` from rater
:math:`r`, :mod:`bayescm.data.ratings_patterns`) the joint log probability of the
ratings and class :math:`c` is

.. math::

    J_{pc} = \log \pi_c + \sum_{r,l} n_{prl} \log \theta_{rcl}
             + \log \mathbb{1}\{c \text{ allowed for } p\},

where a gold pattern allows only its class.  Summing the class out,
:math:`\ell_p = \operatorname{logsumexp}_c J_{pc}`, and the log-likelihood is
:math:`\sum_p m_p \ell_p` over patterns with multiplicities :math:`m_p`; an item's class
posterior is :math:`\operatorname{softmax}_c J_{pc}` of its pattern.

Also here: the EM start of the chains (Dawid & Skene's algorithm from majority
votes, which fixes what each class means), the label-switching check of the draws,
and replicated rating tables for predictive checks.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.special import logsumexp, softmax

from bayescm.data.ratings_patterns import RatingPatterns

if TYPE_CHECKING:
    import pytensor.tensor as pt

__all__ = ["em_start", "log_joint", "pattern_logp", "relabel", "relabelling", "replicate",
           "tensor_logp"]

#: Chunks keep arrays of draws x (patterns or rating entries) x classes below this many
#: values.
CHUNK_VALUES = 4_000_000


def log_joint(log_prev: np.ndarray, log_conf: np.ndarray, patterns: RatingPatterns,
              index: np.ndarray | slice = slice(None)) -> np.ndarray:
    """:math:`J_{pc}` for draws: ``log_prev (S, K)``, ``log_conf (S, R, K, K)`` ->
    ``(S, P', K)`` for the patterns ``index``.

    Sums over each pattern's nonzero (rater, label) entries only (its CSR form), in
    chunks of entries: the work is draws x entries x classes, whatever R.
    """
    chosen = np.arange(len(patterns))[index]
    s, r, k, _ = log_conf.shape
    lc = log_conf.transpose(0, 1, 3, 2).reshape(s, r * k, k)  # [(rater, label), class]
    joint = np.repeat(log_prev[:, None, :], chosen.size, axis=1)
    first, lengths = patterns.indptr[chosen], np.diff(patterns.indptr)[chosen]
    owner = np.repeat(np.arange(chosen.size), lengths)
    entry = np.repeat(first - np.cumsum(lengths) + lengths, lengths) + np.arange(owner.size)
    cell = patterns.rater[entry] * k + patterns.label[entry]
    count = patterns.count[entry].astype(float)
    step = max(1, CHUNK_VALUES // max(1, s * k))
    for lo in range(0, owner.size, step):
        part = slice(lo, lo + step)
        terms = lc[:, cell[part], :] * count[part, None]  # (S, E', K)
        o = owner[part]
        starts = np.flatnonzero(np.r_[True, o[1:] != o[:-1]])
        joint[:, o[starts], :] += np.add.reduceat(terms, starts, axis=1)
    allowed = patterns.gold_mask[chosen]
    return np.where(allowed[None], joint, -np.inf)


def pattern_logp(prevalence: np.ndarray, confusion: np.ndarray,
                 patterns: RatingPatterns) -> np.ndarray:
    r""":math:`\ell_p` per draw: ``prevalence (S, K)``, ``confusion (S, R, K, K)`` -> ``(S, P)``
    (computed in chunks of draws)."""
    s, k = prevalence.shape
    out = np.empty((s, len(patterns)))
    step = max(1, CHUNK_VALUES // max(1, len(patterns) * k))
    with np.errstate(divide="ignore"):
        lp, lc = np.log(prevalence), np.log(confusion)
    for lo in range(0, s, step):
        out[lo:lo + step] = logsumexp(log_joint(lp[lo:lo + step], lc[lo:lo + step], patterns),
                                      axis=-1)
    return out


def class_probabilities(prevalence: np.ndarray, confusion: np.ndarray,
                        patterns: RatingPatterns, index: np.ndarray | slice = slice(None)
                        ) -> np.ndarray:
    """Posterior class probabilities of patterns ``index`` per draw: ``(S, P', K)``."""
    with np.errstate(divide="ignore"):
        joint = log_joint(np.log(prevalence), np.log(confusion), patterns, index)
    return softmax(joint, axis=-1)


def tensor_logp(value: pt.TensorVariable, prevalence: pt.TensorVariable,
                confusion: pt.TensorVariable, multiplicity: pt.TensorVariable,
                gold: pt.TensorVariable) -> pt.TensorVariable:
    r""":math:`\sum_p m_p \ell_p` as a PyTensor graph (the observed ratings' log density).

    ``value`` is the ``(P, R, L)`` pattern counts; the joint is one matrix product
    ``(P, R·L) @ (R·L, C)``.
    """
    import pytensor.tensor as pt

    k = confusion.shape[-1]
    n = pt.cast(value, "float64").reshape((value.shape[0], -1))
    a = pt.log(confusion).dimshuffle(0, 2, 1).reshape((-1, k))  # [(r, l), c]
    joint = pt.log(prevalence)[None, :] + pt.dot(n, a)
    classes = pt.arange(k)[None, :]
    allowed = pt.or_(pt.lt(gold[:, None], 0), pt.eq(gold[:, None], classes))
    joint = pt.switch(allowed, joint, -np.inf)
    return pt.sum(pt.cast(multiplicity, "float64") * pt.logsumexp(joint, axis=1))


# -- the start of the chains ------------------------------------------------------------
def em_start(patterns: RatingPatterns, prev_alpha: np.ndarray, conf_alpha: np.ndarray, *,
             iterations: int = 200, tol: float = 1e-8) -> tuple[np.ndarray, np.ndarray]:
    r"""Dawid & Skene's EM from majority votes, smoothed by the prior concentrations.

    The class weights start at each pattern's share of votes for each label (gold
    patterns: their class), so class :math:`c` starts as "what the raters call
    :math:`c`"; then alternately :math:`\pi_c \propto \alpha_c + \sum_p m_p w_{pc}`,
    :math:`\theta_{rcl} \propto \beta_{rcl} + \sum_p m_p w_{pc} n_{prl}` and
    :math:`w_{pc} = \operatorname{softmax}_c J_{pc}`.  Adding the concentrations (rather
    than the MAP's :math:`\alpha - 1`) keeps every value inside the simplex.  Returns
    ``(prevalence (K,), confusion (R, K, K))``: where the chains start.
    """
    counts = patterns.counts.astype(float)
    m = patterns.multiplicity.astype(float)
    votes = counts.sum(axis=1) + 1e-3  # (P, K): labels given, over raters
    w = np.where(patterns.gold_mask, votes, 0.0)
    w /= w.sum(axis=1, keepdims=True)
    prev = conf = None
    for _ in range(iterations):
        prev = prev_alpha + (m[:, None] * w).sum(axis=0)
        prev /= prev.sum()
        conf = conf_alpha + np.einsum("p,pc,prl->rcl", m, w, counts)
        conf /= conf.sum(axis=-1, keepdims=True)
        new = class_probabilities(prev[None], conf[None], patterns)[0]
        done = np.max(np.abs(new - w)) < tol
        w = new
        if done:
            break
    return prev, conf


# -- label switching ------------------------------------------------------------------------
def relabelling(confusion: np.ndarray) -> np.ndarray:
    r"""Per draw, the relabelling of the classes that best fits the raters' labels.

    ``confusion (..., R, K, K)``.  With :math:`M_{ac} = \sum_r \theta_{r a c}` (how
    often class :math:`a` is labelled :math:`c`, summed over raters), the relabelling
    :math:`\sigma` maximises :math:`\sum_c M_{\sigma(c) c}`; the identity means class
    :math:`c` is the class the raters call :math:`c`.  At K = 2 the identity is
    :math:`\overline{Se + Sp} > 1` (Youden's J > 0 on average over raters), Hui–Walter's
    constraint.  Returns ``(..., K)``: ``sigma[..., c]`` per draw.
    """
    from scipy.optimize import linear_sum_assignment

    m = confusion.sum(axis=-3)  # (..., K, K): actual x predicted
    k = m.shape[-1]
    flat = m.reshape(-1, k, k)
    out = np.tile(np.arange(k), (flat.shape[0], 1))
    # the identity is optimal when every column's largest entry is on the diagonal
    dominant = np.all(flat.argmax(axis=-2) == np.arange(k), axis=-1)
    bad = np.flatnonzero(~dominant)
    if bad.size and k <= 6:  # every permutation at once
        perms = np.array(list(itertools.permutations(range(k))))  # perms[0]: the identity
        scores = flat[bad][:, perms, np.arange(k)].sum(axis=-1)  # (B, K!)
        best = perms[np.argmax(scores, axis=1)]
        best[scores[:, 0] >= scores.max(axis=1) - 1e-12] = np.arange(k)  # ties: identity
        out[bad] = best
    for s in bad if k > 6 else ():
        rows, cols = linear_sum_assignment(-flat[s])
        best = rows[np.argsort(cols)]
        if flat[s][best, np.arange(k)].sum() > np.trace(flat[s]) + 1e-12:
            out[s] = best
    return out.reshape(*m.shape[:-2], k)


def relabel(prevalence: np.ndarray, confusion: np.ndarray, sigma: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """Draws with their classes relabelled: class ``c`` becomes old class ``sigma[..., c]``
    (``prevalence (..., K)``, ``confusion (..., R, K, K)``, ``sigma (..., K)``)."""
    prev = np.take_along_axis(prevalence, sigma, axis=-1)
    index = sigma[..., None, :, None]
    conf = np.take_along_axis(confusion, np.broadcast_to(index, confusion.shape), axis=-2)
    return prev, conf


# -- replicated data ----------------------------------------------------------------------
def replicate(prevalence: np.ndarray, confusion: np.ndarray, design: np.ndarray,
              gold: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Rating tables of a repeat of the study: ``(S, I, R, K)`` counts.

    Every item keeps its raters and how often each rated it (``design (I, R)``); its
    class is drawn from the prevalence (gold items keep theirs), and each rater's
    ratings are Multinomial(n_ir, confusion[r, class]).
    """
    s, k = prevalence.shape
    n_items, n_raters = design.shape
    u = rng.random((s, n_items))
    z = (u[..., None] > np.cumsum(prevalence, axis=-1)[:, None, :]).sum(-1)
    z = np.minimum(z, k - 1)
    z = np.where(gold[None, :] >= 0, gold[None, :], z)
    out = np.zeros((s, n_items, n_raters, k), dtype=np.int64)
    for r in range(n_raters):
        rated = np.flatnonzero(design[:, r] > 0)
        if not rated.size:
            continue
        p = confusion[np.arange(s)[:, None], r, z[:, rated]]  # (S, I_r, K)
        n = np.broadcast_to(design[rated, r], (s, rated.size))
        out[:, rated, r] = _multinomial(rng, n, p)
    return out


def _multinomial(rng: np.random.Generator, n: np.ndarray, p: np.ndarray) -> np.ndarray:
    from bayescm.stats import multinomial

    return multinomial(rng, np.asarray(n, dtype=np.int64), p / p.sum(-1, keepdims=True))


def item_design(ratings: Any) -> np.ndarray:
    """``(I, R)`` int64: how many times each rater rated each item."""
    out = np.zeros((ratings.n_items, ratings.n_raters), dtype=np.int64)
    i, r, _, c = ratings.entries
    np.add.at(out, (i, r), c)
    return out
