r"""Compiled log density and gradient of the ``items`` model, for nutpie.

The density is that of :func:`bayescm.models.items` in PyMC's unconstrained
coordinates (the tests compare it with ``model.compile_logp`` and
``model.compile_dlogp`` at random points), variables in the builder's order:
``location`` :math:`\beta_m` as is; each scale on the log scale (:math:`\sigma = e^{x}`,
Jacobian :math:`e^{x}`); ``z_offset`` :math:`m` as is; the item effects' and the
cluster effects' sum-to-zero parts through PyMC's ``ZeroSumTransform`` (L - 1 free
coordinates :math:`y` give :math:`z_l = y_l - \sum y/(\sqrt L + L)` for
:math:`l < L - 1` and :math:`z_{L-1} = -\sum y/\sqrt L`, an isometry, log-Jacobian 0),
with log density :math:`-\tfrac12\sum_l z_l^2/\sigma^2 - (L - 1)(\tfrac12\log 2\pi +
\log\sigma)` (:math:`\sigma = 1` for the standardised, non-centred ``z``).

With :math:`\eta_{mi} = \beta_m + \tilde u_i + \tilde v_{c(i)}` the log-likelihood is
:math:`\sum y\log\sigma(\eta) + (n - y)\log\sigma(-\eta) = \sum y\eta - n\log(1 + e^\eta)`
+ const, with
:math:`\partial_\eta = y - n\sigma(\eta)`.  The accuracy prior is Beta(a_m, b_m) on
:math:`A(\alpha_m, s)` times :math:`\partial_\alpha A` with
:math:`\alpha_m = \beta_m - \tau m`, :math:`\tau^2 = \sigma_u^2/N + \sigma_v^2/C`,
:math:`s^2 = \sigma_u^2 + \sigma_v^2` (:mod:`bayescm.models.items.quadrature`, the same
nodes).  Constants (normalisers, binomial coefficients, Beta functions) are included,
so the value equals PyMC's.

The likelihood's cost is the :math:`M\times N` cells of
:math:`n\log(1 + e^{\eta})`: :math:`\sum y\eta` is linear and needs only each
model's and each item's total successes, and the softplus terms are summed as logs
of block products of :math:`1 + e^{\beta_m}e^{w_i}` (no exponential or log per
cell; a stable per-cell path takes over far out in the tails).

``user_data``: ``[M, N, C, clustered (0; 1 non-centred, 2 centred cluster effects),
centred_item, max trials, const, K, scale_item,
scale_cluster, a(M), b(M), nodes(K), weights(K), cluster(N), trials(M*N),
successes per model (M), successes per item (N), each model's trials per item where
they are all equal, else -1 (M)]``.
"""

import math

import numba
import numpy as np
from numba import types

_dp = types.CPointer(types.double)
LOGP_SIG = types.int64(types.uint64, _dp, _dp, _dp, _dp)
EXPAND_SIG = types.int64(types.uint64, types.uint64, _dp, _dp, _dp)
HEAD = 8
HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
HALF_LOG_2_OVER_PI = 0.5 * math.log(2.0 / math.pi)
LN2 = math.log(2.0)


@numba.njit(cache=True, error_model="numpy")
def _size(head):  # pragma: no cover - compiled
    m_, n_, k_ = int(head[0]), int(head[1]), int(head[7])
    return HEAD + 2 + 3 * m_ + 2 * k_ + 2 * n_ + m_ * n_


@numba.njit(cache=True, error_model="numpy")
def _scale_prior(x, scale):  # pragma: no cover - compiled
    """HalfNormal(scale) on sigma = exp(x), Jacobian included: value, d/dx, sigma."""
    sig = math.exp(x)
    u = sig / scale
    return HALF_LOG_2_OVER_PI - math.log(scale) - 0.5 * u * u + x, 1.0 - u * u, sig


@numba.njit(cache=True, error_model="numpy")
def _zero_sum(x, start, nl):  # pragma: no cover - compiled
    """PyMC's ZeroSumTransform: L values summing to zero from L - 1 coordinates."""
    z = np.empty(nl)
    if nl == 0:
        return z
    total = 0.0
    for k in range(nl - 1):
        total += x[start + k]
    norm = total / (math.sqrt(nl) + nl)
    for k in range(nl - 1):
        z[k] = x[start + k] - norm
    z[nl - 1] = -total / math.sqrt(nl)
    return z


@numba.njit(cache=True, error_model="numpy")
def _zero_sum_grad(g, grad, start, nl):  # pragma: no cover - compiled
    """d/dy from d/dz through the transform's Jacobian."""
    if nl <= 1:
        return
    head = 0.0
    for k in range(nl - 1):
        head += g[k]
    c_all, c_last = 1.0 / (math.sqrt(nl) + nl), 1.0 / math.sqrt(nl)
    for k in range(nl - 1):
        grad[start + k] = g[k] - c_all * head - c_last * g[nl - 1]


@numba.njit(cache=True, error_model="numpy", fastmath={"reassoc", "contract", "arcp"})
def _softplus_rows_blocked(beta, ew, ns, row, n_, gi, block):  # pragma: no cover - compiled
    r"""One model's :math:`\sum_i n_i\log(1 + e^{\beta + w_i})` and
    :math:`\sum_i n_i\sigma(\beta + w_i)` (the latter also subtracted from ``gi``).

    :math:`1 + e^{\beta}e^{w_i}` needs no exponential per cell, and the logs of a
    block's cells are one log of their product, renormalised by ``frexp`` so it
    never overflows (the caller sizes ``block`` so that a block's product stays
    below :math:`e^{700}`).  Only reassociation, contraction and reciprocals are
    relaxed, so the loop vectorises while infinities and NaNs still propagate.
    """
    big_b = math.exp(beta)
    mant, expo, ga = 1.0, 0, 0.0
    i = 0
    while i < n_:
        hi = min(n_, i + block)
        prod = 1.0
        for j in range(i, hi):
            t = big_b * ew[j]
            u = 1.0 + t
            n = ns[row + j]
            if n == 1.0:
                pw = u
            elif n == 3.0:
                pw = u * u * u
            elif n == 2.0:
                pw = u * u
            elif n == 0.0:
                pw = 1.0
            else:
                pw = u ** n
            prod *= pw
            q = n * t / u
            ga += q
            gi[j] -= q
        mant, e = math.frexp(prod * mant)
        expo += e
        i = hi
    return ga, math.log(mant) + expo * LN2


@numba.njit(cache=True, error_model="numpy", fastmath={"reassoc", "contract", "arcp"})
def _softplus_row_equal(beta, ew, n, n_, gi, block):  # pragma: no cover - compiled
    r"""The same sums for a model whose every item has ``n`` trials (the usual
    design): :math:`n\log\prod(1 + e^{\eta})`, blocks sized for one factor each."""
    big_b = math.exp(beta)
    mant, expo, ga = 1.0, 0, 0.0
    i = 0
    while i < n_:
        hi = min(n_, i + block)
        prod = 1.0
        for j in range(i, hi):
            t = big_b * ew[j]
            u = 1.0 + t
            prod *= u
            q = n * t / u
            ga += q
            gi[j] -= q
        mant, e = math.frexp(prod * mant)
        expo += e
        i = hi
    return ga, n * (math.log(mant) + expo * LN2)


@numba.njit(cache=True, error_model="numpy")
def _softplus_rows_stable(beta, w, ns, row, n_, gi):  # pragma: no cover - compiled
    """The same sums, one stable softplus per cell (far out in the tails)."""
    ga, tm = 0.0, 0.0
    for j in range(n_):
        eta = beta + w[j]
        e = math.exp(-abs(eta))
        n = ns[row + j]
        if eta > 0:
            tm += n * (eta + math.log1p(e))
            q = n / (1.0 + e)
        else:
            tm += n * math.log1p(e)
            q = n * e / (1.0 + e)
        ga += q
        gi[j] -= q
    return ga, tm


@numba.njit(cache=True, error_model="numpy", fastmath={"reassoc", "contract", "arcp"})
def _logistic_moments_fast(big_a, en, nodes, weights, k_):  # pragma: no cover - compiled
    r""":func:`_logistic_moments` from :math:`e^\alpha` and :math:`e^{s z_k}`."""
    acc, rest, a1, a2, a_s, a1_s = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    for k in range(k_):
        t = big_a * en[k]
        q = 1.0 / (1.0 + t)
        p = t * q
        wk = weights[k]
        pq = wk * p * q
        acc += wk * p
        rest += wk * q
        a1 += pq
        a2 += pq * (q - p)
        a_s += pq * nodes[k]
        a1_s += pq * (q - p) * nodes[k]
    return acc, rest, a1, a2, a_s, a1_s


@numba.njit(cache=True, error_model="numpy")
def _logistic_moments(am, s, nodes, weights, k_):  # pragma: no cover - compiled
    r"""Quadrature moments of :math:`p = \sigma(\alpha + s z)` over N(0, 1): the
    accuracy :math:`A = E p`, :math:`E q`, :math:`\partial_\alpha A = E pq`,
    :math:`E pq(q - p)` and both weighted by :math:`z` (the derivatives in s)."""
    acc, rest, a1, a2, a_s, a1_s = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    for k in range(k_):
        eta = am + s * nodes[k]
        e = math.exp(-abs(eta))
        if eta > 0:
            p, q = 1.0 / (1.0 + e), e / (1.0 + e)
        else:
            p, q = e / (1.0 + e), 1.0 / (1.0 + e)
        wk = weights[k]
        pq = p * q
        acc += wk * p
        rest += wk * q
        a1 += wk * pq
        a2 += wk * pq * (q - p)
        a_s += wk * pq * nodes[k]
        a1_s += wk * pq * (q - p) * nodes[k]
    return acc, rest, a1, a2, a_s, a1_s


@numba.njit(cache=True, error_model="numpy")
def _density(x, grad, par):  # pragma: no cover - compiled
    m_, n_, c_ = int(par[0]), int(par[1]), int(par[2])
    # par[3]: 0 no clusters, 1 non-centred cluster effects, 2 centred ones
    clustered, centred, centred_c = par[3] > 0, par[4] > 0, par[3] > 1.5
    total = par[6]
    k_ = int(par[7])
    sc_i, sc_c = par[8], par[9]
    o = HEAD + 2
    a, b = par[o:o + m_], par[o + m_:o + 2 * m_]
    o += 2 * m_
    nodes, weights = par[o:o + k_], par[o + k_:o + 2 * k_]
    o += 2 * k_
    cl = par[o:o + n_]
    o += n_
    ns = par[o:o + m_ * n_]
    o += m_ * n_
    ym_tot, yi_tot = par[o:o + m_], par[o + m_:o + m_ + n_]
    row_n = par[o + m_ + n_:o + 2 * m_ + n_]
    n_max = par[5]
    # layout: location (M), log sigma_item, [log sigma_cluster], z_offset, items, clusters
    xi = m_
    v, d_ls_i, sig_i = _scale_prior(x[xi], sc_i)
    total += v
    xc = xi + 1
    sig_c, d_ls_c = 0.0, 0.0
    if clustered:
        v, d_ls_c, sig_c = _scale_prior(x[xc], sc_c)
        total += v
    xm = xi + (2 if clustered else 1)
    zm = x[xm]
    total += -0.5 * zm * zm - HALF_LOG_2PI
    start_i = xm + 1
    start_c = start_i + n_ - 1
    zi = _zero_sum(x, start_i, n_)
    q_i = sig_i if centred else 1.0
    for i in range(n_):
        total -= 0.5 * (zi[i] / q_i) ** 2
    total -= (n_ - 1) * (HALF_LOG_2PI + math.log(q_i))
    w = np.empty(n_)
    for i in range(n_):
        w[i] = zi[i] if centred else sig_i * zi[i]
    zc = _zero_sum(x, start_c, c_)
    if clustered:
        q_c = sig_c if centred_c else 1.0
        for c in range(c_):
            total -= 0.5 * (zc[c] / q_c) ** 2
        total -= (c_ - 1) * (HALF_LOG_2PI + math.log(q_c))
        for i in range(n_):
            w[i] += zc[int(cl[i])] * (1.0 if centred_c else sig_c)
    # likelihood: sum y*eta + (terms in n only) - n log(1 + e^eta); the linear part
    # needs only the totals per model and per item
    gi = np.empty(n_)
    for i in range(n_):
        total += w[i] * yi_tot[i]
        gi[i] = yi_tot[i]
    bound = 0.0
    for i in range(n_):
        bound = max(bound, abs(w[i]))
    top = 0.0
    for m in range(m_):
        total += x[m] * ym_tot[m]
        top = max(top, abs(x[m]))
    bound += top
    # -sum n log(1 + e^eta) as the log of block products: one log per block, not
    # per cell.  A block holds as many cells as keep the product below e^700.
    block = min(int(700.0 / (n_max * (bound + 1.0))) if n_max > 0 else 64, 64)
    block_1 = min(int(700.0 / (bound + 1.0)), 64)  # rows of equal trials: products of u
    ew = np.empty(n_)
    if block_1 >= 1:
        for i in range(n_):
            ew[i] = math.exp(w[i])
    for m in range(m_):
        row = m * n_
        if row_n[m] >= 0 and block_1 >= 1:
            ga, tm = _softplus_row_equal(x[m], ew, row_n[m], n_, gi, block_1)
        elif block >= 1:
            ga, tm = _softplus_rows_blocked(x[m], ew, ns, row, n_, gi, block)
        else:
            ga, tm = _softplus_rows_stable(x[m], w, ns, row, n_, gi)
        total -= tm
        grad[m] = ym_tot[m] - ga
    # item effects: d/dz (prior and likelihood), then through the transform
    gz = np.empty(n_)
    for i in range(n_):
        if centred:
            gz[i] = gi[i] - zi[i] / (sig_i * sig_i)
            d_ls_i += (zi[i] / sig_i) ** 2
        else:
            gz[i] = sig_i * gi[i] - zi[i]
            d_ls_i += gi[i] * sig_i * zi[i]
    if centred:
        d_ls_i -= n_ - 1
    _zero_sum_grad(gz, grad, start_i, n_)
    if clustered:
        gc = np.zeros(c_)
        for i in range(n_):
            gc[int(cl[i])] += gi[i]
        for c in range(c_):
            if centred_c:
                d_ls_c += (zc[c] / sig_c) ** 2
                gc[c] -= zc[c] / (sig_c * sig_c)
            else:
                d_ls_c += gc[c] * sig_c * zc[c]
                gc[c] = sig_c * gc[c] - zc[c]
        if centred_c:
            d_ls_c -= c_ - 1
        _zero_sum_grad(gc, grad, start_c, c_)
    # the accuracy prior: Beta(a, b) on A(alpha, s), times dA/dalpha; alpha = beta - tau m
    tau = math.sqrt(sig_i * sig_i / n_ + (sig_c * sig_c / c_ if clustered else 0.0))
    s = math.sqrt(sig_i * sig_i + sig_c * sig_c)
    d_s = 0.0
    d_alpha_sum = 0.0
    reach = 0.0
    for m in range(m_):
        reach = max(reach, abs(x[m] - tau * zm))
    reach += s * max(abs(nodes[0]), abs(nodes[k_ - 1]))
    en = np.empty(k_)
    if reach < 700.0:  # e^(alpha + s z) = e^alpha e^(s z): no exponential per node
        for k in range(k_):
            en[k] = math.exp(s * nodes[k])
    for m in range(m_):
        am = x[m] - tau * zm
        if reach < 700.0:
            acc, rest, a1, a2, a_s, a1_s = _logistic_moments_fast(
                math.exp(am), en, nodes, weights, k_)
        else:
            acc, rest, a1, a2, a_s, a1_s = _logistic_moments(am, s, nodes, weights, k_)
        total += (a[m] - 1.0) * math.log(acc) + (b[m] - 1.0) * math.log(rest) + math.log(a1)
        dp_da = (a[m] - 1.0) / acc - (b[m] - 1.0) / rest
        d_alpha = dp_da * a1 + a2 / a1
        grad[m] += d_alpha
        d_alpha_sum += d_alpha
        d_s += dp_da * a_s + a1_s / a1
    grad[xm] = -tau * d_alpha_sum - zm
    d_tau = -zm * d_alpha_sum
    d_ls_i += d_s * sig_i * sig_i / s + d_tau * sig_i * sig_i / (n_ * tau)
    grad[xi] = d_ls_i
    if clustered:
        d_ls_c += d_s * sig_c * sig_c / s + d_tau * sig_c * sig_c / (c_ * tau)
        grad[xc] = d_ls_c
    return total


@numba.cfunc(LOGP_SIG, cache=True, nopython=True, error_model="numpy")
def logp(dim, x_, grad_, logp_, user_data_):  # pragma: no cover - compiled
    head = numba.carray(user_data_, (HEAD,))
    par = numba.carray(user_data_, (_size(head),))
    x = numba.carray(x_, (dim,))
    grad = numba.carray(grad_, (dim,))
    total = _density(x, grad, par)
    out = numba.carray(logp_, (1,))
    out[0] = total
    if not math.isfinite(total):
        return 4
    return 0


@numba.cfunc(EXPAND_SIG, cache=True, nopython=True, error_model="numpy")
def expand(dim, n_expanded, x_, out_, user_data_):  # pragma: no cover - compiled
    head = numba.carray(user_data_, (HEAD,))
    m_, n_, c_, clustered = int(head[0]), int(head[1]), int(head[2]), head[3] > 0
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (n_expanded,))
    # expanded: location, sigma_item, [sigma_cluster], z_offset, the full sum-to-zero
    # item values (N), [cluster values (C)]
    for j in range(m_):
        out[j] = x[j]
    out[m_] = math.exp(x[m_])
    k = m_ + 1
    if clustered:
        out[k] = math.exp(x[k])
        k += 1
    out[k] = x[k]
    zi = _zero_sum(x, k + 1, n_)
    for i in range(n_):
        out[k + 1 + i] = zi[i]
    if clustered:
        zc = _zero_sum(x, k + n_, c_)
        for c in range(c_):
            out[k + 1 + n_ + c] = zc[c]
    return 0
