r"""Compiled log density and gradient of the Dawid–Skene model, for nutpie.

The density is that of :func:`bayescm.models.dawid_skene` in PyMC's unconstrained
coordinates (the tests compare it with ``model.compile_logp`` and
``model.compile_dlogp`` at random points), shifted by the start of the chains:
the kernel's coordinates are :math:`x = y - y_0`, where :math:`y` are PyMC's (its
centred simplex transform, :math:`z = (y, -\sum y)`, :math:`\theta = \mathrm{softmax}(z)`
for the prevalence and every confusion row) and :math:`y_0` is the EM point
(:func:`~bayescm.models.dawid_skene.likelihood.em_start`).  A translation has Jacobian
1, so the density is the same; nutpie's start, uniform in :math:`(-1, 1)` around
:math:`x = 0`, is then around the EM point, in the labelling of the raters' labels.

Up to a constant the log density is

.. math::

    \sum_c \alpha_c \log \pi_c + \sum_{r,c,l} \beta_{rcl} \log \theta_{rcl}
    + \sum_p m_p \log \sum_c \pi_c \prod_{e \in p} \theta_{r_e c l_e}^{n_e}

over the gold-allowed classes (the simplex Jacobian :math:`K \prod_i \theta_i` turns
:math:`\alpha - 1` into :math:`\alpha`).  With :math:`w_{pc}` the class posterior of
pattern :math:`p`, the gradient with respect to a simplex's log-probabilities is
:math:`g_i = \alpha_i + \sum_p m_p w_{pc} (\cdots)`, and with respect to its
coordinates :math:`(g_j - g_K) - (\sum_i g_i)(\theta_j - \theta_K)`.

**Why it is fast** (:func:`likelihood`, shared with the partially pooled kernel): the
inner loop runs over the patterns' nonzero (rater, label) entries in CSR form and works
with probabilities, not logs: each pattern's :math:`K` products
:math:`\pi_c \prod_e \theta^{n_e}` are multiplied up from a table of the
:math:`RK \times K` probabilities (computed once per call), and the pattern totals are
multiplied into one running mantissa and binary exponent (``frexp``), so the
log-likelihood takes one logarithm in all instead of :math:`K` exponentials and a
logarithm per pattern.  :func:`fast_likelihood` compiles it once per :math:`K \le 5`
with :math:`K` a constant, which unrolls the loops over the classes.  Together they
halve the time per evaluation at :math:`K = 5` (``benchmarks/bench_dawid_skene.py``).
A pattern whose probability falls below :data:`TINY` (a draw far in the tails, where
products of probabilities would lose digits) is redone in log space.

``user_data`` is ``[K, R, P, E, alpha(K), beta(R*K*K), y0(D), m(P), gold(P),
indptr(P+1), cell(E), count(E)]`` with :math:`D = (K-1)(1 + RK)`, the patterns'
nonzero entries in CSR form (:class:`~bayescm.data.ratings_patterns.RatingPatterns`)
and ``cell = rater * K + label``.
"""

import math

import numba
import numpy as np
from numba import types

_dp = types.CPointer(types.double)
LOGP_SIG = types.int64(types.uint64, _dp, _dp, _dp, _dp)
EXPAND_SIG = types.int64(types.uint64, types.uint64, _dp, _dp, _dp)
HEAD = 4
#: Reassociation etc. but not "no NaN/inf" (a -inf log density must stay -inf).
FAST = {"reassoc", "contract", "nsz", "arcp"}
#: A pattern's probability outside (TINY, HUGE) is recomputed in log space (products of
#: probabilities lose digits below about 1e-308); the running product of the pattern
#: probabilities is renormalised (frexp) below TINY.
TINY = 1e-280
HUGE = 1e280
LOG2 = math.log(2.0)


@numba.njit(cache=True)
def _size(head):  # pragma: no cover - compiled
    k, r, p, e = int(head[0]), int(head[1]), int(head[2]), int(head[3])
    d = (k - 1) * (1 + r * k)
    return HEAD + k + r * k * k + d + 2 * p + (p + 1) + 2 * e


@numba.njit(cache=True)
def _log_simplex(y, start, k, out):  # pragma: no cover - compiled
    """log softmax of z = (y[start:start+k-1], -sum) into out[0:k]."""
    zk = 0.0
    for i in range(k - 1):
        zk -= y[start + i]
    m = zk
    for i in range(k - 1):
        m = max(m, y[start + i])
    s = math.exp(zk - m)
    for i in range(k - 1):
        s += math.exp(y[start + i] - m)
    lz = m + math.log(s)
    for i in range(k - 1):
        out[i] = y[start + i] - lz
    out[k - 1] = zk - lz


@numba.njit(cache=True)
def _simplex_grad(g, logp, k, grad, start):  # pragma: no cover - compiled
    """Gradient in a simplex's centred coordinates from ``g`` (w.r.t. its log-probs)."""
    gs = 0.0
    for i in range(k):
        gs += g[i]
    thk = math.exp(logp[k - 1])
    for j in range(k - 1):
        grad[start + j] = (g[j] - g[k - 1]) - gs * (math.exp(logp[j]) - thk)


@numba.njit(cache=True)
def _pattern_logspace(lp, lct, k, gq, lo, hi, cell, count, w):  # pragma: no cover
    """One pattern in log space (the slow, safe path): returns l_p, class posterior in w."""
    top = -np.inf
    for c in range(k):
        if gq >= 0 and c != gq:
            w[c] = -np.inf
            continue
        j = lp[c]
        for e in range(lo, hi):
            j += count[e] * lct[int(cell[e]), c]
        w[c] = j
        top = max(top, j)
    if not math.isfinite(top):
        return -np.inf
    s = 0.0
    for c in range(k):
        w[c] = math.exp(w[c] - top) if w[c] > -np.inf else 0.0
        s += w[c]
    for c in range(k):
        w[c] /= s
    return top + math.log(s)


@numba.njit(cache=True, fastmath=FAST, inline="always")
def likelihood(lp, lc, k, r, mult, gold, indptr, cell, count, g_prev, gt):  # pragma: no cover
    r""":math:`\sum_p m_p \ell_p` at log prevalence ``lp (K)`` and log confusion rows
    ``lc (R*K, K)``; adds :math:`\sum_p m_p w_{pc}` to ``g_prev`` and
    :math:`\sum_p m_p w_{pc} n_e` to ``gt[cell_e, c]`` (``gt``: (R*K, K), indexed by
    (rater, label) then class).  -inf when a pattern has probability 0."""
    pv = np.empty(k)
    lct = np.empty((r * k, k))  # [(rater, label), class]: an entry's classes contiguous
    th = np.empty((r * k, k))
    for c in range(k):
        pv[c] = math.exp(lp[c])
    for rr in range(r):
        for c in range(k):
            for l_ in range(k):
                v = lc[rr * k + c, l_]
                lct[rr * k + l_, c] = v
                th[rr * k + l_, c] = math.exp(v)
    prod = np.empty(k)
    w = np.empty(k)
    total = 0.0  # log terms of multiplicities > 1, rescalings and slow patterns
    mant, expo = 1.0, 0  # running product of the other patterns' totals
    for q in range(indptr.size - 1):
        lo, hi = int(indptr[q]), int(indptr[q + 1])
        gq = int(gold[q])
        for c in range(k):
            prod[c] = pv[c] if gq < 0 or c == gq else 0.0
        for e in range(lo, hi):
            o = int(cell[e])
            n_e = count[e]
            if n_e == 1.0:
                for c in range(k):
                    prod[c] *= th[o, c]
            else:
                for c in range(k):
                    prod[c] *= math.exp(n_e * lct[o, c])
        s = 0.0
        for c in range(k):
            s += prod[c]
        m_q = mult[q]
        if s > TINY and s < HUGE:
            inv = 1.0 / s
            for c in range(k):
                w[c] = prod[c] * inv
            if m_q == 1.0:
                mant *= s
                if mant < TINY:
                    mant, ex = math.frexp(mant)
                    expo += ex
            else:
                total += m_q * math.log(s)
        else:  # near underflow (a draw far in the tails): redo it in log space
            ell = _pattern_logspace(lp, lct, k, gq, lo, hi, cell, count, w)
            if not math.isfinite(ell):
                return -np.inf
            total += m_q * ell
        for c in range(k):
            w[c] *= m_q
            g_prev[c] += w[c]
        for e in range(lo, hi):
            o = int(cell[e])
            n_e = count[e]
            for c in range(k):
                gt[o, c] += w[c] * n_e
    return total + math.log(mant) + expo * LOG2


@numba.njit(cache=True)
def _likelihood_k(lp, lc, k, r, mult, gold, indptr, cell, count, g_prev, gt):  # pragma: no cover
    numba.literally(k)  # compiled once per K, the class loops unrolled
    return likelihood(lp, lc, k, r, mult, gold, indptr, cell, count, g_prev, gt)


@numba.njit(cache=True)
def fast_likelihood(lp, lc, k, r, mult, gold, indptr, cell, count, g_prev, gt):  # pragma: no cover
    """:func:`likelihood` with K a compile-time constant for K <= 5 (a third faster at
    K = 5: the loops over the classes unroll; each K compiles once, cached on disk)."""
    if k == 2:
        return _likelihood_k(lp, lc, 2, r, mult, gold, indptr, cell, count, g_prev, gt)
    if k == 3:
        return _likelihood_k(lp, lc, 3, r, mult, gold, indptr, cell, count, g_prev, gt)
    if k == 4:
        return _likelihood_k(lp, lc, 4, r, mult, gold, indptr, cell, count, g_prev, gt)
    if k == 5:
        return _likelihood_k(lp, lc, 5, r, mult, gold, indptr, cell, count, g_prev, gt)
    return likelihood(lp, lc, k, r, mult, gold, indptr, cell, count, g_prev, gt)


@numba.njit(cache=True)
def _unpack(par):  # pragma: no cover - compiled
    k, r, p, e = int(par[0]), int(par[1]), int(par[2]), int(par[3])
    d = (k - 1) * (1 + r * k)
    o = HEAD
    alpha = par[o:o + k]
    o += k
    beta = par[o:o + r * k * k]
    o += r * k * k
    y0 = par[o:o + d]
    o += d
    mult = par[o:o + p]
    o += p
    gold = par[o:o + p]
    o += p
    indptr = par[o:o + p + 1]
    o += p + 1
    cell = par[o:o + e]
    o += e
    count = par[o:o + e]
    return k, r, alpha, beta, y0, mult, gold, indptr, cell, count


@numba.njit(cache=True)
def _logs(x, k, r, y0):  # pragma: no cover - compiled
    """log prevalence (K,) and log confusion (R*K, K) at kernel coordinates x."""
    y = x + y0
    lp = np.empty(k)
    _log_simplex(y, 0, k, lp)
    lc = np.empty((r * k, k))
    for g in range(r * k):
        _log_simplex(y, (k - 1) * (1 + g), k, lc[g])
    return lp, lc


@numba.njit(cache=True)
def log_density(x, par, grad):  # pragma: no cover - compiled
    """Log density at kernel coordinates ``x``; writes the gradient into ``grad``."""
    k, r, alpha, beta, y0, mult, gold, indptr, cell, count = _unpack(par)
    lp, lc = _logs(x, k, r, y0)
    g_prev = alpha.copy()
    gt = np.zeros((r * k, k))
    total = fast_likelihood(lp, lc, k, r, mult, gold, indptr, cell, count, g_prev, gt)
    if not math.isfinite(total):
        return -np.inf
    for c in range(k):
        total += alpha[c] * lp[c]
    for g in range(r * k):
        for l_ in range(k):
            total += beta[g * k + l_] * lc[g, l_]
    _simplex_grad(g_prev, lp, k, grad, 0)
    g_row = np.empty(k)
    for rr in range(r):
        for c in range(k):
            g = rr * k + c
            for l_ in range(k):
                g_row[l_] = beta[g * k + l_] + gt[rr * k + l_, c]
            _simplex_grad(g_row, lc[g], k, grad, (k - 1) * (1 + g))
    return total


@numba.cfunc(LOGP_SIG, cache=True, nopython=True)
def logp(dim, x_, grad_, logp_, user_data_):  # pragma: no cover - compiled
    par = numba.carray(user_data_, (_size(numba.carray(user_data_, (HEAD,))),))
    x = numba.carray(x_, (dim,))
    grad = numba.carray(grad_, (dim,))
    out = numba.carray(logp_, (1,))
    value = log_density(x, par, grad)
    out[0] = value
    if not math.isfinite(value):
        return 4
    for i in range(dim):
        if not math.isfinite(grad[i]):
            return 3
    return 0


@numba.cfunc(EXPAND_SIG, cache=True, nopython=True)
def expand(dim, n_expanded, x_, out_, user_data_):  # pragma: no cover - compiled
    """prevalence (K), then confusion (R, K, K) row-major."""
    par = numba.carray(user_data_, (_size(numba.carray(user_data_, (HEAD,))),))
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (n_expanded,))
    k, r, _, _, y0, _, _, _, _, _ = _unpack(par)
    lp, lc = _logs(x, k, r, y0)
    for c in range(k):
        out[c] = math.exp(lp[c])
    for g in range(r * k):
        for l_ in range(k):
            out[k + g * k + l_] = math.exp(lc[g, l_])
    return 0


def csr(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``indptr (P+1)``, ``cell (E)`` = rater * K + label, ``count (E)`` of the patterns'
    nonzero entries (``counts (P, R, K)``), as floats for ``user_data``."""
    n_pat, _, k = counts.shape
    p_, r_, l_ = np.nonzero(counts)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(p_, minlength=n_pat))])
    return indptr.astype(float), (r_ * k + l_).astype(float), counts[p_, r_, l_].astype(float)
