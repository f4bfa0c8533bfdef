r"""Compiled log density and gradient of the hierarchical comparison across data sets.

The density is that of the PyMC model of :func:`bayescm.analysis.compare_datasets`
(the tests compare it with ``model.compile_logp`` and ``model.compile_dlogp`` at
random points) in PyMC's unconstrained coordinates, in its order: ``delta0``,
``std0``, ``gamma_alpha`` and ``gamma_beta`` through the interval transform
(:math:`v = l + (h - l)\,\sigma(x)`, log-Jacobian plus the uniform's density
:math:`\log\sigma(x) + \log\sigma(-x)`), ``nu_minus_one`` :math:`g = e^y` (log transform),
then ``z`` (one per data set) as is.  With :math:`\nu = 1 + g` and
:math:`\delta_i = \delta_0 + \sigma_0 z_i`, up to a constant:

.. math::

    \alpha\log\beta - \log\Gamma(\alpha) + \alpha y - \beta e^y
    + \sum_i \Bigl[\log\Gamma\bigl(\tfrac{\nu+1}2\bigr) - \log\Gamma\bigl(\tfrac\nu2\bigr)
      - \tfrac12\log\nu - \tfrac{\nu+1}2\log\bigl(1 + z_i^2/\nu\bigr)
      - \tfrac{n_i - 1}2\log Q_i(\delta_i)\Bigr],

with :math:`Q_i` of the module :mod:`bayescm.analysis.compare_datasets`.  The
gradient needs the digamma function :math:`\psi` (recurrence up to 10, then its
asymptotic series: about 1e-14).

Why a kernel: nutpie's compilation of the PyMC model took 20--35 s on the first call
of a process (of a 2-3 s comparison); this density needs none (numba's cache on disk).

``user_data``: ``[q, D, S, alpha_lo, alpha_hi, beta_lo, beta_hi, xbar(q), ssw(q), n(q),
rho(q)]`` with ``delta0 ~ U(-D, D)`` and ``std0 ~ U(0, S)``.
"""

import math

import numba
import numpy as np
from numba import types

from bayescm.models.special import digamma

_dp = types.CPointer(types.double)
LOGP_SIG = types.int64(types.uint64, _dp, _dp, _dp, _dp)
EXPAND_SIG = types.int64(types.uint64, types.uint64, _dp, _dp, _dp)
HEAD = 7
NAMES = ("delta0", "std0", "gamma_alpha", "gamma_beta", "nu_minus_one", "z")


@numba.njit(cache=True)
def _interval(x, lo, hi):  # pragma: no cover - compiled
    """Value, d value/dx, log-Jacobian + uniform log density, and its d/dx."""
    if x >= 0:
        e = math.exp(-x)
        s, t = 1.0 / (1.0 + e), e / (1.0 + e)  # sigma(x), sigma(-x)
    else:
        e = math.exp(x)
        s, t = e / (1.0 + e), 1.0 / (1.0 + e)
    lj = -abs(x) - 2.0 * math.log1p(math.exp(-abs(x)))
    return lo + (hi - lo) * s, (hi - lo) * s * t, lj, t - s


@numba.njit(cache=True)
def log_density(x, par, grad):  # pragma: no cover - compiled
    q = int(par[0])
    big_d, big_s = par[1], par[2]
    o = HEAD
    xbar, ssw, n, rho = par[o:o + q], par[o + q:o + 2 * q], par[o + 2 * q:o + 3 * q], \
        par[o + 3 * q:o + 4 * q]
    d0, dd0, lj0, gj0 = _interval(x[0], -big_d, big_d)
    s0, ds0, lj1, gj1 = _interval(x[1], 0.0, big_s)
    al, dal, lj2, gj2 = _interval(x[2], par[3], par[4])
    be, dbe, lj3, gj3 = _interval(x[3], par[5], par[6])
    total = lj0 + lj1 + lj2 + lj3
    y = x[4]
    g = math.exp(y)
    nu = 1.0 + g
    total += al * math.log(be) - math.lgamma(al) + al * y - be * g
    d_al = math.log(be) - digamma(al) + y
    d_be = al / be - g
    d_y = al - be * g
    d_nu = 0.0
    d_d0, d_s0 = 0.0, 0.0
    c_nu = math.lgamma(0.5 * (nu + 1.0)) - math.lgamma(0.5 * nu) - 0.5 * math.log(nu)
    dc_nu = 0.5 * (digamma(0.5 * (nu + 1.0)) - digamma(0.5 * nu) - 1.0 / nu)
    for i in range(q):
        z = x[5 + i]
        z2 = z * z
        lg = math.log1p(z2 / nu)
        total += c_nu - 0.5 * (nu + 1.0) * lg
        d_nu += dc_nu - 0.5 * lg + 0.5 * (nu + 1.0) * z2 / (nu * (nu + z2))
        d_z = -(nu + 1.0) * z / (nu + z2)
        delta = d0 + s0 * z
        c = 1.0 - rho[i] + n[i] * rho[i]
        r = xbar[i] - delta
        quad = ssw[i] / (1.0 - rho[i]) + n[i] * r * r / c
        total -= 0.5 * (n[i] - 1.0) * math.log(quad)
        d_delta = (n[i] - 1.0) * n[i] * r / (c * quad)
        d_d0 += d_delta
        d_s0 += d_delta * z
        grad[5 + i] = d_z + d_delta * s0
    grad[0] = d_d0 * dd0 + gj0
    grad[1] = d_s0 * ds0 + gj1
    grad[2] = d_al * dal + gj2
    grad[3] = d_be * dbe + gj3
    grad[4] = d_y + d_nu * g
    return total


@numba.cfunc(LOGP_SIG, cache=True, nopython=True)
def logp(dim, x_, grad_, logp_, user_data_):  # pragma: no cover - compiled
    q = int(numba.carray(user_data_, (1,))[0])
    par = numba.carray(user_data_, (HEAD + 4 * q,))
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
    """delta0, std0, gamma_alpha, gamma_beta, nu_minus_one, z (q)."""
    q = int(numba.carray(user_data_, (1,))[0])
    par = numba.carray(user_data_, (HEAD + 4 * q,))
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (n_expanded,))
    out[0] = _interval(x[0], -par[1], par[1])[0]
    out[1] = _interval(x[1], 0.0, par[2])[0]
    out[2] = _interval(x[2], par[3], par[4])[0]
    out[3] = _interval(x[3], par[5], par[6])[0]
    out[4] = math.exp(x[4])
    for i in range(q):
        out[5 + i] = x[5 + i]
    return 0


def user_data(xbar: np.ndarray, ssw: np.ndarray, n: np.ndarray, rho: np.ndarray,
              bounds: dict) -> np.ndarray:
    """The kernel's ``user_data`` from the standardised data and the prior bounds."""
    head = [len(xbar), bounds["delta0"], bounds["std0"], bounds["alpha_lower"],
            bounds["alpha_upper"], bounds["beta_lower"], bounds["beta_upper"]]
    return np.concatenate([head, xbar, ssw, np.asarray(n, float), rho]).astype(float)
