r"""Compiled log density and gradient of the Hui–Walter model, for nutpie.

The density is that of :func:`bayescm.models.hui_walter` in PyMC's own
unconstrained coordinates (the tests compare it with ``model.compile_logp`` and
``model.compile_dlogp`` at random points):

* :math:`Se_t = \sigma(x_t)` (log-odds),
* :math:`Sp_t = 1 - Se_t\,\sigma(-y_t)` (interval transform on :math:`(1 - Se_t, 1)`),
* :math:`\pi_p = \sigma(z_p)`, covariance positions :math:`u_k = \sigma(w_k)`.

Up to a constant the log density is

.. math::

    \sum_t \bigl[(a_t + 1)\log Se_t + b_t \log(1 - Se_t) + \log\sigma(y_t)\sigma(-y_t)
    + (c_t - 1)\log Sp_t + (d_t - 1)\log(1 - Sp_t)\bigr]
    + \sum_p \bigl[e_p \log \pi_p + f_p \log(1 - \pi_p)\bigr]
    + \sum_k \log\sigma(w_k)\sigma(-w_k) + \sum_{p,c} y_{pc} \log \Pr_p(c),

    \Pr_p(c) = \pi_p \sum_r \mathrm{pos}_{cr} \Pr(r \mid D^+)
             + (1 - \pi_p) \sum_r \mathrm{neg}_{cr} \Pr(r \mid D^-)

over the cells c of the table (:mod:`bayescm.data.agreement_cells`; for a complete table
``pos = neg = I`` and the cells are the patterns, a case the kernel takes without the
matrix products).  The multinomial coefficients of the blocks are constants and left
out (the exponent :math:`a_t + 1` collects the Beta prior, the log-odds Jacobian and the
Jacobian of Sp's interval, whose width is Se).  The gradient follows by the chain
rule through the pattern products, the covariance bounds and Sp's dependence on Se.
Compiled once and cached on disk by numba; shapes are read from ``user_data``:
``[T, P, K, R, C, complete, counts(P*C), pos(C*R), neg(C*R), a(T), b(T), c(T), d(T),
e(P), f(P), pair_i(K), pair_j(K)]``.
"""

import math

import numba
import numpy as np
from numba import types

_dp = types.CPointer(types.double)
LOGP_SIG = types.int64(types.uint64, _dp, _dp, _dp, _dp)
EXPAND_SIG = types.int64(types.uint64, types.uint64, _dp, _dp, _dp)


@numba.njit(cache=True, error_model="numpy")
def _logsig(v):  # pragma: no cover - compiled
    if v > 0:
        return -math.log1p(math.exp(-v))
    return v - math.log1p(math.exp(v))


@numba.njit(cache=True, error_model="numpy")
def _sig(v):  # pragma: no cover - compiled
    return math.exp(_logsig(v))


@numba.njit(cache=True, error_model="numpy")
def _bounds(ri, rj, k):  # pragma: no cover - compiled
    """Covariance bounds of a pair with positive rates ri, rj and their derivatives."""
    f1 = -(1 - ri) * (1 - rj)
    f2 = -ri * rj
    if f1 >= f2:
        lo, dlo_i, dlo_j = f1, 1 - rj, 1 - ri
    else:
        lo, dlo_i, dlo_j = f2, -rj, -ri
    g1 = ri * (1 - rj)
    g2 = (1 - ri) * rj
    if g1 <= g2:
        hi, dhi_i, dhi_j = g1, 1 - rj, -ri
    else:
        hi, dhi_i, dhi_j = g2, -rj, 1 - ri
    return lo / k, hi / k, dlo_i / k, dlo_j / k, dhi_i / k, dhi_j / k


@numba.njit(cache=True, error_model="numpy")
def _class_terms(rate, u, pair_i, pair_j, t_, r_, k_):  # pragma: no cover - compiled
    """Pattern probabilities of one latent class, and what the gradient needs.

    ``rate[t]`` is P(classifier t says positive | class).  Returns the pattern
    probabilities, the covariances, the cross terms ``s_rk O_rk`` and the bound
    derivatives.
    """
    q = np.empty((r_, t_))
    for r in range(r_):
        for t in range(t_):
            pos = ((r >> (t_ - 1 - t)) & 1) == 0
            q[r, t] = rate[t] if pos else 1.0 - rate[t]
    prob = np.ones(r_)
    for r in range(r_):
        for t in range(t_):
            prob[r] *= q[r, t]
    cov = np.zeros(k_)
    dcov = np.zeros((k_, 4))  # dc/d rate_i, dc/d rate_j, dc/du, spare
    cross = np.zeros((r_, k_))
    for k in range(k_):
        i, j = pair_i[k], pair_j[k]
        lo, hi, dlo_i, dlo_j, dhi_i, dhi_j = _bounds(rate[i], rate[j], k_)
        cov[k] = lo + u[k] * (hi - lo)
        dcov[k, 0] = (1 - u[k]) * dlo_i + u[k] * dhi_i
        dcov[k, 1] = (1 - u[k]) * dlo_j + u[k] * dhi_j
        dcov[k, 2] = hi - lo
        for r in range(r_):
            same = (((r >> (t_ - 1 - i)) & 1) == ((r >> (t_ - 1 - j)) & 1))
            other = 1.0
            for t in range(t_):
                if t != i and t != j:
                    other *= q[r, t]
            cross[r, k] = other if same else -other
            prob[r] += cov[k] * cross[r, k]
    return q, prob, cov, dcov, cross


@numba.njit(cache=True, error_model="numpy")
def _rate_gradient(q, g, cov, dcov, cross, pair_i, pair_j, t_, r_, k_):  # pragma: no cover
    """d(sum_r g_r log-likelihood part) / d rate_t, and d/du_k, for one class."""
    drate = np.zeros(t_)
    du = np.zeros(k_)
    for r in range(r_):
        if g[r] == 0.0:
            continue
        for t in range(t_):
            sign = 1.0 if ((r >> (t_ - 1 - t)) & 1) == 0 else -1.0
            rest = 1.0
            for v in range(t_):
                if v != t:
                    rest *= q[r, v]
            deriv = sign * rest
            for k in range(k_):
                i, j = pair_i[k], pair_j[k]
                if t == i or t == j:
                    continue
                other = 1.0
                for v in range(t_):
                    if v != i and v != j and v != t:
                        other *= q[r, v]
                same = (((r >> (t_ - 1 - i)) & 1) == ((r >> (t_ - 1 - j)) & 1))
                deriv += cov[k] * (1.0 if same else -1.0) * sign * other
            drate[t] += g[r] * deriv
    for k in range(k_):
        s = 0.0
        for r in range(r_):
            s += g[r] * cross[r, k]
        drate[pair_i[k]] += s * dcov[k, 0]
        drate[pair_j[k]] += s * dcov[k, 1]
        du[k] = s * dcov[k, 2]
    return drate, du


HEAD = 6


@numba.njit(cache=True, error_model="numpy")
def _size(head):  # pragma: no cover - compiled
    """Length of user_data from its header."""
    t_, p_, k_, r_, c_ = int(head[0]), int(head[1]), int(head[2]), int(head[3]), int(head[4])
    return HEAD + p_ * c_ + 2 * c_ * r_ + 4 * t_ + 2 * p_ + 2 * k_


@numba.njit(cache=True, error_model="numpy", inline="always")
def _unpack(par):  # pragma: no cover - compiled
    t_, p_, k_, r_, c_ = int(par[0]), int(par[1]), int(par[2]), int(par[3]), int(par[4])
    full = par[5] > 0.5
    o = HEAD
    counts = par[o:o + p_ * c_].reshape((p_, c_))
    o += p_ * c_
    pos = par[o:o + c_ * r_].reshape((c_, r_))
    o += c_ * r_
    neg = par[o:o + c_ * r_].reshape((c_, r_))
    o += c_ * r_
    a, b, c, d = par[o:o + t_], par[o + t_:o + 2 * t_], par[o + 2 * t_:o + 3 * t_], \
        par[o + 3 * t_:o + 4 * t_]
    o += 4 * t_
    e, f = par[o:o + p_], par[o + p_:o + 2 * p_]
    o += 2 * p_
    pair_i = np.empty(k_, dtype=np.int64)
    pair_j = np.empty(k_, dtype=np.int64)
    for k in range(k_):
        pair_i[k] = int(par[o + k])
        pair_j[k] = int(par[o + k_ + k])
    return t_, p_, k_, r_, c_, full, counts, pos, neg, a, b, c, d, e, f, pair_i, pair_j


@numba.njit(cache=True, error_model="numpy", inline="always")
def _matvec(full, m, v, back):  # pragma: no cover - compiled
    """``m @ v`` (one class's cell probabilities from its patterns') or, with ``back``,
    ``m.T @ v`` (the cells' gradient carried back to the patterns); ``v`` itself for
    a complete table (``m = I``)."""
    if full:
        return v
    out = np.zeros(m.shape[1] if back else m.shape[0])
    for c in range(m.shape[0]):
        for r in range(m.shape[1]):
            if m[c, r] != 0.0:
                if back:
                    out[r] += v[c]
                else:
                    out[c] += v[r]
    return out


@numba.njit(cache=True, error_model="numpy")
def _parameters(x, t_, p_, k_):  # pragma: no cover - compiled
    se = np.empty(t_)
    sp = np.empty(t_)
    prev = np.empty(p_)
    u_se = np.empty(k_)
    u_sp = np.empty(k_)
    for t in range(t_):
        se[t] = _sig(x[t])
        sp[t] = 1.0 - se[t] * _sig(-x[t_ + t])
    for p in range(p_):
        prev[p] = _sig(x[2 * t_ + p])
    for k in range(k_):
        u_se[k] = _sig(x[2 * t_ + p_ + k])
        u_sp[k] = _sig(x[2 * t_ + p_ + k_ + k])
    return se, sp, prev, u_se, u_sp


@numba.njit(cache=True, error_model="numpy")
def log_density(x, par, grad):  # pragma: no cover - compiled
    """Log density at unconstrained ``x``; writes the gradient into ``grad``."""
    t_, p_, k_, r_, c_, full, counts, pos, neg, a, b, c, d, e, f, pair_i, pair_j = _unpack(par)
    se, sp, prev, u_se, u_sp = _parameters(x, t_, p_, k_)
    q1, prob1, cov1, dcov1, cross1 = _class_terms(se, u_se, pair_i, pair_j, t_, r_, k_)
    neg_rate = 1.0 - sp
    q0, prob0, cov0, dcov0, cross0 = _class_terms(neg_rate, u_sp, pair_i, pair_j, t_, r_, k_)
    cell1 = _matvec(full, pos, prob1, False)
    cell0 = _matvec(full, neg, prob0, False)
    total = 0.0
    h1 = np.zeros(c_)
    h0 = np.zeros(c_)
    gprev = np.zeros(p_)
    for p in range(p_):
        for j in range(c_):
            y = counts[p, j]
            if y == 0.0:
                continue
            pr = prev[p] * cell1[j] + (1 - prev[p]) * cell0[j]
            if not pr > 0.0:
                return -np.inf
            total += y * math.log(pr)
            gr = y / pr
            h1[j] += gr * prev[p]
            h0[j] += gr * (1 - prev[p])
            gprev[p] += gr * (cell1[j] - cell0[j])
    g1 = _matvec(full, pos, h1, True)
    g0 = _matvec(full, neg, h0, True)
    dse, du_se = _rate_gradient(q1, g1, cov1, dcov1, cross1, pair_i, pair_j, t_, r_, k_)
    dneg, du_sp = _rate_gradient(q0, g0, cov0, dcov0, cross0, pair_i, pair_j, t_, r_, k_)
    for t in range(t_):
        xs, ys = x[t], x[t_ + t]
        lse, l1se = _logsig(xs), _logsig(-xs)
        lsy, lsmy = _logsig(ys), _logsig(-ys)
        smy = math.exp(lsmy)
        sy = math.exp(lsy)
        log_1msp = lse + lsmy  # 1 - Sp = Se sigma(-y)
        total += (a[t] + 1) * lse + b[t] * l1se + lsy + lsmy
        total += (c[t] - 1) * math.log(sp[t]) + (d[t] - 1) * log_1msp
        # written without 1/(1 - Se) and 1/(1 - Sp), which overflow at the edges:
        # (1 - Sp) = Se sigma(-y) cancels against the Jacobian factors
        w_se = se[t] * (1 - se[t])
        dsp_part = -dneg[t] + (c[t] - 1) / sp[t]
        grad[t] = (dse[t] * w_se + (a[t] + 1) * (1 - se[t]) - b[t] * se[t]
                   - dsp_part * smy * w_se + (d[t] - 1) * (1 - se[t]))
        grad[t_ + t] = dsp_part * se[t] * sy * smy - (d[t] - 1) * sy + (smy - sy)
    for p in range(p_):
        zp = x[2 * t_ + p]
        total += e[p] * _logsig(zp) + f[p] * _logsig(-zp)
        grad[2 * t_ + p] = (gprev[p] * prev[p] * (1 - prev[p]) + e[p] * (1 - prev[p])
                            - f[p] * prev[p])
    for k in range(k_):
        for off, uu, du in ((0, u_se, du_se), (k_, u_sp, du_sp)):
            w = x[2 * t_ + p_ + off + k]
            total += _logsig(w) + _logsig(-w)
            grad[2 * t_ + p_ + off + k] = (1 - 2 * uu[k]) + du[k] * uu[k] * (1 - uu[k])
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
    """sensitivity, specificity, prevalence[, cov positions, cov_se, cov_sp], pattern_prob
    (the cell probabilities)."""
    par = numba.carray(user_data_, (_size(numba.carray(user_data_, (HEAD,))),))
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (n_expanded,))
    t_, p_, k_, r_, c_, full, _, pos, neg, _, _, _, _, _, _, pair_i, pair_j = _unpack(par)
    se, sp, prev, u_se, u_sp = _parameters(x, t_, p_, k_)
    _, prob1, cov1, _, _ = _class_terms(se, u_se, pair_i, pair_j, t_, r_, k_)
    _, prob0, cov0, _, _ = _class_terms(1.0 - sp, u_sp, pair_i, pair_j, t_, r_, k_)
    cell1 = _matvec(full, pos, prob1, False)
    cell0 = _matvec(full, neg, prob0, False)
    o = 0
    for arr in (se, sp, prev, u_se, u_sp, cov1, cov0):
        for v in arr:
            out[o] = v
            o += 1
    for p in range(p_):
        for j in range(c_):
            out[o] = prev[p] * cell1[j] + (1 - prev[p]) * cell0[j]
            o += 1
    return 0
