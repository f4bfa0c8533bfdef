"""Convergence report: R-hat, bulk and tail ESS, MCSE, divergences, in plain words.

Thresholds follow Vehtari, Gelman, Simpson, Carpenter & Bürkner, "Rank-normalization,
folding, and localization: an improved R-hat for assessing convergence of MCMC"
(Bayesian Analysis, 2021): rank-normalised split R-hat below 1.01 and bulk and tail
effective sample sizes of at least 100 per chain.

Who computes the numbers
------------------------
* MCMC draws: ArviZ itself, ``arviz.summary(kind="diagnostics")`` — one pass per
  scalar giving the same numbers as ``az.rhat``, ``az.ess(method="bulk" | "tail")``
  and ``az.mcse(method="mean" | "sd")`` (it shares the rank normalisation between
  R-hat and bulk ESS, so it is the fastest of ArviZ's entry points; measured in
  ``benchmarks/bench_core.py``).
* Large MCMC batches: ArviZ loops over scalars in Python, a few milliseconds each,
  which measured above 20% of a three-Beta NUTS fit's wall time from about a dozen
  scalars up (24-matrix literature batch: 31%; 1,000 matrices: 29%).  So when ``fit``
  recorded its own wall time before the check (``attrs["fit_seconds"]``), the check
  first times ArviZ on a few scalars and, if all of them would make the check more
  than :data:`ARVIZ_MAX_SHARE` of the fit's wall time (the check included), computes
  the same estimators on all scalars at once with :mod:`bayescm.inference.diagnostics` (tested
  equal to ArviZ's to 1e-10 relative).  ``backend="arviz"`` forces ArviZ; without a
  recorded fit time (a user's own trace) ArviZ is used.
* The exact sampler (``idata.attrs["sampler"] == "exact"``): the draws are
  independent by construction, so R-hat does not apply and the effective sample
  size is the number of draws.  No MCMC diagnostic is computed; the Monte Carlo
  standard errors are the i.i.d. ones (ArviZ's formulas with ESS = draws).
"""

from __future__ import annotations

import html
import importlib.metadata
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from bayescm import idata as idata_mod
from bayescm.inference.arguments import check_fit_result

if TYPE_CHECKING:  # ArviZ is imported when a check runs, not with bayescm
    import arviz as az
    import xarray as xr

COLUMNS = ("r_hat", "ess_bulk", "ess_tail", "mcse_mean", "mcse_sd")
BACKENDS = ("auto", "arviz", "vectorised")
# The 20% rule: ArviZ's own estimators unless, timed on probes of a few scalars, they
# would make the check more than this share of the fit's wall time (fit records it).  Measured
# (benchmarks/bench_core.py section 5, bench_hui_walter.py; 2-core machine): ArviZ's
# share of a three-Beta NUTS fit is 9% at 3 scalars, 18-24% at 12, 31% at 72, 29% at
# 3,000; of a Hui-Walter fit 7% at 6 scalars and 12% at 28.
ARVIZ_MAX_SHARE = 0.2
# Scalars in the probe that estimates ArviZ's cost per scalar.
_PROBE = 4
# ArviZ's cost (fixed part, per scalar) by posterior size (chains, draws), probed once per
# process: a batch's later checks (refits, prior sensitivity) decide without probing again.
_ARVIZ_COST: dict[tuple[int, ...], tuple[float, float]] = {}


class ConvergenceWarning(UserWarning):
    """The chains have not demonstrably converged; see the report."""


class ConvergenceError(RuntimeError):
    """Raised by ``fit(..., strict=True)`` when the convergence check fails."""


@dataclass(frozen=True)
class ConvergenceReport:
    """Result of :func:`check_convergence`.

    Attributes
    ----------
    table
        One row per checked scalar (variable and coordinates, labelled as ArviZ
        does, e.g. ``tpr[cocaine]``): ``r_hat``, ``ess_bulk``, ``ess_tail``,
        ``mcse_mean``, ``mcse_sd``.  ``r_hat`` is NaN where it does not apply
        (independent draws) or cannot be computed (one chain).
    divergences
        Number of divergent transitions after tuning.
    chains, draws
        Size of the posterior sample.
    rhat_max, ess_min
        The thresholds applied.
    independent
        True for i.i.d. draws (the exact sampler): no MCMC diagnostic applies.
    computed_by
        What computed the table, e.g. ``"ArviZ 0.23.4"``.
    gibbs
        True for Gibbs sampling, which has no divergent transitions to count.
    """

    table: pd.DataFrame
    divergences: int
    chains: int
    draws: int
    rhat_max: float
    ess_min: float
    independent: bool = False
    computed_by: str = ""
    gibbs: bool = False

    def to_frame(self) -> pd.DataFrame:
        """The per-scalar table (a copy): R-hat, bulk/tail ESS, MCSE of mean and sd."""
        return self.table.copy()

    @property
    def worst(self) -> dict[str, float]:
        """Largest R-hat and smallest bulk/tail ESS over all checked scalars (NaN if none)."""
        t = self.table
        return {
            "r_hat": _nan_max(t["r_hat"]),
            "ess_bulk": _nan_min(t["ess_bulk"]),
            "ess_tail": _nan_min(t["ess_tail"]),
        }

    @property
    def problems(self) -> list[str]:
        """What failed, in plain words, with what to do (empty when all is well)."""
        if self.independent:
            return []  # i.i.d. draws: nothing to converge, no divergences possible
        out = []
        t = self.table
        if self.chains < 2:
            out.append(
                "Only one chain: R-hat compares chains, so it needs at least 2 and was not "
                "computed; convergence cannot be judged from one chain. Run chains >= 2 "
                "(4 is usual)."
            )
        else:
            r = t["r_hat"]
            missing = r[r.isna()]
            if len(missing):
                out.append(
                    f"R-hat could not be computed for {_count(len(missing))} (first: "
                    f"{missing.index[0]}): draws that are not finite, constant, or fewer than "
                    "4 per chain. Look at the draws (az.plot_trace) and run more draws."
                )
            bad = r[r >= self.rhat_max]
            if len(bad):
                out.append(
                    f"R-hat >= {self.rhat_max} for {_count(len(bad))} (worst "
                    f"{bad.max():.3f} at {bad.idxmax()}): the chains disagree. Run longer "
                    "(more tune and draws) or look at az.plot_trace."
                )
        for kind in ("ess_bulk", "ess_tail"):
            ess = t[kind]
            low = ess[~(ess >= self.ess_min)]
            if len(low):
                finite = low.dropna()
                where = (f"lowest {finite.min():.0f} at {finite.idxmin()}" if len(finite)
                         else "not computable")
                out.append(
                    f"{kind.replace('_', ' ')} below {self.ess_min:.0f} for {_count(len(low))} "
                    f"({where}): too few effective draws for stable "
                    f"{'means' if kind == 'ess_bulk' else 'interval bounds'}. Increase draws."
                )
        if self.divergences:
            out.append(
                f"{self.divergences} divergent transition(s): the sampler could not follow the "
                "posterior geometry, so draws may be biased. Use stronger priors or "
                "target_accept closer to 1."
            )
        return out

    @property
    def ok(self) -> bool:
        """True when every check passed (always for independent draws)."""
        return not self.problems

    def message(self) -> str:
        """The verdict in plain words: one summary line, then each problem."""
        w = self.worst
        if self.independent:
            n = self.chains * self.draws
            return (
                f"Converged by construction: {self.chains} chains x {self.draws} draws = {n} "
                "draws from the exact posterior, independent by construction. R-hat does not "
                f"apply and the effective sample size is {n} for every quantity; no MCMC "
                "diagnostics were computed and no divergences are possible."
            )
        rhat = f"max R-hat {w['r_hat']:.4f}" if math.isfinite(w["r_hat"]) else (
            "R-hat not computed (needs >= 2 chains)" if self.chains < 2 else "R-hat not computed")
        head = (
            f"{self.chains} chain{'s' if self.chains != 1 else ''} x {self.draws} draws; "
            f"{rhat}, min bulk ESS {w['ess_bulk']:.0f}, min tail ESS {w['ess_tail']:.0f}, "
            + ("Gibbs sampling" if self.gibbs else f"{self.divergences} divergences")
            + f" (computed by {self.computed_by})."
        )
        if self.ok:
            return "Converged: " + head
        return "NOT converged: " + head + "\n" + "\n".join(f"- {p}" for p in self.problems)

    def __repr__(self) -> str:
        return f"ConvergenceReport(ok={self.ok})\n{self.message()}"

    def _repr_html_(self) -> str:
        color = "#1a7f37" if self.ok else "#cf222e"
        items = "".join(f"<li>{html.escape(p)}</li>" for p in self.problems)
        head = html.escape(self.message().splitlines()[0])
        return (
            f"<div><b style='color:{color}'>{head}</b>"
            f"{'<ul>' + items + '</ul>' if items else ''}"
            f"{self.table.to_html(float_format=lambda x: f'{x:.4g}', max_rows=20)}</div>"
        )


def check_convergence(
    idata: az.InferenceData,
    *,
    var_names: Sequence[str] | None = None,
    rhat_max: float = 1.01,
    ess_min: float | None = None,
    backend: str = "auto",
) -> ConvergenceReport:
    """Check R-hat, bulk/tail ESS, MCSE and divergences of a posterior sample.

    For MCMC draws the numbers are ArviZ's: rank-normalised split R-hat
    :math:`\\hat R = \\max(\\hat R_{bulk}, \\hat R_{tail})`, bulk and tail ESS
    (Vehtari et al. 2021) and the Monte Carlo standard errors of the mean and the
    standard deviation, from ``arviz.summary(kind="diagnostics")``.  Draws of the
    exact sampler (``idata.attrs["sampler"] == "exact"``) are i.i.d.: the report
    says so and computes no MCMC diagnostic.

    Parameters
    ----------
    idata
        InferenceData with a ``posterior`` group (and ``sample_stats`` for
        divergences).
    var_names
        Variables to check.  Default: the model's parameters recorded by ``fit``
        in ``idata.attrs["parameters"]``, else every posterior variable.
    rhat_max
        R-hat must be below this (default 1.01).
    ess_min
        Minimum bulk and tail ESS; default 100 per chain.
    backend
        ``"auto"`` (default): ArviZ, unless ``fit`` recorded its wall time and
        ArviZ, timed on probes of a few scalars, would make the check more than
        :data:`ARVIZ_MAX_SHARE` (20%) of the fit; then :mod:`bayescm.inference.diagnostics`
        (the same estimators vectorised, tested equal to ArviZ's).
        ``"arviz"`` or ``"vectorised"`` force one.  Ignored for independent
        draws.

    Returns
    -------
    ConvergenceReport
        ``.ok``, ``.table`` / ``.to_frame()``, ``.problems``; shows itself in
        plain words and says what computed its numbers.

    Examples
    --------
    >>> import bayescm as bcm
    >>> idata = bcm.fit(bcm.models.three_beta(bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)),
    ...                 sampler="exact", random_seed=1)
    >>> report = bcm.check_convergence(idata)
    >>> report.ok, report.independent
    (True, True)
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}.")
    check_fit_result(idata)
    _check_thresholds(rhat_max, ess_min)
    post = idata_mod.group(idata, "posterior")
    attrs = idata_mod.attrs(idata)
    if var_names is None:
        recorded = attrs.get("parameters")
        var_names = recorded.split(",") if recorded else list(post.data_vars)
    missing = [v for v in var_names if v not in post]
    if missing:
        raise KeyError(f"Variables {missing} are not in the posterior ({list(post.data_vars)}).")
    chains, draws = int(post.sizes["chain"]), int(post.sizes["draw"])
    post = post[list(var_names)]
    independent = attrs.get("sampler") == "exact"
    if independent:
        table, computed_by = _iid_table(post), "bayescm (i.i.d. draws: no MCMC diagnostics)"
    else:
        names, x = _series(post)
        version = importlib.metadata.version("arviz")
        # one chain: ArviZ would log "Shape validation failed", which the report says in
        # words; its estimators vectorised give the same numbers without the log line
        use_arviz = backend == "arviz" or (backend == "auto" and chains > 1 and
                                           _arviz_affordable(x, attrs.get("fit_seconds")))
        if use_arviz:
            table, computed_by = _arviz_table(post), f"ArviZ {version}"
        else:
            from bayescm.inference import diagnostics

            n_scalars = len(names)
            table = _frame(names, diagnostics.diagnose(x))
            computed_by = (f"bayescm.inference.diagnostics, ArviZ {version}'s estimators "
                           f"vectorised for {n_scalars} scalars")
    div = 0
    stats = (idata_mod.group(idata, "sample_stats")
             if idata_mod.has_group(idata, "sample_stats") else {})
    if "diverging" in stats:
        div = int(np.asarray(stats["diverging"]).sum())
    return ConvergenceReport(
        table=table, divergences=div, chains=chains, draws=draws, rhat_max=rhat_max,
        ess_min=float(ess_min if ess_min is not None else 100 * chains),
        independent=independent, computed_by=computed_by,
        gibbs=attrs.get("sampler") == "gibbs",
    )


def _check_thresholds(rhat_max: object, ess_min: object) -> None:
    """R-hat is >= 1 by construction: a bound at or below 1 could never be met."""
    def number(v: object) -> bool:
        return isinstance(v, int | float | np.integer | np.floating) and not isinstance(
            v, bool | np.bool_) and not math.isnan(float(v))

    if not (number(rhat_max) and float(rhat_max) > 1):
        raise ValueError(f"rhat_max must be a number above 1 (R-hat is never below 1; "
                         f"the usual bound is 1.01), got {rhat_max!r}.")
    if ess_min is not None and not (number(ess_min) and float(ess_min) >= 0):
        raise ValueError(f"ess_min must be a number >= 0 (default 100 per chain), or None, "
                         f"got {ess_min!r}.")


def _arviz_affordable(x: np.ndarray, fit_seconds: float | None) -> bool:
    """Whether ArviZ on all scalars of ``x`` keeps the check within ARVIZ_MAX_SHARE of the fit.

    ArviZ's cost is a fixed part plus a part linear in the number of scalars: both are
    timed on probes of 1 and :data:`_PROBE` scalars (on this machine, in this process:
    no constant to go stale; once per posterior size) and extrapolated.  The check is
    at most a share ``s`` of the fit (check included) when it costs at most
    ``s / (1 - s)`` of the fit before it.
    Small posteriors skip the probes, which would cost about as much as the answer.
    """
    if fit_seconds is None or len(x) <= 2 * _PROBE:
        return True
    import time

    import xarray as xr

    def cost(k: int) -> float:
        probe = xr.Dataset({"probe": (("chain", "draw", "scalar"), np.moveaxis(x[:k], 0, -1))})
        start = time.perf_counter()
        _arviz_table(probe)
        return time.perf_counter() - start

    key = tuple(x.shape[1:])
    if key not in _ARVIZ_COST:
        one, several = cost(1), cost(_PROBE)
        # timing noise can make the difference tiny or negative: never below a quarter of
        # the probe's average cost per scalar
        per_scalar = max((several - one) / (_PROBE - 1), several / _PROBE / 4)
        _ARVIZ_COST[key] = (max(one - per_scalar, 0.0), per_scalar)
    fixed, per_scalar = _ARVIZ_COST[key]
    estimate = fixed + per_scalar * len(x)
    return estimate <= ARVIZ_MAX_SHARE / (1 - ARVIZ_MAX_SHARE) * float(fit_seconds)


def _arviz_table(post: xr.Dataset) -> pd.DataFrame:
    """ArviZ's own diagnostics of every scalar, in one ``az.summary`` pass."""
    import arviz as az

    # ArviZ's numba variance is compiled without a cache: 0.6 s in every fresh process,
    # more than a first fit, for no speed-up at these sizes (0.34 s against 0.33 s for
    # 72 scalars x 4,000 draws, numbers equal to 1e-13).  So its NumPy path runs here,
    # and the user's setting is restored.
    numba_was_on = bool(az.Numba.numba_flag)
    if numba_was_on:
        az.Numba.disable_numba()
    try:
        with warnings.catch_warnings():
            # 0/0 for a constant quantity: the report names it as a problem.  (With one
            # chain, backend="arviz" only, ArviZ logs "Shape validation failed".)
            warnings.filterwarnings("ignore", category=RuntimeWarning, module="arviz")
            frame = az.summary(post, kind="diagnostics", round_to="none")
    finally:
        if numba_was_on:
            az.Numba.enable_numba()
    frame.index.name = "quantity"
    return frame.loc[:, list(COLUMNS)].astype(float)


def _labels(name: str, da: xr.DataArray) -> list[str]:
    """Row labels of one variable's scalars, as ArviZ writes them (``theta[cm0, tp]``)."""
    other = [d for d in da.dims if d not in ("chain", "draw")]
    if not other:
        return [str(name)]
    idx = pd.MultiIndex.from_product([da[d].values for d in other])
    return [f"{name}[{', '.join(map(str, i if isinstance(i, tuple) else (i,)))}]" for i in idx]


def _series(post: xr.Dataset) -> tuple[list[str], np.ndarray]:
    """Every scalar's draws as an array ``(scalars, chains, draws)``, with ArviZ's labels."""
    names: list[str] = []
    blocks: list[np.ndarray] = []
    for name, da in post.data_vars.items():
        other = [d for d in da.dims if d not in ("chain", "draw")]
        arr = np.asarray(da.transpose(*other, "chain", "draw").values, dtype=float)
        blocks.append(arr.reshape(-1, da.sizes["chain"], da.sizes["draw"]))
        names += _labels(str(name), da)
    shape = (0, post.sizes["chain"], post.sizes["draw"])
    return names, np.concatenate(blocks, axis=0) if blocks else np.zeros(shape)


def _frame(names: list[str], columns: dict[str, np.ndarray]) -> pd.DataFrame:
    return pd.DataFrame({k: columns[k] for k in COLUMNS}, index=pd.Index(names, name="quantity"))


def _iid_table(post: xr.Dataset) -> pd.DataFrame:
    """ESS = number of draws, no R-hat, and the i.i.d. Monte Carlo standard errors.

    MCSE of the mean :math:`s/\\sqrt{n}`; of the standard deviation ArviZ's
    formula with ESS = n: :math:`\\sqrt{(m_4 - m_2^2) / (4 n m_2)}` with central
    moments :math:`m_2, m_4`.  One pass over the draws in their stored layout.
    """
    names: list[str] = []
    m2s: list[np.ndarray] = []
    m4s: list[np.ndarray] = []
    n = post.sizes["chain"] * post.sizes["draw"]
    for name, da in post.data_vars.items():
        other = [d for d in da.dims if d not in ("chain", "draw")]
        x = np.asarray(da.transpose("chain", "draw", *other).values, dtype=float)
        c2 = x.reshape(n, -1) - x.reshape(n, -1).mean(axis=0)
        np.square(c2, out=c2)
        m2s.append(c2.mean(axis=0))
        m4s.append(np.einsum("ij,ij->j", c2, c2) / n)
        names += _labels(str(name), da)
    m2 = np.concatenate(m2s) if m2s else np.zeros(0)
    m4 = np.concatenate(m4s) if m4s else np.zeros(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mcse_sd = np.sqrt((m4 - m2**2) / n / m2 / 4)
    return _frame(names, {
        "r_hat": np.full(len(names), np.nan), "ess_bulk": np.full(len(names), float(n)),
        "ess_tail": np.full(len(names), float(n)), "mcse_mean": np.sqrt(m2 / (n - 1)),
        "mcse_sd": mcse_sd,
    })


def _count(n: int) -> str:
    return f"{n} quantit{'y' if n == 1 else 'ies'}"


def _nan_max(s: pd.Series) -> float:
    s = s.dropna()
    return float(s.max()) if len(s) else math.nan


def _nan_min(s: pd.Series) -> float:
    s = s.dropna()
    return float(s.min()) if len(s) else math.nan
