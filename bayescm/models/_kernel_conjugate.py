r"""Compiled log densities for nutpie: independent Betas and Dirichlets.

The conjugate models' posteriors are products of independent Beta and Dirichlet
densities (see :mod:`bayescm.exact`).  In the unconstrained coordinates PyMC
uses for them -- logit for a rate, PyMC's centred simplex transform for a
simplex (``z = (y, -sum(y))``, ``theta = softmax(z)``) -- the log density,
including the log-Jacobian, is up to a constant

.. math::

    \sum_j A_j \log\sigma(x_j) + B_j \log\sigma(-x_j)
    \;+\; \sum_g \sum_{i=1}^{K} D_{gi} \log \theta_{gi}(y_g),

(the simplex Jacobian is :math:`K \prod_i \theta_i`), with gradients
:math:`A_j\sigma(-x_j) - B_j\sigma(x_j)` and
:math:`(D_{gj} - D_{gK}) - (\sum_k D_{gk})(\theta_{gj} - \theta_{gK})`.
The functions are C callbacks with the signatures nutpie's Rust sampler calls,
compiled once and cached on disk by numba, so a fresh process pays no
compilation and any batch size reuses the same machine code.  The tests check
them against the PyMC models' own ``logp`` and gradient.

``user_data`` points to a float64 array ``[nb, nd, k, A(nb), B(nb), D(nd*k)]``.
"""

import math

import numba
from numba import types

_dp = types.CPointer(types.double)
LOGP_SIG = types.int64(types.uint64, _dp, _dp, _dp, _dp)
EXPAND_SIG = types.int64(types.uint64, types.uint64, _dp, _dp, _dp)


@numba.njit(cache=True)
def _log_normaliser(x, start, k):  # pragma: no cover - compiled
    """log sum exp(z) and z_K for z = (x[start:start+k-1], -sum(x[start:start+k-1]))."""
    zk = 0.0
    for i in range(k - 1):
        zk -= x[start + i]
    m = zk
    for i in range(k - 1):
        m = max(m, x[start + i])
    z = math.exp(zk - m)
    for i in range(k - 1):
        z += math.exp(x[start + i] - m)
    return m + math.log(z), zk


@numba.cfunc(LOGP_SIG, cache=True, nopython=True)
def logp(dim, x_, grad_, logp_, user_data_):  # pragma: no cover - compiled
    head = numba.carray(user_data_, (3,))
    nb = int(head[0])
    nd = int(head[1])
    k = int(head[2])
    par = numba.carray(user_data_, (3 + 2 * nb + nd * k,))
    x = numba.carray(x_, (dim,))
    grad = numba.carray(grad_, (dim,))
    total = 0.0
    for j in range(nb):
        a = par[3 + j]
        b = par[3 + nb + j]
        xj = x[j]
        # log sigmoid(x) and log sigmoid(-x) without overflow
        if xj > 0:
            lpos = -math.log1p(math.exp(-xj))
            lneg = -xj + lpos
        else:
            lneg = -math.log1p(math.exp(xj))
            lpos = xj + lneg
        total += a * lpos + b * lneg
        s = math.exp(lpos)
        grad[j] = a * (1.0 - s) - b * s
    off = 3 + 2 * nb
    xo = nb
    for g in range(nd):
        lz, zk = _log_normaliser(x, xo, k)
        dsum = 0.0
        for i in range(k):
            dsum += par[off + g * k + i]
        dk = par[off + g * k + k - 1]
        thk = math.exp(zk - lz)
        for i in range(k - 1):
            d = par[off + g * k + i]
            total += d * (x[xo + i] - lz)
            grad[xo + i] = (d - dk) - dsum * (math.exp(x[xo + i] - lz) - thk)
        total += dk * (zk - lz)
        xo += k - 1
    out = numba.carray(logp_, (1,))
    out[0] = total
    if not math.isfinite(total):
        return 4
    return 0


@numba.cfunc(EXPAND_SIG, cache=True, nopython=True)
def expand(dim, n_expanded, x_, out_, user_data_):  # pragma: no cover - compiled
    head = numba.carray(user_data_, (3,))
    nb = int(head[0])
    nd = int(head[1])
    k = int(head[2])
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (n_expanded,))
    for j in range(nb):
        out[j] = 1.0 / (1.0 + math.exp(-x[j]))
    xo = nb
    oo = nb
    for _ in range(nd):
        lz, zk = _log_normaliser(x, xo, k)
        for i in range(k - 1):
            out[oo + i] = math.exp(x[xo + i] - lz)
        out[oo + k - 1] = math.exp(zk - lz)
        xo += k - 1
        oo += k
    return 0
