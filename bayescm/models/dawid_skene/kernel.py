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
    + \sum_p m_p \operatorname{logsumexp}_c J_{pc},\qquad
    J_{pc} = \log \pi_c + \sum_{e \in p} n_e \log \theta_{r_e c l_e}

over the gold-allowed classes (the simplex Jacobian :math:`K \prod_i \theta_i` turns
:math:`\alpha - 1` into :math:`\alpha`).  With :math:`w_{pc} = \operatorname{softmax}_c
J_{pc}`, the gradient with respect to a simplex's log-probabilities is
:math:`g_i = \alpha_i + \sum_p m_p w_{pc} (\cdots)`, and with respect to its
coordinates :math:`(g_j - g_K) - (\sum_i g_i)(\theta_j - \theta_K)`.  ``user_data`` is
``[K, R, P, E, alpha(K), beta(R*K*K), y0(D), m(P), gold(P), indptr(P+1), rater(E),
label(E), count(E)]`` with :math:`D = (K-1)(1 + RK)` and the patterns' nonzero entries
in CSR form (:class:`~bayescm.data.ratings_patterns.RatingPatterns`).
"""

import math

import numba
import numpy as np
from numba import types

_dp = types.CPointer(types.double)
LOGP_SIG = types.int64(types.uint64, _dp, _dp, _dp, _dp)
EXPAND_SIG = types.int64(types.uint64, types.uint64, _dp, _dp, _dp)
HEAD = 4


@numba.njit(cache=True)
def _size(head):  # pragma: no cover - compiled
    k, r, p, e = int(head[0]), int(head[1]), int(head[2]), int(head[3])
    d = (k - 1) * (1 + r * k)
    return HEAD + k + r * k * k + d + 2 * p + (p + 1) + 3 * e


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
    rater = par[o:o + e]
    o += e
    label = par[o:o + e]
    o += e
    count = par[o:o + e]
    return k, r, p, alpha, beta, y0, mult, gold, indptr, rater, label, count


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
    k, r, p, alpha, beta, y0, mult, gold, indptr, rater, label, count = _unpack(par)
    lp, lc = _logs(x, k, r, y0)
    # (rater, label) x class: an entry's log-probabilities over the classes are contiguous
    lct = np.empty((r * k, k))
    for rr in range(r):
        for c in range(k):
            for l_ in range(k):
                lct[rr * k + l_, c] = lc[rr * k + c, l_]
    off = np.empty(rater.size, dtype=np.int64)
    for e in range(rater.size):
        off[e] = int(rater[e]) * k + int(label[e])
    g_prev = alpha.copy()
    gt = np.zeros((r * k, k))  # likelihood part of the rows' gradient, transposed as lct
    total = 0.0
    for c in range(k):
        total += alpha[c] * lp[c]
    for g in range(r * k):
        for l_ in range(k):
            total += beta[g * k + l_] * lc[g, l_]
    joint = np.empty(k)
    for q in range(p):
        lo, hi = int(indptr[q]), int(indptr[q + 1])
        gq = int(gold[q])
        for c in range(k):
            joint[c] = lp[c]
        for e in range(lo, hi):
            n_e = count[e]
            o = off[e]
            for c in range(k):
                joint[c] += n_e * lct[o, c]
        top = -np.inf
        for c in range(k):
            if gq >= 0 and c != gq:
                joint[c] = -np.inf
            elif joint[c] > top:
                top = joint[c]
        if not math.isfinite(top):
            return -np.inf
        s = 0.0
        for c in range(k):
            if joint[c] > -np.inf:
                joint[c] = math.exp(joint[c] - top)
                s += joint[c]
            else:
                joint[c] = 0.0
        total += mult[q] * (top + math.log(s))
        scale = mult[q] / s
        for c in range(k):
            joint[c] *= scale  # m_q times the class posterior
            g_prev[c] += joint[c]
        for e in range(lo, hi):
            n_e = count[e]
            o = off[e]
            for c in range(k):
                gt[o, c] += joint[c] * n_e
    _simplex_grad(g_prev, lp, k, grad, 0)
    g_row = np.empty(k)
    for rr in range(r):
        for c in range(k):
            g = rr * k + c
            for l_ in range(k):
                g_row[l_] = beta[g * k + l_] + gt[rr * k + l_, c]
            _simplex_grad(g_row, lc[g], k, grad, (k - 1) * (1 + g))
    return total


@numba.njit(cache=True)
def _simplex_grad(g, logp, k, grad, start):  # pragma: no cover - compiled
    gs = 0.0
    for i in range(k):
        gs += g[i]
    thk = math.exp(logp[k - 1])
    for j in range(k - 1):
        grad[start + j] = (g[j] - g[k - 1]) - gs * (math.exp(logp[j]) - thk)


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
    k, r, _, _, _, y0, _, _, _, _, _, _ = _unpack(par)
    lp, lc = _logs(x, k, r, y0)
    for c in range(k):
        out[c] = math.exp(lp[c])
    for g in range(r * k):
        for l_ in range(k):
            out[k + g * k + l_] = math.exp(lc[g, l_])
    return 0
