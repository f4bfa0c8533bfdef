r"""Hui–Walter / Branscum latent-class model for T >= 1 classifiers, P >= 1 populations.

For population :math:`p` with prevalence :math:`\pi_p` and an outcome pattern
:math:`r \in \{0, 1\}^T` of the T classifiers,

.. math::

    \Pr(r) = \pi_p\,\Pr(r \mid D^+) + (1 - \pi_p)\,\Pr(r \mid D^-),

    \Pr(r \mid D^+) = \prod_t q^+_t + \sum_{(i,j)} s_{ij}(r)\,c^+_{ij}
                      \prod_{t \ne i,j} q^+_t,\qquad
    q^+_t = Se_t^{r_t}(1 - Se_t)^{1 - r_t},

with :math:`s_{ij}(r) = +1` when classifiers i and j agree in r and -1 otherwise,
and likewise for :math:`D^-` with :math:`q^-_t = (1-Sp_t)^{r_t} Sp_t^{1-r_t}` and
covariances :math:`c^-_{ij}`.  Without dependence this is Hui & Walter (1980) and
Branscum, Gardner & Johnson (2005); the covariance terms are Dendukuri & Joseph's
(2001) for two classifiers, extended to T classifiers as a second-order Bahadur
expansion so that every pair's marginal table is exactly Dendukuri & Joseph's.
Counts of each population are Multinomial(n_p, Pr(r)).

Cases with missing results (``"+?"``) or a known class (``"+-|D+"``) fall into
*cells* grouped in *blocks* (:mod:`bayescm.data.agreement_cells`): a cell's probability
sums the missing results out and keeps only the verified class,

.. math::

    \Pr_p(c) = \pi_p\,(\mathrm{pos}\,\Pr(\cdot \mid D^+))_c
             + (1 - \pi_p)\,(\mathrm{neg}\,\Pr(\cdot \mid D^-))_c,

and the counts of each (population, block) are Multinomial(n_pb, Pr_p(c), c in b).

The math, constraints, cell order and references are in
``models/hui_walter/README.md``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import xarray as xr

from bayescm.data.agreement import AgreementTable
from bayescm.data.agreement_cells import CellDesign
from bayescm.family import Family, JagsTwin, Kernel, ModelSpec, attach, register_family
from bayescm.models._loglik import case_log_likelihood
from bayescm.models._spec import beta_prior_draws, counts_data, data_value, theta_from_rates
from bayescm.models.hui_walter.gibbs import applies as gibbs_applies
from bayescm.models.hui_walter.gibbs import gibbs_draws
from bayescm.models.hui_walter.identifiability import (  # noqa: F401  (names tests import here)
    IdentifiabilityError,
    IdentifiabilityWarning,
)
from bayescm.models.hui_walter.inputs import kernel_of, prepare
from bayescm.models.hui_walter.probabilities import (
    block_draws,
    block_totals,
    cell_probabilities,
    class_probabilities,
    pattern_probabilities,
)
from bayescm.models.hui_walter.truncated import truncated_pair
from bayescm.models.hui_walter.twin import jags_data, jags_inits, jags_monitors, jags_posterior
from bayescm.models.kernel_form import KernelForm
from bayescm.priors import Beta
from bayescm.stats import SAMPLE_DIMS, multinomial

if TYPE_CHECKING:
    import pymc as pm
    import pytensor.tensor as pt

PARAMETERS = ("sensitivity", "specificity", "prevalence")


def hui_walter(
    table: AgreementTable,
    *,
    priors: Mapping[str, Any] | None = None,
    conditional_dependence: bool | Sequence[Sequence[str]] = False,
    identifiability: str = "warn",
) -> pm.Model:
    r"""Build the Hui–Walter latent-class model of T classifiers on P unlabelled populations.

    Cases with missing results (cells such as ``"+?"``) sum them out, and verified
    cases (``"+-|D+"``) contribute the joint probability of their class and results
    (valid when missingness and verification depend only on observed results; see
    :mod:`bayescm.data.agreement_cells`).  One classifier (T = 1) is allowed: on unlabelled
    data its posterior is the prior updated by the share of positive calls, and the
    identifiability warning says so.

    Parameters
    ----------
    table
        An :class:`bayescm.AgreementTable` (complete, or with missing results and
        verified cases).
    priors
        Overrides by name: ``"sensitivity"``, ``"specificity"`` (per classifier) and
        ``"prevalence"`` (per population), each a :class:`~bayescm.priors.Beta` (or
        ``"beta:a,b"``, ``scipy.stats.beta(a, b)``) for all, or a mapping
        ``name -> prior``.  Defaults: Beta(1, 1).
    conditional_dependence
        ``True`` for every pair of classifiers, or a list of pairs of classifier
        names, to add covariances between their errors within the positives and
        within the negatives (Dendukuri & Joseph 2001).  Needs T >= 2.
    identifiability
        ``"warn"`` (default), ``"raise"`` (raise :class:`IdentifiabilityError` when
        neither data nor priors identify the model) or ``"ignore"``.

    Returns
    -------
    pymc.Model
        Free ``sensitivity``, ``specificity`` (dim ``classifier``), ``prevalence``
        (dim ``population``); with dependence ``cov_se``, ``cov_sp`` (dim ``pair``);
        deterministic ``pattern_prob`` (dims ``population, pattern``: the probability
        of every cell); observed ``counts`` (``pm.Multinomial`` for a complete table;
        otherwise a ``pm.CustomDist`` whose log density is one multinomial per
        population and block).  Label switching is ruled out by construction:
        ``specificity`` lies in ``(1 - sensitivity, 1)``, and the prior on each
        classifier's (Se, Sp) is the product of its Beta priors truncated to
        Se + Sp > 1.

    Examples
    --------
    >>> import bayescm as bcm
    >>> tab = bcm.AgreementTable.from_counts({"site1": {"++": 89, "+-": 43, "-+": 55, "--": 413},
    ...                                       "site2": {"++": 260, "+-": 76, "-+": 52, "--": 212}})
    >>> m = bcm.models.hui_walter(tab, priors={"sensitivity": {"A": bcm.priors.Beta(20, 4)}})
    >>> sorted(v.name for v in m.free_RVs)
    ['prevalence', 'sensitivity', 'specificity']
    >>> part = bcm.AgreementTable.from_counts({"++": 40, "+-": 3, "-+": 7, "--": 100,
    ...                                        "+?": 6, "++|D+": 9, "--|D-": 14})
    >>> bcm.models.hui_walter(part)["counts"].owner.op.__class__.__name__[:10]
    'CustomDist'
    """
    spec = prepare(table, priors, conditional_dependence, identifiability)  # before PyMC
    import pymc as pm  # PyMC is imported when a model is built, not with bayescm
    import pytensor.tensor as pt

    classifiers, populations = table.classifiers, table.populations
    t = len(classifiers)
    design = table.design()
    pairs, resolved = list(spec.extra["pairs"]), spec.priors

    coords = {"classifier": list(classifiers), "population": list(populations),
              "pattern": list(table.patterns)}
    if pairs:
        coords["pair"] = [f"{classifiers[i]}~{classifiers[j]}" for i, j in pairs]

    def data(name: str, unit: str) -> pt.TensorVariable:
        per = resolved[name.split("_")[0]]
        values = [b.alpha if name.endswith("alpha") else b.beta for b in per]
        return pm.Data(name, np.array(values, dtype=float), dims=unit)

    with pm.Model(coords=coords) as model:
        counts = counts_data(table.counts, ("population", "pattern"))
        se_a, se_b = data("sensitivity_alpha", "classifier"), data("sensitivity_beta",
                                                                   "classifier")
        sp_a, sp_b = data("specificity_alpha", "classifier"), data("specificity_beta",
                                                                   "classifier")
        pv_a, pv_b = data("prevalence_alpha", "population"), data("prevalence_beta",
                                                                  "population")
        se = pm.Beta("sensitivity", alpha=se_a, beta=se_b, dims="classifier")
        # Sp uniform on (1 - Se, 1) has density 1/Se; adding log Se and Sp's Beta kernel
        # gives the joint prior  Beta(Se) Beta(Sp) 1{Se + Sp > 1}  (up to a constant).
        sp = pm.Uniform("specificity", lower=1 - se, upper=1, dims="classifier")
        pm.Potential("specificity_prior",
                     pt.sum((sp_a - 1) * pt.log(sp) + (sp_b - 1) * pt.log1p(-sp) + pt.log(se)))
        prev = pm.Beta("prevalence", alpha=pv_a, beta=pv_b, dims="population")
        u_se = u_sp = None
        if pairs:
            u_se = pm.Uniform("cov_se_position", 0, 1, dims="pair")
            u_sp = pm.Uniform("cov_sp_position", 0, 1, dims="pair")
        p_pos, p_neg, cov_se, cov_sp = class_probabilities(se, sp, u_se, u_sp, t, pairs, xp=pt)
        if pairs:
            pm.Deterministic("cov_se", cov_se, dims="pair")
            pm.Deterministic("cov_sp", cov_sp, dims="pair")
        prob = pm.Deterministic("pattern_prob", cell_probabilities(p_pos, p_neg, prev, design),
                                dims=("population", "pattern"))
        if design.complete:
            pm.Multinomial("counts", n=counts.sum(axis=-1), p=prob, observed=counts,
                           dims=("population", "pattern"))
        else:
            pm.CustomDist("counts", prob, logp=_block_logp(design),
                          random=_block_random(table.counts, design),
                          signature="(p,c)->(p,c)", observed=counts,
                          dims=("population", "pattern"))
    return attach(model, spec)


def _block_logp(design: CellDesign):
    r"""Log density of the observed counts: one multinomial per (population, block),

    .. math::

        \sum_{p,b} \Bigl[\log n_{pb}! + \sum_{c \in b} \bigl(y_{pc} \log \Pr_p(c)
        - \log y_{pc}!\bigr)\Bigr],

    coefficients included, so that one block of complete patterns gives exactly
    ``pm.Multinomial``'s value; a block with no cases contributes 0.
    """
    import pytensor.tensor as pt
    from pymc.distributions.dist_math import factln, logpow

    onehot = np.eye(len(design.blocks))[design.block]  # (C, B)

    def logp(value: pt.TensorVariable, prob: pt.TensorVariable) -> pt.TensorVariable:
        return pt.sum(factln(pt.dot(value, onehot))) + pt.sum(logpow(prob, value)
                                                                 - factln(value))

    return logp


def _block_random(counts: np.ndarray, design: CellDesign):
    """Replicated tables with the observed (population, block) totals (for
    ``pm.sample_posterior_predictive``; bayescm's own draws use :func:`block_draws`)."""
    totals = block_totals(counts, design)

    def random(prob: np.ndarray, rng: np.random.Generator | None = None,
               size: tuple[int, ...] | None = None) -> np.ndarray:
        prob = np.asarray(prob)
        if size is not None:
            prob = np.broadcast_to(prob, (*tuple(size), *prob.shape[-2:]))
        return block_draws(np.random.default_rng(rng), prob, totals, design)

    return random


def _scaled(totals: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Block totals ``(P, B)`` rescaled to ``n`` cases per population (largest
    remainders; unchanged when ``n`` is the observed number)."""
    have = totals.sum(1)
    if np.array_equal(have, n):
        return totals
    exact = totals * (n / np.maximum(have, 1))[:, None]
    out = np.floor(exact).astype(np.int64)
    for p in range(len(out)):
        short = int(n[p] - out[p].sum())
        out[p, np.argsort(out[p] - exact[p])[:short]] += 1
    return out


# -- the family: what fit, the draws and the JAGS runner need to know ------------------
def _kernel(model: pm.Model, spec: ModelSpec) -> Kernel:
    # the model's current data (pm.set_data is honoured), laid out as the kernel reads it
    return kernel_of(spec, lambda name: data_value(model, name))


def _pattern_prob(draws: xr.Dataset, spec: ModelSpec) -> xr.DataArray:
    """``pattern_prob`` of the draws, or computed from the parameters (JAGS draws have
    the covariances, not their positions within the bounds: those are recovered)."""
    if "pattern_prob" in draws:
        return draws["pattern_prob"]
    tab, pairs = spec.data, list(spec.extra["pairs"])
    se, sp = (draws[v].transpose(*SAMPLE_DIMS, "classifier").values
              for v in ("sensitivity", "specificity"))
    prev = draws["prevalence"].transpose(*SAMPLE_DIMS, "population").values
    u: list[Any] = [None, None]
    if pairs:
        k = np.zeros((*se.shape[:-1], len(pairs)))
        _, lo_se, lo_sp = pattern_probabilities(se, sp, prev, k, k, se.shape[-1], pairs)
        _, hi_se, hi_sp = pattern_probabilities(se, sp, prev, k + 1, k + 1, se.shape[-1], pairs)
        u = [(draws[name].transpose(*SAMPLE_DIMS, "pair").values - lo) / (hi - lo)
             for name, lo, hi in (("cov_se", lo_se, hi_se), ("cov_sp", lo_sp, hi_sp))]
    p_pos, p_neg, _, _ = class_probabilities(se, sp, u[0], u[1], se.shape[-1], pairs)
    prob = cell_probabilities(p_pos, p_neg, prev, tab.design())
    return xr.DataArray(prob, dims=(*SAMPLE_DIMS, "population", "pattern"),
                        coords={"population": list(tab.populations),
                                "pattern": list(tab.patterns)})


def _describe_cells(tab: AgreementTable) -> str:
    design = tab.design()
    kinds = [k for k, present in (
        ("cases with missing results, whose probability sums the missing results out",
         any("0" in m for _, m in design.blocks)),
        ("verified cases, which contribute the joint probability of their known class and "
         "their results", any(v for v, _ in design.blocks))) if present]
    verified = any(v for v, _ in design.blocks)
    return (" The data include " + " and ".join(kinds) + "; the cells of each population "
            "observed the same way (a block) are one multinomial. This is the likelihood when "
            "results are missing at random and verification depends only on the observed "
            "results (Little & Rubin 2002); it does not cover results missing because of the "
            "unobserved class." + (
                " Verification that depends only on the results (e.g. every test-positive "
                "and a sample of test-negatives) is then corrected for: the joint model has "
                "no partial verification bias (Begg & Greenes 1983)." if verified else ""))


class HuiWalter(Family):
    """The Hui–Walter latent-class family (no closed form; a compiled kernel; a JAGS twin)."""

    name = "hui_walter"
    default_priors: ClassVar[dict[str, Any]] = {
        "sensitivity": Beta(1, 1), "specificity": Beta(1, 1), "prevalence": Beta(1, 1)}
    jags = JagsTwin("hui_walter/hui_walter.jags", jags_data, jags_inits, jags_monitors,
                    jags_posterior)
    log_likelihood_by_default = True

    def parameters(self, spec: ModelSpec) -> list[str]:
        return ["sensitivity", "specificity", "prevalence"] + (
            ["cov_se", "cov_sp"] if spec.extra["pairs"] else [])

    def kernel(self, model: pm.Model, spec: ModelSpec, conjugate: Any = None) -> Kernel:
        return _kernel(model, spec)

    def kernel_form(self, data: AgreementTable, priors: Mapping[str, Any] | None = None,
                    options: Mapping[str, Any] | None = None) -> KernelForm:
        """The builder's checks and the kernel's inputs from ``data`` and ``priors``:
        what ``bcm.fit(hui_walter(data, priors=priors, **options))`` samples, no PyMC."""
        opts = {"conditional_dependence": False, "identifiability": "warn"}
        unknown = sorted(set(options or {}) - set(opts))
        if unknown:  # as the builder would say
            raise TypeError(f"hui_walter() got unexpected keyword argument(s) {unknown}.")
        opts.update(options or {})
        spec = prepare(data, priors, opts["conditional_dependence"], opts["identifiability"])
        tab, pairs = spec.data, spec.extra["pairs"]
        coords = {"classifier": list(tab.classifiers), "population": list(tab.populations),
                  "pattern": list(tab.patterns)}
        dims = {"sensitivity": ("classifier",), "specificity": ("classifier",),
                "prevalence": ("population",), "pattern_prob": ("population", "pattern")}
        if pairs:
            coords["pair"] = [f"{tab.classifiers[i]}~{tab.classifiers[j]}" for i, j in pairs]
            dims.update(dict.fromkeys(("cov_se_position", "cov_sp_position", "cov_se",
                                       "cov_sp"), ("pair",)))
        observed = xr.DataArray(np.asarray(tab.counts), dims=("population", "pattern"),
                                coords={k: coords[k] for k in ("population", "pattern")})
        gibbs = functools.partial(gibbs_draws, spec) if gibbs_applies(spec) else None
        return KernelForm(spec, functools.partial(kernel_of, spec), dims, coords, observed,
                          gibbs)

    def complete(self, ds: xr.Dataset, spec: ModelSpec, conjugate: Any = None) -> xr.Dataset:
        # the confusion probabilities of every classifier in every population
        ds["theta"] = theta_from_rates(ds["prevalence"], ds["sensitivity"], ds["specificity"],
                                       ("population", "classifier"))
        return ds

    def prior_draws(self, model: pm.Model, spec: ModelSpec, size: tuple[int, ...],
                    rng: np.random.Generator) -> dict[str, np.ndarray] | None:
        values = beta_prior_draws(model, ["sensitivity", "specificity", "prevalence"], size,
                                  rng)
        if values is None:
            return None
        # the prior is the product of the Betas truncated to Se + Sp > 1: an exact draw
        # (no rejection, so no loop that low priors could keep from ending)
        se, sp = values["sensitivity"], values["specificity"]
        ab = [data_value(model, f"{v}_{k}").astype(float).ravel()
              for v in ("sensitivity", "specificity") for k in ("alpha", "beta")]
        n = int(np.prod(size))
        for t, name in enumerate(spec.data.classifiers):
            pair = truncated_pair(*(x[t] for x in ab), n, rng, classifier=name)
            se[..., t], sp[..., t] = (x.reshape(size) for x in pair)
        pairs = spec.extra["pairs"]
        u = [rng.uniform(size=(*size, len(pairs))) for _ in range(2)] if pairs else [None, None]
        p_pos, p_neg, cov_se, cov_sp = class_probabilities(se, sp, u[0], u[1], se.shape[-1],
                                                           pairs)
        values["pattern_prob"] = cell_probabilities(p_pos, p_neg, values["prevalence"],
                                                    spec.data.design())
        if pairs:
            values.update(cov_se_position=u[0], cov_sp_position=u[1], cov_se=cov_se,
                          cov_sp=cov_sp)
        return values

    def predictive(self, draws: xr.Dataset, n: xr.DataArray, rng: np.random.Generator,
                   spec: ModelSpec | None):
        """Replicated agreement tables of ``n`` cases per population.

        Complete tables: Multinomial(n_p, pattern probabilities).  Tables with
        missing results or verified cases: Multinomial(n_pb, the block's cell
        probabilities renormalised) for every (population, block), so how many cases
        miss which results and how many are verified is **held at what was
        observed** (the model says nothing about missingness or verification, which
        it takes to be at random given the observed results).  With another ``n``
        (``fit(predictive_n=...)``) the blocks keep the observed shares of each
        population's cases (largest remainders).
        """
        prob = draws["pattern_prob"].transpose(*SAMPLE_DIMS, "population", "pattern")
        if spec is None or spec.data.complete:
            counts = multinomial(rng, n.values.astype(np.int64),
                                 prob.values / prob.values.sum(-1, keepdims=True))
        else:
            tab = spec.data
            design = tab.design()
            totals = _scaled(block_totals(tab.counts, design),
                             n.sel(population=list(tab.populations)).values.astype(np.int64))
            counts = block_draws(rng, prob.values, totals, design)
        da = xr.DataArray(counts, dims=prob.dims, coords=prob.coords, name="counts")
        return da, "agreement tables", False

    def log_likelihood(self, draws: xr.Dataset, observed: xr.DataArray,
                       spec: ModelSpec) -> xr.DataArray | None:
        # each case: the log of its population's probability of its pattern
        return case_log_likelihood(_pattern_prob(draws, spec), observed,
                                   dims=("population", "pattern"))

    def attrs(self, spec: ModelSpec) -> dict[str, Any]:
        ident = spec.extra["identifiability"]
        return {"identifiability": ident.message, "identifiability_status": ident.status,
                "degrees_of_freedom": ident.degrees_of_freedom,
                "free_parameters": ident.parameters}

    def describe(self, spec: ModelSpec) -> str:
        tab, pairs = spec.data, spec.options.get("conditional_dependence") or []
        t, p = len(tab.classifiers), len(tab.populations)
        dependence = (
            "The classifiers are conditionally independent given the true class."
            if not pairs else
            "Conditional dependence between " + ", ".join(f"{a} and {b}" for a, b in pairs)
            + ": a covariance among the positives and one among the negatives per pair "
            "(Dendukuri & Joseph 2001; a second-order Bahadur expansion for more than two "
            "classifiers), each uniform within the bounds that keep every pattern "
            "probability valid; the other classifiers are conditionally independent.")
        return (
            f"Hui–Walter latent-class model (Hui & Walter 1980; Branscum, Gardner & Johnson "
            f"2005) of {t} classifier(s) ({', '.join(tab.classifiers)}) on {p} population(s) "
            f"({', '.join(tab.populations)}) without a reference standard. Population p has "
            "prevalence π_p; classifier t has sensitivity Se_t and specificity Sp_t, shared by "
            "all populations. A pattern r of results has probability "
            "Pr_p(r) = π_p ∏_t Se_t^r_t (1 − Se_t)^(1 − r_t) + (1 − π_p) ∏_t (1 − Sp_t)^r_t "
            "Sp_t^(1 − r_t), and the pattern counts of each population are Multinomial(n_p, "
            f"Pr_p). {dependence} Every classifier is better than chance, Se_t + Sp_t > 1 "
            "(the prior of each (Se_t, Sp_t) is the product of its Betas truncated there), "
            "which rules out label switching." + ("" if tab.complete else _describe_cells(tab)))

    def prior_units(self, spec: ModelSpec) -> Mapping[str, Sequence[str]]:
        return {"prevalence": spec.data.populations}

    def encode_data(self, data: AgreementTable) -> dict[str, list]:
        return {"counts": data.counts.tolist(), "classifiers": list(data.classifiers),
                "populations": list(data.populations), "patterns": list(data.patterns)}

    def decode_data(self, payload: Mapping[str, list]) -> AgreementTable:
        return AgreementTable(payload["counts"], classifiers=payload["classifiers"],
                              populations=payload["populations"],
                              patterns=payload.get("patterns"))


register_family(HuiWalter(hui_walter))
