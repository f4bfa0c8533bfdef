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
:math:`\sum y\log\sigma(\eta) + (n - y)\log\sigma(-\eta)` + const, with
:math:`\partial_\eta = y - n\sigma(\eta)`.  The accuracy prior is Beta(a_m, b_m) on
:math:`A(\alpha_m, s)` times :math:`\partial_\alpha A` with
:math:`\alpha_m = \beta_m - \tau m`, :math:`\tau^2 = \sigma_u^2/N + \sigma_v^2/C`,
:math:`s^2 = \sigma_u^2 + \sigma_v^2` (:mod:`bayescm.models.items.quadrature`, the same
nodes).  Constants (normalisers, binomial coefficients, Beta functions) are included,
so the value equals PyMC's.

``user_data``: ``[M, N, C, clustered, centred_item, 0, const, K, scale_item,
scale_cluster, a(M), b(M), nodes(K), weights(K), cluster(N), successes(M*N),
trials(M*N)]``.
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


@numba.njit(cache=True, error_model="numpy")
def _size(head):  # pragma: no cover - compiled
    m_, n_, k_ = int(head[0]), int(head[1]), int(head[7])
    return HEAD + 2 + 2 * m_ + 2 * k_ + n_ + 2 * m_ * n_


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


@numba.njit(cache=True, error_model="numpy")
def _density(x, grad, par):  # pragma: no cover - compiled
    m_, n_, c_ = int(par[0]), int(par[1]), int(par[2])
    clustered, centred = par[3] > 0, par[4] > 0
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
    ys, ns = par[o:o + m_ * n_], par[o + m_ * n_:o + 2 * m_ * n_]
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
        for c in range(c_):
            total -= 0.5 * zc[c] * zc[c]
        total -= (c_ - 1) * HALF_LOG_2PI
        for i in range(n_):
            w[i] += sig_c * zc[int(cl[i])]
    # likelihood: d/d eta = y - n p, collected per model and per item
    gi = np.zeros(n_)
    for m in range(m_):
        bm = x[m]
        ga = 0.0
        row = m * n_
        for i in range(n_):
            eta = bm + w[i]
            e = math.exp(-abs(eta))
            l1 = math.log1p(e)
            if eta > 0:
                lp, lq, p = -l1, -eta - l1, 1.0 / (1.0 + e)
            else:
                lp, lq, p = eta - l1, -l1, e / (1.0 + e)
            y, n = ys[row + i], ns[row + i]
            total += y * lp + (n - y) * lq
            g = y - n * p
            ga += g
            gi[i] += g
        grad[m] = ga
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
            d_ls_c += gc[c] * sig_c * zc[c]
            gc[c] = sig_c * gc[c] - zc[c]
        _zero_sum_grad(gc, grad, start_c, c_)
    # the accuracy prior: Beta(a, b) on A(alpha, s), times dA/dalpha; alpha = beta - tau m
    tau = math.sqrt(sig_i * sig_i / n_ + (sig_c * sig_c / c_ if clustered else 0.0))
    s = math.sqrt(sig_i * sig_i + sig_c * sig_c)
    d_s = 0.0
    d_alpha_sum = 0.0
    for m in range(m_):
        am = x[m] - tau * zm
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
