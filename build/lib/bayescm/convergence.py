"""Convergence report: R-hat, bulk and tail ESS, divergences, in plain words.

Thresholds follow Vehtari, Gelman, Simpson, Carpenter & Bürkner, "Rank-normalization,
folding, and localization: an improved R-hat for assessing convergence of MCMC"
(Bayesian Analysis, 2021): rank-normalised split R-hat below 1.01 and bulk and tail
effective sample sizes of at least 100 per chain.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import arviz as az
import numpy as np
import pandas as pd

from bayescm import diagnostics


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
        One row per checked scalar (variable and coordinates): ``r_hat``,
        ``ess_bulk``, ``ess_tail``.
    divergences
        Number of divergent transitions after tuning.
    chains, draws
        Size of the posterior sample.
    rhat_max, ess_min
        The thresholds applied.
    """

    table: pd.DataFrame
    divergences: int
    chains: int
    draws: int
    rhat_max: float
    ess_min: float

    @property
    def worst(self) -> dict[str, float]:
        """Largest R-hat and smallest bulk/tail ESS over all checked scalars."""
        t = self.table
        return {
            "r_hat": float(t["r_hat"].max()),
            "ess_bulk": float(t["ess_bulk"].min()),
            "ess_tail": float(t["ess_tail"].min()),
        }

    @property
    def problems(self) -> list[str]:
        """What failed, in plain words, with what to do (empty when all is well)."""
        out = []
        t = self.table
        if self.chains < 2:
            out.append("Only one chain: R-hat cannot compare chains. Run chains >= 2 (4 is usual).")
        bad = t[~(t["r_hat"] < self.rhat_max)]
        if len(bad):
            out.append(
                f"R-hat >= {self.rhat_max} for {len(bad)} quantit{'y' if len(bad) == 1 else 'ies'}"
                f" (worst {bad['r_hat'].max():.3f} at {bad['r_hat'].idxmax()}): the chains "
                "disagree. Run longer (more tune and draws) or look at az.plot_trace."
            )
        for kind in ("ess_bulk", "ess_tail"):
            low = t[~(t[kind] >= self.ess_min)]
            if len(low):
                out.append(
                    f"{kind.replace('_', ' ')} below {self.ess_min:.0f} for {len(low)} "
                    f"quantit{'y' if len(low) == 1 else 'ies'} (lowest {low[kind].min():.0f} at "
                    f"{low[kind].idxmin()}): too few effective draws for stable "
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
        """True when every check passed."""
        return not self.problems

    def message(self) -> str:
        w = self.worst
        head = (
            f"{self.chains} chains x {self.draws} draws; max R-hat {w['r_hat']:.4f}, "
            f"min bulk ESS {w['ess_bulk']:.0f}, min tail ESS {w['ess_tail']:.0f}, "
            f"{self.divergences} divergences."
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
) -> ConvergenceReport:
    """Check R-hat, bulk/tail ESS and divergences of a posterior sample.

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

    Returns
    -------
    ConvergenceReport
        ``.ok``, ``.table``, ``.problems``; shows itself in plain words.

    Examples
    --------
    >>> import bayescm as bcm
    >>> idata = bcm.fit(bcm.models.three_beta(bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)),
    ...                 sampler="exact", random_seed=1)
    >>> bcm.check_convergence(idata).ok
    True
    """
    post = idata.posterior
    if var_names is None:
        recorded = idata.attrs.get("parameters")
        var_names = recorded.split(",") if recorded else list(post.data_vars)
    missing = [v for v in var_names if v not in post]
    if missing:
        raise KeyError(f"Variables {missing} are not in the posterior ({list(post.data_vars)}).")
    chains, draws = post.sizes["chain"], post.sizes["draw"]
    table = diagnostics.summary_table(post[list(var_names)])
    div = 0
    if "sample_stats" in idata.groups() and "diverging" in idata.sample_stats:
        div = int(np.asarray(idata.sample_stats["diverging"]).sum())
    return ConvergenceReport(
        table=table, divergences=div, chains=chains, draws=draws, rhat_max=rhat_max,
        ess_min=float(ess_min if ess_min is not None else 100 * chains),
    )
