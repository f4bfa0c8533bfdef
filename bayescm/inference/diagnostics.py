"""Vectorised R-hat, ESS and MCSE: ArviZ's estimators for many series at once.

Used by :func:`bayescm.check_convergence` only when ArviZ, timed on a probe, would
cost more than ``convergence.ARVIZ_MAX_SHARE`` (20%) of the sampling time ``fit``
recorded; every other check goes through ArviZ itself.  ``arviz.summary`` loops
over scalars in Python, a few milliseconds each, which measured more than 20% of a
NUTS fit's wall time for batches (see
``benchmarks/bench_core.py``).  These functions compute the *same* estimators
(rank-normalised split R-hat, the maximum of bulk and folded versions; bulk ESS on
rank-normalised split chains; tail ESS as the minimum of the ESS of the 5% and 95%
quantile indicators; Geyer's initial monotone sequence; MCSE of the mean and of the
standard deviation as ``arviz.mcse``) on all series in one pass of array
operations.  The test suite checks them against ArviZ to 1e-10 relative.

Reference: Vehtari, Gelman, Simpson, Carpenter & Bürkner, "Rank-normalization,
folding, and localization: an improved R-hat for assessing convergence of MCMC",
Bayesian Analysis (2021).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy import special


def _split(x: np.ndarray) -> np.ndarray:
    """(S, C, N) -> (S, 2C, N // 2): first and last halves as separate chains."""
    half = x.shape[-1] // 2
    return np.concatenate([x[..., :half], x[..., -half:]], axis=1)


def _sorted_runs(flat: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """One sort along the last axis: the order, and for each sorted position the sum
    ``i + j`` of the first and last sorted positions (0-based) of the run of equal
    values it belongs to (None when no row has ties: then ``i = j`` = the position).
    The average rank of ``rankdata(method="average")`` is ``(i + j) / 2 + 1``.

    Ties are the rule, not the exception: the folded draws ``|x - median|`` of the
    tail R-hat tie at the two middle draws of every series.
    """
    n = flat.shape[-1]
    order = np.argsort(flat, axis=-1)
    sorted_ = np.take_along_axis(flat, order, axis=-1)
    same = sorted_[:, 1:] == sorted_[:, :-1]
    if not same.any():
        return order, None
    position = np.broadcast_to(np.arange(n, dtype=float), flat.shape)
    # first and last sorted position of the run each value belongs to
    start = np.where(np.pad(same, ((0, 0), (1, 0))), 0.0, position)
    np.maximum.accumulate(start, axis=-1, out=start)
    end = np.where(np.pad(same, ((0, 0), (0, 1))), np.inf, position)[:, ::-1]
    end = np.minimum.accumulate(end, axis=-1)[:, ::-1]
    return order, start + end


def _z_scale(x: np.ndarray) -> np.ndarray:
    """Rank-normalised values ``ndtri((rank - 3/8) / (n + 1/4))``, ranks taken over all
    axes after the first (ArviZ's ``_z_scale``).

    Average ranks are half-integers ``k / 2 + 1`` (``k = i + j`` from 0 to 2n - 2), so
    the normal quantile is evaluated once per possible rank, by the same operations on
    the same numbers (the same result to the bit), and looked up: ``ndtri`` of every
    draw took a third of the time.
    """
    shape = x.shape
    flat = x.reshape(shape[0], -1)
    n = flat.shape[-1]
    order, run_sums = _sorted_runs(flat)
    table = special.ndtri(((np.arange(2 * n - 1) / 2.0 + 1.0) - 0.375) / (n + 0.25))
    value = (np.broadcast_to(table[::2], flat.shape) if run_sums is None
             else table[run_sums.astype(np.intp)])
    z = np.empty(flat.shape, dtype=float)
    np.put_along_axis(z, order, value, axis=-1)
    return z.reshape(shape)


def _rhat(x: np.ndarray) -> np.ndarray:
    n = x.shape[-1]
    between = n * np.var(x.mean(axis=-1), axis=-1, ddof=1)
    within = np.var(x, axis=-1, ddof=1).mean(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt((between / within + n - 1) / n)


def _invalid(x: np.ndarray) -> np.ndarray:
    bad = ~np.isfinite(x).all(axis=(1, 2))
    if x.shape[1] < 2 or x.shape[2] < 4:
        bad[:] = True
    return bad


def rhat(x: np.ndarray, *, _z_bulk: np.ndarray | None = None) -> np.ndarray:
    """Rank-normalised split R-hat of series ``x`` with shape ``(S, chains, draws)``.

    NaN where a series is not finite, or with fewer than 2 chains or 4 draws.
    """
    x = np.asarray(x, dtype=float)
    split = _split(x)
    bulk = _rhat(_z_scale(split) if _z_bulk is None else _z_bulk)
    centre = np.median(split.reshape(x.shape[0], -1), axis=-1)[:, None, None]
    tail = _rhat(_z_scale(np.abs(split - centre)))
    out = np.maximum(bulk, tail)
    out[_invalid(x)] = np.nan
    return out


def next_fast_len(target: int) -> int:
    """The least 11-smooth number (prime factors 2, 3, 5, 7, 11) >= ``target``:
    ``scipy.fft.next_fast_len(target)``, the padding ArviZ's ``autocov`` uses, without
    importing ``scipy.fft`` (a twentieth of a second of a shell command)."""
    if target <= 1:
        return 1
    best = 1 << (target - 1).bit_length()  # the power of two at or above
    p11 = 1
    while p11 < best:
        p7 = p11
        while p7 < best:
            p5 = p7
            while p5 < best:
                p3 = p5
                while p3 < best:
                    n = p3 * (1 << max(0, (-(-target // p3) - 1).bit_length()))
                    best = min(best, n)
                    p3 *= 3
                p5 *= 5
            p7 *= 7
        p11 *= 11
    return best


def _autocov(x: np.ndarray) -> np.ndarray:
    """Autocovariance at every lag, as ArviZ's ``autocov`` (NumPy's FFT, zero-padded to
    :func:`next_fast_len` of twice the length)."""
    n = x.shape[-1]
    m = next_fast_len(2 * n)
    centred = x - x.mean(axis=-1, keepdims=True)
    f = np.fft.rfft(centred, n=m, axis=-1)
    return np.fft.irfft(f * np.conjugate(f), n=m, axis=-1)[..., :n] / n


def _ess(x: np.ndarray) -> np.ndarray:
    """ESS of (S, C, N) series by Geyer's initial monotone sequence (as ArviZ)."""
    s, c, n = x.shape
    acov = _autocov(x)
    mean_var = acov[..., 0].mean(axis=-1) * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if c > 1:
        var_plus = var_plus + np.var(x.mean(axis=-1), axis=-1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = 1.0 - (mean_var[:, None] - acov.mean(axis=1)) / var_plus[:, None]
    rho[:, 0] = 1.0
    # pairs (2j, 2j + 1) for j = 0 .. j_max, as far as Geyer's loop can reach
    j_max = int(np.ceil((n - 2) / 2)) - 1
    pairs = rho[:, 0 : 2 * j_max + 2 : 2] + rho[:, 1 : 2 * j_max + 2 : 2]
    if pairs.shape[1]:
        tau = _geyer_tau(rho, pairs, j_max)
    else:  # two draws a chain: Geyer's sequence has no pair (ArviZ's tau is then 0)
        tau = np.zeros(s)
    total = c * n
    tau = np.maximum(tau, 1.0 / np.log10(total))
    ess = total / tau
    ess[np.isnan(rho).any(axis=1)] = np.nan
    constant = (x.max(axis=(1, 2)) - x.min(axis=(1, 2))) < np.finfo(float).resolution
    ess[constant] = total
    return ess


def _geyer_tau(rho: np.ndarray, pairs: np.ndarray, j_max: int) -> np.ndarray:
    """The integrated autocorrelation time from the pairs of autocorrelations (S, J):
    Geyer's initial positive, then monotone, sequence, as ArviZ's loop."""
    s = len(rho)
    nonpos = pairs[:, 1:] <= 0
    if nonpos.shape[1]:
        j_last = np.where(nonpos.any(axis=1), nonpos.argmax(axis=1) + 1, j_max)
    else:
        j_last = np.zeros(s, dtype=int)
    monotone = np.minimum.accumulate(pairs, axis=1)
    keep = np.arange(pairs.shape[1])[None, :] < j_last[:, None]
    even_last = rho[np.arange(s), 2 * j_last]
    pair_last = pairs[np.arange(s), j_last]
    extra = np.where((even_last > 0) | (pair_last >= 0), even_last, 0.0)
    tau = -1.0 + 2.0 * np.sum(monotone * keep, axis=1) + extra
    return np.where(pairs[:, 0] > 0, tau, 0.0)  # Geyer's loop never ran


def ess_bulk(x: np.ndarray, *, _z_bulk: np.ndarray | None = None) -> np.ndarray:
    """Bulk ESS (rank-normalised split chains) of series ``(S, chains, draws)``."""
    x = np.asarray(x, dtype=float)
    out = _ess(_z_scale(_split(x)) if _z_bulk is None else _z_bulk)
    out[~np.isfinite(x).all(axis=(1, 2))] = np.nan
    return out


def ess_tail(x: np.ndarray) -> np.ndarray:
    """Tail ESS: the smaller ESS of the 5% and 95% quantile indicators."""
    x = np.asarray(x, dtype=float)
    flat = x.reshape(x.shape[0], -1)
    q = np.quantile(flat, [0.05, 0.95], axis=-1)
    low = _ess(_split((x <= q[0][:, None, None]).astype(float)))
    high = _ess(_split((x <= q[1][:, None, None]).astype(float)))
    out = np.minimum(low, high)
    out[~np.isfinite(x).all(axis=(1, 2))] = np.nan
    return out


def mcse_mean(x: np.ndarray) -> np.ndarray:
    """MCSE of the mean (``arviz.mcse(method="mean")``) of series ``(S, chains, draws)``."""
    x = np.asarray(x, dtype=float)
    return _mcse(x)[0]


def mcse_sd(x: np.ndarray) -> np.ndarray:
    """MCSE of the standard deviation (``arviz.mcse(method="sd")``)."""
    x = np.asarray(x, dtype=float)
    return _mcse(x)[1]


def _mcse(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = x.shape[0]
    c2 = (x - x.reshape(s, -1).mean(axis=-1)[:, None, None]) ** 2
    size = c2[0].size
    with np.errstate(divide="ignore", invalid="ignore"):
        var = c2.reshape(s, -1).sum(axis=-1) / (size - 1)
        mean = np.sqrt(var / _ess(_split(x)))
        evar = c2.reshape(s, -1).mean(axis=-1)
        varvar = ((c2**2).reshape(s, -1).mean(axis=-1) - evar**2) / _ess(_split(c2))
        sd = np.sqrt(varvar / evar / 4)
    bad = ~np.isfinite(x).all(axis=(1, 2)) | (x.shape[2] < 4)
    mean[bad] = np.nan
    sd[bad] = np.nan
    return mean, sd


def _diagnose_chunk(x: np.ndarray) -> np.ndarray:
    z_bulk = _z_scale(_split(x))  # shared by R-hat and bulk ESS
    return np.stack([rhat(x, _z_bulk=z_bulk), ess_bulk(x, _z_bulk=z_bulk), ess_tail(x),
                     *_mcse(x)], -1)


def diagnose(x: np.ndarray, workers: int = 2) -> dict[str, np.ndarray]:
    """``r_hat``, ``ess_bulk``, ``ess_tail``, ``mcse_mean``, ``mcse_sd`` of ``(S, C, N)``."""
    x = np.asarray(x, dtype=float)
    # Sorting and FFTs release the GIL, so chunks of series run in parallel (from 32
    # series: a 24-matrix batch's 72 parameters take 0.12 s instead of 0.16 s on 2 cores)
    chunks = np.array_split(x, max(1, min(workers * 4, x.shape[0] // 16)), axis=0)
    if len(chunks) > 1:
        with ThreadPoolExecutor(workers) as pool:
            out = np.concatenate(list(pool.map(_diagnose_chunk, chunks)), axis=0)
    else:
        out = _diagnose_chunk(x)
    names = ("r_hat", "ess_bulk", "ess_tail", "mcse_mean", "mcse_sd")
    return {k: out[:, i] for i, k in enumerate(names)}
