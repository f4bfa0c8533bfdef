"""The sections of :func:`bayescm.report`, each filled from the fit or listed as missing.

Every builder reads the InferenceData (its groups and ``attrs``) and the model record
(:func:`bayescm.inference.persist.read_spec`); what a fit does not hold is a
:class:`~bayescm.report.render.Missing` item saying what the authors must report.
Whether a fit is a latent-class analysis is read from its data (outcome patterns on
dim ``pattern``), never from the family's name.
"""

from __future__ import annotations

import importlib.metadata
import platform
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from bayescm import idata as idata_mod
from bayescm.priors import Beta, Gamma
from bayescm.report.render import (
    Figure,
    Items,
    Missing,
    Section,
    Table,
    Text,
    figure_png,
    forest_png,
    format_frame,
    number,
    predictive_png,
)
from bayescm.report.slices import SLICE, slice_frame, slice_notes, sliced_classifier
from bayescm.stats import SAMPLE_DIMS, hdi

if TYPE_CHECKING:
    import arviz as az

__all__ = ["Context", "is_latent_class", "pattern_groups"]

_ESTIMATE_COLUMNS = ["mean", "sd", "median", "hdi_lower", "hdi_upper"]
# rows of the per-quantity convergence table (the verdict above it covers all of them)
_MAX_ROWS = 60


def is_latent_class(idata: az.InferenceData) -> bool:
    """True when the observed data are outcome patterns of classifiers without labels."""
    if idata_mod.has_group(idata, "observed_data"):
        obs = idata_mod.group(idata, "observed_data")
        if "counts" in obs:
            return "pattern" in obs["counts"].dims
    return (idata_mod.has_group(idata, "posterior")
            and "pattern_prob" in idata_mod.group(idata, "posterior"))


def pattern_groups(patterns: list[str]) -> dict[str, list[str]]:
    """Patterns split into complete results, results with a missing one (``?``), verified
    cases (``|D+`` / ``|D-``)."""
    out: dict[str, list[str]] = {"complete": [], "missing": [], "verified": []}
    for p in patterns:
        out["verified" if "|" in p else "missing" if "?" in p else "complete"].append(p)
    return out


class Context:
    """What the sections share: the fit, its attrs, its model record, its kind."""

    def __init__(self, idata: az.InferenceData, *, hdi_prob: float) -> None:
        from bayescm.inference import persist

        self.idata = idata
        self.attrs = dict(idata_mod.attrs(idata))
        self.recorded = persist.read_spec(idata)
        self.latent = is_latent_class(idata)
        self.hdi_prob = hdi_prob
        self.post = (idata_mod.group(idata, "posterior")
                     if idata_mod.has_group(idata, "posterior") else None)
        obs = (idata_mod.group(idata, "observed_data")
               if idata_mod.has_group(idata, "observed_data") else {})
        self.counts = obs["counts"] if "counts" in obs else None
        # a sliced matrix (dim slice): its slices, levels and empty ones, and whose
        # predictions they split (see bayescm.report.slices)
        sliced = self.counts is not None and self.counts.dims[:1] == (SLICE,)
        self.slices = slice_frame(self.counts) if sliced else None
        self.classifier = (sliced_classifier(getattr(obs, "attrs", {}), self.recorded)
                           if sliced else None)

    def coords(self, dim: str) -> list[str]:
        if self.post is None or dim not in self.post.coords:
            return []
        return [str(v) for v in self.post[dim].values]

    @property
    def patterns(self) -> dict[str, list[str]]:
        names = [] if self.counts is None else [str(p) for p in self.counts["pattern"].values]
        return pattern_groups(names)


def _missing(s: Section, what: str) -> Section:
    """``s`` with nothing but the item the authors must report."""
    s.status = "missing"
    s.blocks.append(Missing(what))
    return s


# -- 1. model and assumptions -------------------------------------------------------------
def model(ctx: Context) -> Section:
    s = Section("model", "Model and assumptions", "filled")
    if ctx.recorded is None:
        return _missing(s, "the model: its likelihood, parameters and assumptions (this "
                            "fit carries no model record, attrs['model_spec']).")
    family, spec, _ = ctx.recorded
    s.blocks.append(Text(family.describe(spec)))
    s.blocks.append(Text(f"Fitted with bcm.fit: model family '{spec.family}', sampler "
                         f"'{ctx.attrs.get('sampler', '?')}'."))
    if ctx.slices is not None:
        whose = "" if ctx.classifier is None else f" of classifier {ctx.classifier!r}"
        s.blocks.append(Text(f"Units: {len(ctx.slices)} slices{whose} (dim 'slice'; "
                             f"{int(ctx.slices['empty'].sum())} empty), each with its own "
                             "confusion matrix; see the Data section."))
    if ctx.latent:
        # the family's description already states the missing-at-random and verification
        # assumptions of tables with such cells (HuiWalter.describe)
        if "identifiability" in ctx.attrs:
            s.blocks.append(Text("Identifiability: " + str(ctx.attrs["identifiability"])))
    return s


# -- 2. priors ----------------------------------------------------------------------------
def _interval(lo: float, hi: float) -> str:
    return f"[{number(lo)}, {number(hi)}]"


def _stated(prior: Any) -> tuple[str, str]:
    """Mean and central 95% interval of a prior as stated (marginals for a Dirichlet)."""
    if not prior.proper:
        return "improper", "–"
    if isinstance(prior, Beta | Gamma):
        dist = (sps.beta(prior.alpha, prior.beta) if isinstance(prior, Beta)
                else sps.gamma(prior.alpha, scale=1 / prior.beta))
        return number(dist.mean()), _interval(*dist.ppf([0.025, 0.975]))
    if hasattr(prior, "scipy"):  # Normal, HalfNormal (bayescm.priors.normal)
        dist = prior.scipy()
        return number(dist.mean()), _interval(*dist.ppf([0.025, 0.975]))
    alpha = np.atleast_2d(np.asarray(prior.alpha, dtype=float))
    means, intervals = [], []
    for row in alpha:  # each component's marginal is Beta(a_i, a_0 - a_i)
        total = row.sum()
        means.append(", ".join(number(a / total) for a in row))
        intervals.append(", ".join(_interval(*sps.beta(a, total - a).ppf([0.025, 0.975]))
                                   for a in row))
    return " / ".join(means), " / ".join(intervals)


def _prior_draws(ctx: Context, name: str, unit: str) -> str:
    """Mean and central 95% interval of the fit's prior draws of ``name`` at ``unit``."""
    if not idata_mod.has_group(ctx.idata, "prior"):
        return "–"
    ds = idata_mod.group(ctx.idata, "prior")
    if name not in ds:
        return "–"
    da = ds[name]
    for d in [d for d in da.dims if d not in SAMPLE_DIMS]:
        labels = [str(v) for v in da[d].values]
        if unit in labels:
            da = da.isel({d: labels.index(unit)})
            break
    if any(d not in SAMPLE_DIMS for d in da.dims):
        return "–"
    x = np.asarray(da, dtype=float).ravel()
    return f"{number(x.mean())} {_interval(*np.quantile(x, [0.025, 0.975]))}"


def priors(ctx: Context) -> Section:
    s = Section("priors", "Priors", "filled")
    if ctx.recorded is None:
        return _missing(s, "every prior: its distribution, its parameters and why it "
                            "was chosen (this fit carries no model record).")
    recorded = ctx.recorded[2]
    first = [p for p in str(ctx.attrs.get("parameters", "")).split(",") if p in recorded]
    rows, unexplained = [], []
    for name in first + [n for n in recorded if n not in first]:
        for unit, prior in recorded[name].items():
            mean, interval = _stated(prior)
            rows.append({"parameter": name, "unit": unit, "prior": repr(prior), "mean": mean,
                         "95% interval": interval,
                         "prior draws: mean [95%]": _prior_draws(ctx, name, unit),
                         "elicited from": prior.elicited or "–",
                         "rationale": prior.rationale or "not recorded"})
            if not prior.rationale:
                unexplained.append(f"{name}[{unit}]")
    s.blocks.append(Table(pd.DataFrame(rows), "Priors used (mean and central 95% interval of "
                          "each distribution as stated; the prior draws show it as the model "
                          "used it, e.g. after a truncation)"))
    if unexplained:
        s.blocks.append(Missing(
            f"why each prior was chosen (its rationale) for {', '.join(unexplained)}. Record it "
            "with the prior, e.g. bcm.priors.Beta(20, 4, rationale='...') or "
            "dataclasses.replace(prior, rationale='...')."))
    return s


# -- 3. prior sensitivity -----------------------------------------------------------------
# the columns of a prior-sensitivity table worth a reader's eye, in this order (the
# result's table has per-fit diagnostics too; a frame without these is shown whole)
_SENSITIVITY_COLUMNS = ("mean", "sd", "hdi_lower", "hdi_upper", "hdi_low", "hdi_high",
                        "shift", "width_ratio", "prior", "converged")


def sensitivity(ctx: Context, result: Any) -> Section:
    s = Section("prior-sensitivity", "Prior sensitivity", "filled")
    if result is None:
        return _missing(s, "how the posterior moves with the priors: run "
                            "bcm.analysis.prior_sensitivity(model) and pass its result to "
                            "bcm.report as sensitivity=.")
    frame = result if isinstance(result, pd.DataFrame) else result.to_frame()
    s.blocks.append(Text("Each alternative set of priors refits the model. Per parameter and "
                         "unit: the posterior under it, its shift (the move of the posterior "
                         "mean from the baseline, in baseline posterior sds) and width_ratio "
                         "(HDI width over the baseline's), as bcm.analysis.prior_sensitivity "
                         "defines them."))
    shift = frame["shift"].abs().dropna() if "shift" in frame else pd.Series(dtype=float)
    if len(shift):
        where = shift.idxmax()
        label = ", ".join(map(str, where)) if isinstance(where, tuple) else str(where)
        s.blocks.append(Text(f"Largest shift: {number(frame['shift'].loc[where])} "
                             f"({label})."))
    alternatives = getattr(result, "alternatives", None)
    if isinstance(alternatives, pd.DataFrame) and "priors" in alternatives:
        cols = [c for c in ("priors", "converged", "divergences") if c in alternatives]
        s.blocks.append(Table(format_frame(alternatives[cols]), "Alternatives"))
    cols = [c for c in _SENSITIVITY_COLUMNS if c in frame] or list(frame.columns)
    s.blocks.append(Table(format_frame(frame[cols]), "Posterior under alternative priors"))
    if not isinstance(result, pd.DataFrame) and callable(getattr(result, "plot", None)):
        s.blocks.append(Figure(figure_png(lambda fig: result.plot(ax=fig.add_subplot()),
                                          size=(7, 4.5)),
                               "Posterior mean and HDI under each alternative"))
    return s


# -- 4. identifiability and convergence ---------------------------------------------------
_STATUS = {"data": "identified by the data",
           "priors": "identified only through informative priors",
           "none": "not identified by the data or the priors"}


def identifiability(ctx: Context) -> Section:
    s = Section("identifiability", "Identifiability", "filled")
    if "identifiability" not in ctx.attrs:
        return _missing(s, "whether the model is identified: the degrees of freedom of "
                            "the data against the free parameters.")
    a = ctx.attrs
    if "degrees_of_freedom" in a:
        status = str(a.get("identifiability_status", ""))
        s.blocks.append(Table(pd.DataFrame({
            "degrees of freedom": [number(a["degrees_of_freedom"])],
            "free parameters": [number(a["free_parameters"])],
            "status": [f"{status}: {_STATUS.get(status, '')}".rstrip(": ")]})))
    s.blocks.append(Text(str(a["identifiability"])))
    return s


def convergence(ctx: Context) -> Section:
    s = Section("convergence", "Convergence", "filled")
    if ctx.post is None:
        return _missing(s, "the sampler's convergence (this result has no posterior).")
    from bayescm.inference.convergence import check_convergence

    rep = check_convergence(ctx.idata)
    lines = rep.message().splitlines()
    s.blocks.append(Text(f"Sampler '{ctx.attrs.get('sampler', '?')}', engine "
                         f"'{ctx.attrs.get('engine', '?')}': {rep.chains} chains × {rep.draws} "
                         f"draws = {rep.chains * rep.draws} draws; {rep.divergences} divergent "
                         "transitions."))
    s.blocks.append(Text(lines[0]))
    if lines[1:]:
        s.blocks.append(Items(tuple(x.removeprefix("- ") for x in lines[1:])))
    table = rep.to_frame().loc[:, ["r_hat", "ess_bulk", "ess_tail", "mcse_mean"]]
    shown = f" (the first {_MAX_ROWS} of {len(table)})" if len(table) > _MAX_ROWS else ""
    s.blocks.append(Table(format_frame(table.head(_MAX_ROWS)), "Per quantity: rank-normalised "
                          "split R-hat (must be < 1.01), bulk and tail ESS, MCSE of the mean"
                          + shown))
    return s


# -- 5. data ------------------------------------------------------------------------------
def data(ctx: Context) -> Section:
    s = Section("data", "Data: results by population" if ctx.latent else "Data", "filled")
    counts = ctx.counts
    if counts is None:
        return _missing(s, "the data: the cross-tables of results (this fit has no "
                            "observed_data group).")
    if ctx.latent:
        names = ", ".join(ctx.coords("classifier")) or "the classifiers"
        groups = ctx.patterns
        legend = "+ positive, - negative" + (", ? no result" if groups["missing"] else "")
        verified = ("; '|D+' / '|D-' marks a case verified as positive / negative"
                    if groups["verified"] else "")
        s.blocks.append(Text(f"Each pattern lists the results of {names}, in that order: "
                             f"{legend}{verified}."))
        frame = counts.transpose(..., "pattern").to_pandas()
        frame = frame if isinstance(frame, pd.DataFrame) else frame.to_frame().T
        captions = {"complete": "All results present", "missing": "With missing results",
                    "verified": "Verified cases (true class known)"}
        for key, cols in groups.items():
            if cols:
                part = frame[cols].copy()
                part["n"] = part.sum(axis=1)
                s.blocks.append(Table(format_frame(part), captions[key]))
        s.blocks.append(Text("Cases per population: " + ", ".join(
            f"{k} {number(v)}" for k, v in frame.sum(axis=1).items()) + "."))
        return s
    if ctx.slices is not None:
        frame = ctx.slices.assign(empty=ctx.slices["empty"].map({True: "yes", False: "no"}))
        levels = len(frame.columns) > 6  # level columns besides the cells, n and empty
        s.blocks += slice_notes(ctx.slices, ctx.classifier)
        s.blocks.append(Table(format_frame(frame, index=not levels),
                              "Slices: levels, observed counts, cases and empty slices"))
        return s
    if counts.ndim <= 2:
        frame = counts.to_pandas()
        frame = frame.to_frame().T if isinstance(frame, pd.Series) else frame.copy()
        frame["n"] = frame.sum(axis=1)
        s.blocks.append(Table(format_frame(frame), "Observed counts"))
        return s
    first = counts.dims[0]
    for value in counts[first].values:
        part = counts.sel({first: value}).to_pandas()
        s.blocks.append(Table(format_frame(part), f"{first} {value}: rows "
                              f"{part.index.name}, columns {part.columns.name}"))
    return s


# -- 6. posterior estimates ---------------------------------------------------------------
def _draw_stats(da: Any, hdi_prob: float) -> dict[str, float]:
    x = np.asarray(da, dtype=float).ravel()
    lo, hi = hdi(x, hdi_prob)
    return {"mean": x.mean(), "sd": x.std(ddof=1), "median": np.median(x),
            "hdi_lower": float(lo), "hdi_upper": float(hi)}


def estimate_frame(ctx: Context) -> pd.DataFrame:
    """The estimates shown: ``bcm.summary`` of a labelled fit; for a latent-class fit one
    row per parameter and unit (Se and Sp per classifier, prevalence per population,
    covariances per dependent pair), computed as ``bcm.summary`` does (its HDI)."""
    from bayescm.summary import summary

    if not ctx.latent:
        return summary(ctx.idata, hdi_prob=ctx.hdi_prob)
    # the parameters fit recorded (the family's); a fit without that record (the JAGS
    # twin's: its posterior holds the parameters only) shows every variable of at most
    # one unit dim, as bcm.check_convergence takes every variable
    recorded = [n for n in str(ctx.attrs.get("parameters", "")).split(",") if n in ctx.post]
    names = recorded or [str(n) for n, da in ctx.post.data_vars.items()
                         if len(set(da.dims) - set(SAMPLE_DIMS)) <= 1]
    rows: dict[tuple[str, str], Mapping[str, float]] = {}
    for name in names:
        da = ctx.post[name]
        unit = next((d for d in da.dims if d not in SAMPLE_DIMS), None)
        for value in ([None] if unit is None else da[unit].values):
            part = da if unit is None else da.sel({unit: value})
            rows[(name, "" if unit is None else str(value))] = _draw_stats(part, ctx.hdi_prob)
    frame = pd.DataFrame.from_dict(rows, orient="index")[_ESTIMATE_COLUMNS]
    frame.index = pd.MultiIndex.from_tuples(frame.index, names=["parameter", "unit"])
    return frame.astype(float)


def estimates(ctx: Context) -> Section:
    s = Section("estimates", "Posterior estimates", "filled")
    if ctx.post is None:
        return _missing(s, "the estimates with their credible intervals (no posterior).")
    frame = estimate_frame(ctx)
    n = ctx.post.sizes["chain"] * ctx.post.sizes["draw"]
    pct = f"{100 * ctx.hdi_prob:g}%"
    s.blocks.append(Text(f"Posterior mean, sd and median, and the {pct} highest-density "
                         f"interval (HDI: the narrowest interval holding {pct} of the "
                         f"posterior), from {n} posterior draws (as bcm.summary computes "
                         "them)."))
    if ctx.slices is not None and ctx.slices["empty"].any():
        s.blocks.append(Text("Empty slices (" + ", ".join(ctx.slices.index[
            ctx.slices["empty"].to_numpy()][:8]) + ") have no cases: their rows show what "
            "the model gives a slice without data, not estimates from cases."))
    s.blocks.append(Table(format_frame(frame), f"Estimates with {pct} HDI"))
    bounded = frame[(frame["hdi_lower"] >= -1) & (frame["hdi_upper"] <= 1)].head(40)
    if len(bounded):
        s.blocks.append(Figure(forest_png(bounded, f"Posterior mean and {pct} HDI"),
                               f"Posterior means (dots) and {pct} HDIs (lines)"))
    return s


# -- 7. posterior predictive check --------------------------------------------------------
def predictive(ctx: Context) -> Section:
    s = Section("predictive-check", "Posterior predictive check", "filled")
    need = ("posterior", "posterior_predictive", "observed_data")
    if ctx.counts is None or not all(idata_mod.has_group(ctx.idata, g) for g in need):
        return _missing(s, "a posterior predictive check (this fit has no replicated "
                            "data: fit with bcm.fit, which draws them by default).")
    prob = ctx.post["pattern_prob"] if "pattern_prob" in ctx.post else ctx.post.get("theta")
    dims = () if prob is None else tuple(d for d in prob.dims if d not in SAMPLE_DIMS)
    # the check compares each observed table (one dim of cells) with its own probabilities
    if ctx.counts.ndim != 2 or set(dims) != set(ctx.counts.dims):
        return _missing(s, "a posterior predictive check: bcm.posterior_predictive_check "
                        "takes one table of cells per unit with its own cell probabilities; "
                        f"this fit has tables {tuple(ctx.counts.dims)} and probabilities "
                        f"{dims}.")
    from bayescm.inference.ppc import posterior_predictive_check

    check = posterior_predictive_check(ctx.idata)
    s.blocks.append(Text("Bayesian p-value of the chi-square discrepancy (Gelman, Meng & Stern "
                         "1996): p = P(D(y_rep, E) >= D(y, E) | y). Near 0 the model cannot "
                         "reproduce the observed table; near 1 it fits suspiciously well."))
    a = ctx.attrs
    if "degrees_of_freedom" in a and int(a["free_parameters"]) >= int(a["degrees_of_freedom"]):
        s.blocks.append(Text("The model has as many parameters as the data have degrees of "
                             "freedom (saturated): it can reproduce any table, so this check "
                             "has no power here."))
    s.blocks.append(Table(format_frame(check.to_frame()), "Posterior predictive check"))
    replicated = idata_mod.group(ctx.idata, "posterior_predictive")["counts"]
    s.blocks.append(Figure(predictive_png(ctx.counts, replicated), "Observed counts (dots) "
                           "and the central 95% of replicated counts (bars)"))
    return s


# -- 8. software --------------------------------------------------------------------------
def _installed(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def software(ctx: Context) -> Section:
    s = Section("software", "Software and reproducibility", "filled")
    a = ctx.attrs
    if "inference_library_version" not in a:
        s.status = "missing"
        s.blocks.append(Missing("the software and versions used (not recorded in this fit)."))
    engine = str(a.get("engine", ""))
    rows = []
    for pkg in ("bayescm", "pymc", "pytensor", "arviz", "numpy"):
        key = "inference_library_version" if pkg == "bayescm" else f"{pkg}_version"
        if key in a:
            rows.append((pkg, a[key], "recorded in the fit"))
        else:
            rows.append((pkg, _installed(pkg), "installed when the report was made"))
    if engine in ("bayescm-kernel", "nutpie"):  # nutpie ran the NUTS sampler
        rows.append(("nutpie", _installed("nutpie"), "installed when the report was made"))
    if engine == "jags":
        rows.append(("JAGS", a.get("jags_version", "not recorded"), "engine of this fit"))
    rows.append(("Python", platform.python_version(), "when the report was made"))
    rows = [(n, str(v) if v is not None else "not installed", w) for n, v, w in rows]
    s.blocks.append(Table(pd.DataFrame(rows, columns=["software", "version", "source"])))
    seed = a.get("random_seed")
    s.blocks.append(Text(f"Sampler '{a.get('sampler', '?')}', engine '{engine or '?'}', fitted "
                         f"{a.get('created_at', '(time not recorded)')}."))
    if seed is None or str(seed) == "None":
        s.blocks.append(Missing("the random seed: none was set (bcm.fit(..., random_seed=)), "
                                "so the draws cannot be reproduced exactly."))
    else:
        s.blocks.append(Text(f"Random seed: {seed}."))
    return s


# -- what only the authors can report (latent-class analyses) ----------------------------
STARD_BLCM_ITEMS = (
    "the study design and setting, and how the participants of each population were "
    "selected (eligibility, sampling, dates);",
    "the target condition: what the latent class stands for, and why the populations may "
    "differ in its prevalence;",
    "each classifier's (index test's) procedure and threshold, and whether it was run "
    "blind to the others' results;",
    "the biological or technical rationale for assuming conditional independence or "
    "dependence between the classifiers;",
    "the sources of the prior information and their relevance to these populations;",
    "the flow of cases, and the reasons for missing or indeterminate results;",
    "the intended use of the classifiers, and the limitations and generalisability of the "
    "estimates.",
)


def authors(ctx: Context) -> Section:
    s = Section("authors-items", "STARD-BLCM items the authors must report", "missing")
    s.blocks.append(Text("These items of the STARD-BLCM checklist cannot be filled from a "
                         "fit; each must come from the authors."))
    s.blocks += [Missing(x) for x in STARD_BLCM_ITEMS]
    return s
