r"""Compiled log density and gradient of the ``items`` model's marginal route, for nutpie.

One model, item and cluster effects integrated out
(:mod:`bayescm.models.items.marginal`): the density of :func:`bayescm.models.items`
with ``marginal=True`` in PyMC's unconstrained coordinates, variables in the builder's
order -- ``alpha`` as is, :math:`\log\sigma_\mathrm{item}`,
[:math:`\log\sigma_\mathrm{cluster}`] (HalfNormal priors, Jacobian :math:`e^{x}`
included) -- tested equal to ``model.compile_logp``/``compile_dlogp``.

Likelihood.  For pattern :math:`p = (y, n)` at outer node :math:`g_k = \alpha +
\sigma_c z_k`, with :math:`x_{kj} = g_k + \sigma_i u_j`, :math:`p_{kj} = \sigma(x_{kj})`,
:math:`q_{kj} = 1 - p_{kj}` and :math:`\tau_{pkj} = w_j p^{y} q^{n - y}`,

.. math::

    F_{pk} = \tbinom{n}{y}\sum_j \tau_{pkj},\qquad
    \frac{\partial_g F_{pk}}{F_{pk}} = \frac{\sum_j \tau_{pkj}(y q_{kj} - (n - y)p_{kj})}
        {\sum_j \tau_{pkj}} =: G_{pk},\qquad
    \frac{\partial_{\sigma_i} F_{pk}}{F_{pk}} = \frac{\sum_j \tau_{pkj}
        (y q_{kj} - (n - y)p_{kj})\,u_j}{\sum_j\tau_{pkj}} =: S_{pk}

(:math:`y q - (n - y)p` rather than :math:`y - np`: no cancellation when :math:`p \to
1`).  Per composition :math:`d` the node log weights are :math:`\ell_{dk} =
\log\omega_k + \sum_p \mathrm{cnt}_{dp}\log F_{pk}`, :math:`\log L_d =
\operatorname{LSE}_k\ell_{dk}`, :math:`r_{dk} = \operatorname{softmax}_k\ell_{dk}`, and

.. math::

    \partial_\alpha\log L_d = \sum_k r_{dk}\sum_p \mathrm{cnt}_{dp}G_{pk},\quad
    \partial_{\sigma_c}\log L_d = \sum_k r_{dk}\,z_k\sum_p \mathrm{cnt}_{dp}G_{pk},\quad
    \partial_{\sigma_i}\log L_d = \sum_k r_{dk}\sum_p \mathrm{cnt}_{dp}S_{pk}.

:math:`p_{kj}, q_{kj}` come from :math:`t = e^{g_k}e^{\sigma_i u_j}` (no exponential
per cell), and :math:`p^y q^{n-y}` from a table of powers up to
:data:`~bayescm.models.items.marginal.POWERS_MAX` runs, beyond from
:math:`\exp(y\log p + (n - y)\log q)` (the logs by ``log1p`` of :math:`t` or
:math:`1/t`, below 1), while :math:`|g_k| + 9\sigma_i < 700`; where that would overflow, or where a
sum :math:`\sum_j\tau_{pkj}` falls below :data:`TINY` (terms lose relative precision
in the subnormals), that node's pattern is summed in logs with the largest term
factored out, so :math:`\log F` is always finite and a far node gets weight
:math:`r_{dk} \approx 0` with a finite gradient term (no 0/0).

Prior.  :math:`\mathrm{Beta}(A(\alpha, s); a, b)\,\partial_\alpha A`,
:math:`s^2 = \sigma_i^2 + \sigma_c^2` (kernel.py's moments, the same nodes), and the
HalfNormal scales.  Constants (normalisers, binomial coefficients, the Beta function)
are included, so the value is PyMC's.

``user_data``: ``[clustered, K, J, P, D, E, const, scale_item, scale_cluster, K_acc,
a, b, z(K), log omega(K), u(J), w(J), log w(J), y(P), n(P), log binom(P), mult(D),
ptr(D + 1), pattern(E), count(E), acc nodes(K_acc), acc weights(K_acc)]`` -- the
compositions as sparse rows (``ptr``, ``pattern``, ``count``).
"""

import math
import sys
from typing import Any

import numba
import numpy as np
from scipy.special import betaln

from bayescm.family import Kernel
from bayescm.models.items.kernel import (
    EXPAND_SIG,
    LOGP_SIG,
    _logistic_moments,
    _logistic_moments_fast,
    _scale_prior,
)
from bayescm.models.items.marginal import POWERS_MAX, layout
from bayescm.models.items.quadrature import NODES, WEIGHTS

HEAD = 12
TINY = 1e-250
SKIP = -40.0
EXP_MAX = 700.0


@numba.njit(cache=True, error_model="numpy")
def _size(head):  # pragma: no cover - compiled
    k_, j_, p_, d_, e_, ka = (int(head[1]), int(head[2]), int(head[3]), int(head[4]),
                              int(head[5]), int(head[9]))
    return HEAD + 2 * k_ + 3 * j_ + 3 * p_ + 2 * d_ + 1 + 2 * e_ + 2 * ka


@numba.njit(cache=True, error_model="numpy")
def _pattern_stable(g, sig_i, log_w, u, y, n, j_, buf):  # pragma: no cover - compiled
    """The same sums in logs, the largest term factored out: ``(log f, G, S)``."""
    top = -np.inf
    for j in range(j_):
        x = g + sig_i * u[j]
        e = math.exp(-abs(x))
        if x > 0:  # log sigma(x), log sigma(-x), stably
            lp, lq = -math.log1p(e), -x - math.log1p(e)
        else:
            lp, lq = x - math.log1p(e), -math.log1p(e)
        buf[j] = log_w[j] + y * lp + (n - y) * lq
        top = max(top, buf[j])
    f, fg, fs = 0.0, 0.0, 0.0
    for j in range(j_):
        x = g + sig_i * u[j]
        e = math.exp(-abs(x))
        if x > 0:
            p, q = 1.0 / (1.0 + e), e / (1.0 + e)
        else:
            p, q = e / (1.0 + e), 1.0 / (1.0 + e)
        term = math.exp(buf[j] - top)
        dj = term * (y * q - (n - y) * p)
        f += term
        fg += dj
        fs += dj * u[j]
    return top + math.log(f), fg / f, fs / f


@numba.njit(cache=True, error_model="numpy", fastmath={"reassoc", "contract", "arcp"})
def _one_run(eg, eu, w, u, j_):  # pragma: no cover - compiled
    r"""One run per item, in one pass: :math:`\sum w p`, :math:`\sum w q`,
    :math:`\sum w pq` and :math:`\sum w pq\,u` (for :math:`y = 1`, :math:`d = q`; for
    :math:`y = 0`, :math:`d = -p`: the two patterns share :math:`\pm\sum w pq`)."""
    f1, f0, fd, fu = 0.0, 0.0, 0.0, 0.0
    for j in range(j_):
        t = eg * eu[j]
        q = 1.0 / (1.0 + t)
        wp = w[j] * t * q
        f1 += wp
        f0 += w[j] * q
        d = wp * q
        fd += d
        fu += d * u[j]
    return f1, f0, fd, fu


@numba.njit(cache=True, error_model="numpy", fastmath={"reassoc", "contract", "arcp"})
def _pattern_sums(py, qr, p1, q1, w, u, y, r, j_):  # pragma: no cover - compiled
    r""":math:`\sum_j\tau_j`, :math:`\sum_j\tau_j d_j`, :math:`\sum_j\tau_j d_j u_j`:
    :math:`\tau_j = w_j p_j^y q_j^r` from the powers ``py``, ``qr`` (:math:`r = n - y`),
    :math:`d_j = y q_j - r p_j`.  Only reassociation, contraction and reciprocals are
    relaxed: the loop vectorises, infinities and NaNs still propagate."""
    f, fg, fs = 0.0, 0.0, 0.0
    for j in range(j_):
        term = w[j] * py[j] * qr[j]
        dj = term * (y * q1[j] - r * p1[j])
        f += term
        fg += dj
        fs += dj * u[j]
    return f, fg, fs


@numba.njit(cache=True, error_model="numpy")
def _log_pq(g, sig_i, u, eg, eu, lp, lq, j_):  # pragma: no cover - compiled
    """``log p`` and ``log q`` of every inner node, from ``t = e^g e^(sigma u)`` and
    without cancellation: ``log1p`` of ``t`` or of ``1/t``, whichever is below 1."""
    for j in range(j_):
        t = eg * eu[j]
        if t > 1.0:
            tail = math.log1p(1.0 / t)
            lp[j], lq[j] = -tail, -(g + sig_i * u[j]) - tail
        else:
            tail = math.log1p(t)
            lp[j], lq[j] = g + sig_i * u[j] - tail, -tail


@numba.njit(cache=True, error_model="numpy", fastmath={"reassoc", "contract", "arcp"})
def _patterns(alpha, sig_i, sig_c, z, u, w, log_w, y, n, log_binom, k_, j_, p_,
              log_f, gg, ss):  # pragma: no cover - compiled
    """Fill ``log_f``, ``gg`` (G) and ``ss`` (S), each ``(P, K)``."""
    eu = np.empty(j_)
    umax = 0.0
    for j in range(j_):
        eu[j] = math.exp(sig_i * u[j])
        umax = max(umax, abs(u[j]))
    n_max = 0
    for p in range(p_):
        n_max = max(n_max, int(n[p]))
    # up to POWERS_MAX runs, the powers p^m and q^m (m <= the most runs) of every inner
    # node: products of numbers <= 1, so nothing overflows (row 1 holds p and q, row 0
    # ones); beyond, each pattern's p^y q^r is one exponential of y log p + r log q (a
    # table of n_max x J powers would cost n_max products per node and its memory)
    few = n_max <= POWERS_MAX
    pw, qw = np.ones((n_max + 1 if few else 2, j_)), np.ones((n_max + 1 if few else 2, j_))
    lp, lq = np.empty(j_), np.empty(j_)
    buf = np.empty(j_)
    sums = np.empty((3, p_))
    for k in range(k_):
        g = alpha + sig_c * z[k]
        fast = abs(g) + sig_i * umax < EXP_MAX
        if fast and n_max == 1:  # the usual design: both patterns in one pass
            f1, f0, fd, fu = _one_run(math.exp(g), eu, w, u, j_)
            for p in range(p_):
                one = y[p] > 0
                sums[0, p] = f1 if one else f0
                sums[1, p] = fd if one else -fd
                sums[2, p] = fu if one else -fu
        elif fast:  # p, q from e^g e^(sigma u): one division per cell
            eg = math.exp(g)
            p1, q1 = pw[1], qw[1]
            for j in range(j_):
                t = eg * eu[j]
                q = 1.0 / (1.0 + t)
                p1[j] = t * q
                q1[j] = q
            if few:
                for m in range(2, n_max + 1):
                    pm_, qm_, pl_, ql_ = pw[m], qw[m], pw[m - 1], qw[m - 1]
                    for j in range(j_):
                        pm_[j] = pl_[j] * p1[j]
                        qm_[j] = ql_[j] * q1[j]
            else:
                _log_pq(g, sig_i, u, eg, eu, lp, lq, j_)
            for p in range(p_):
                yp, rp = y[p], n[p] - y[p]
                if few:
                    py, qr = pw[int(yp)], qw[int(rp)]
                else:
                    for j in range(j_):
                        buf[j] = math.exp(yp * lp[j] + rp * lq[j])
                    py, qr = buf, qw[0]
                f, fg, fs = _pattern_sums(py, qr, p1, q1, w, u, yp, rp, j_)
                sums[0, p], sums[1, p], sums[2, p] = f, fg, fs
        for p in range(p_):
            f = sums[0, p]
            if fast and f > TINY:
                log_f[p, k] = log_binom[p] + math.log(f)
                gg[p, k] = sums[1, p] / f
                ss[p, k] = sums[2, p] / f
            else:  # overflow of e^g e^(sigma u), or terms in the subnormals: in logs
                lf, g_r, s_r = _pattern_stable(g, sig_i, log_w, u, y[p], n[p], j_, buf)
                log_f[p, k] = log_binom[p] + lf
                gg[p, k] = g_r
                ss[p, k] = s_r


@numba.njit(cache=True, error_model="numpy", fastmath={"reassoc", "contract", "arcp"})
def _compositions(log_f, gg, ss, z, log_om, mult, ptr, pat, cnt, k_, d_
                  ):  # pragma: no cover - compiled
    r""":math:`\sum_d \mathrm{mult}_d\log L_d` and its derivatives in
    :math:`\alpha`, :math:`\sigma_c`, :math:`\sigma_i` from the patterns' tables (rows
    of ``(P, K)`` added along k: loops that vectorise)."""
    ell, hg, hs = np.empty(k_), np.empty(k_), np.empty(k_)
    lik, d_a, d_sc, d_si = 0.0, 0.0, 0.0, 0.0
    for d in range(d_):
        for k in range(k_):
            ell[k] = log_om[k]
            hg[k] = 0.0
            hs[k] = 0.0
        for e in range(int(ptr[d]), int(ptr[d + 1])):
            c, p = cnt[e], int(pat[e])
            lf, gr, sr = log_f[p], gg[p], ss[p]
            for k in range(k_):
                ell[k] += c * lf[k]
                hg[k] += c * gr[k]
                hs[k] += c * sr[k]
        top = ell[0]
        for k in range(1, k_):
            top = max(top, ell[k])
        norm, ga, gc, gi = 0.0, 0.0, 0.0, 0.0
        for k in range(k_):
            # a node more than 40 below the largest adds < 4e-18 of it: weight 0 to
            # double precision, one exponential fewer, and no gradient term (no 0/0)
            v = ell[k] - top
            if v > SKIP:
                r = math.exp(v)
                norm += r
                ga += r * hg[k]
                gc += r * z[k] * hg[k]
                gi += r * hs[k]
        lik += mult[d] * (top + math.log(norm))
        d_a += mult[d] * ga / norm
        d_sc += mult[d] * gc / norm
        d_si += mult[d] * gi / norm
    return lik, d_a, d_sc, d_si


@numba.njit(cache=True, error_model="numpy")
def _density(x, grad, par):  # pragma: no cover - compiled
    clustered = par[0] > 0
    k_, j_, p_, d_, e_, ka = (int(par[1]), int(par[2]), int(par[3]), int(par[4]),
                              int(par[5]), int(par[9]))
    total = par[6]
    sc_i, sc_c, a, b = par[7], par[8], par[10], par[11]
    o = HEAD
    z, log_om = par[o:o + k_], par[o + k_:o + 2 * k_]
    o += 2 * k_
    u, w, log_w = par[o:o + j_], par[o + j_:o + 2 * j_], par[o + 2 * j_:o + 3 * j_]
    o += 3 * j_
    y, n, log_binom = par[o:o + p_], par[o + p_:o + 2 * p_], par[o + 2 * p_:o + 3 * p_]
    o += 3 * p_
    mult, ptr = par[o:o + d_], par[o + d_:o + 2 * d_ + 1]
    o += 2 * d_ + 1
    pat, cnt = par[o:o + e_], par[o + e_:o + 2 * e_]
    o += 2 * e_
    nodes, weights = par[o:o + ka], par[o + ka:o + 2 * ka]
    alpha = x[0]
    v, d_li, sig_i = _scale_prior(x[1], sc_i)
    total += v
    sig_c, d_lc = 0.0, 0.0
    if clustered:
        v, d_lc, sig_c = _scale_prior(x[2], sc_c)
        total += v
    # the likelihood: patterns at every outer node, then each composition's LSE
    log_f, gg, ss = np.empty((p_, k_)), np.empty((p_, k_)), np.empty((p_, k_))
    _patterns(alpha, sig_i, sig_c, z, u, w, log_w, y, n, log_binom, k_, j_, p_,
              log_f, gg, ss)
    lik, d_a, d_sc, d_si = _compositions(log_f, gg, ss, z, log_om, mult, ptr, pat, cnt,
                                         k_, d_)
    total += lik
    d_li += d_si * sig_i
    d_lc += d_sc * sig_c
    # the accuracy prior: Beta(a, b) on A(alpha, s), times dA/dalpha
    s = math.sqrt(sig_i * sig_i + sig_c * sig_c)
    if abs(alpha) + s * max(abs(nodes[0]), abs(nodes[ka - 1])) < EXP_MAX:
        en = np.empty(ka)
        for k in range(ka):
            en[k] = math.exp(s * nodes[k])
        acc, rest, a1, a2, a_s, a1_s = _logistic_moments_fast(
            math.exp(alpha), en, nodes, weights, ka)
    else:
        acc, rest, a1, a2, a_s, a1_s = _logistic_moments(alpha, s, nodes, weights, ka)
    total += (a - 1.0) * math.log(acc) + (b - 1.0) * math.log(rest) + math.log(a1)
    dp_da = (a - 1.0) / acc - (b - 1.0) / rest
    grad[0] = d_a + dp_da * a1 + a2 / a1
    d_s = dp_da * a_s + a1_s / a1
    if s > 0.0:
        d_li += d_s * sig_i * sig_i / s
        d_lc += d_s * sig_c * sig_c / s
    grad[1] = d_li
    if clustered:
        grad[2] = d_lc
    return total


# The same few lines wrap every family's density (items/kernel.py, groups, folds): a
# cfunc made by a shared factory closes over its density, and numba's cache misses on
# such closures (a new cache entry and about a second of compiling in every process),
# so each kernel module keeps its own module-level wrapper.
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
    # expanded: alpha, sigma_item, [sigma_cluster]
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (n_expanded,))
    out[0] = x[0]
    for k in range(1, dim):
        out[k] = math.exp(x[k])
    return 0


def user_data(lay, a: float, b: float, scale_item: float, scale_cluster: float | None,
              const: float, acc_nodes: np.ndarray, acc_weights: np.ndarray) -> np.ndarray:
    """The kernel's ``user_data`` from a :class:`~bayescm.models.items.marginal.Layout`
    (``scale_cluster`` None: no clusters); ``const`` is added to the density."""
    rows, cols = np.nonzero(lay.counts)
    ptr = np.searchsorted(rows, np.arange(lay.counts.shape[0] + 1))
    head = [float(scale_cluster is not None), lay.z.size, lay.u.size, lay.y.size,
            lay.counts.shape[0], rows.size, const, scale_item,
            1.0 if scale_cluster is None else scale_cluster, acc_nodes.size, a, b]
    return np.concatenate([
        head, lay.z, lay.log_omega, lay.u, np.exp(lay.log_w), lay.log_w, lay.y, lay.n,
        lay.log_binom, lay.mult, ptr, cols, lay.counts[rows, cols], acc_nodes,
        acc_weights]).astype(float)


def kernel(res: Any, a: float, b: float, scale_item: float,
           scale_cluster: float | None) -> Kernel:
    """The marginal route's compiled density for one model's results (an
    :class:`~bayescm.ItemResults`), its accuracy prior Beta(a, b) and the scales'
    HalfNormal scales: the PyMC model's grids (:func:`~bayescm.models.items.marginal.layout`)."""
    lay = layout(res, scale_item, scale_cluster)
    data = user_data(lay, a, b, scale_item, scale_cluster, -float(betaln(a, b)), NODES, WEIGHTS)
    names = ["alpha", "sigma_item"] + (["sigma_cluster"] if scale_cluster is not None else [])
    shapes: list[tuple[int, ...]] = [(1,)] + [()] * (len(names) - 1)
    return Kernel(sys.modules[__name__], data, len(names), names, shapes)
