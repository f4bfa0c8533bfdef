r"""Hui–Walter / Branscum latent-class model for T >= 2 classifiers, P >= 1 populations.

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

The math, constraints, cell order and references are in
``models/hui_walter/README.md``.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import xarray as xr

from bayescm.agreement import AgreementTable, pattern_matrix
from bayescm.models._loglik import case_log_likelihood
from bayescm.models._spec import beta_prior_draws, counts_data, data_value, theta_from_rates
from bayescm.models._truncated import check_truncation, truncated_pair
from bayescm.models.family import Family, JagsTwin, Kernel, ModelSpec, attach, register_family
from bayescm.priors import Beta, PriorError
from bayescm.priors import resolve as resolve_priors
from bayescm.stats import SAMPLE_DIMS, multinomial

if TYPE_CHECKING:
    import pymc as pm
    import pytensor.tensor as pt

PARAMETERS = ("sensitivity", "specificity", "prevalence")
INFORMATIVE_SD = 0.1


class IdentifiabilityWarning(UserWarning):
    """The latent-class model is identified only through its priors, or not at all."""


class IdentifiabilityError(ValueError):
    """Raised with ``identifiability="raise"`` for a model its data and priors do not identify."""


@dataclass(frozen=True)
class Identifiability:
    """Counting argument for a latent-class model (before sampling).

    Attributes
    ----------
    degrees_of_freedom
        Independent cell proportions of the data, ``P * (2**T - 1)``.
    parameters
        Free parameters: ``2T + P`` plus two covariances per dependent pair.
    informative
        Parameters whose prior sd is below 0.1 (roughly 20 or more pseudo-counts).
    status
        ``"data"`` (identified by the data), ``"priors"`` (only through informative
        priors) or ``"none"`` (neither).
    """

    degrees_of_freedom: int
    parameters: int
    informative: int
    status: str
    message: str


def check_identifiability(
    n_classifiers: int, n_populations: int, n_pairs: int, priors: Mapping[str, Sequence[Beta]]
) -> Identifiability:
    """Compare the data's degrees of freedom with the free parameters.

    Examples
    --------
    >>> from bayescm.priors import Beta
    >>> flat = {"sensitivity": [Beta(1, 1)] * 2, "specificity": [Beta(1, 1)] * 2,
    ...         "prevalence": [Beta(1, 1)]}
    >>> check_identifiability(2, 1, 0, flat).status
    'none'
    >>> check_identifiability(2, 2, 0, {**flat, "prevalence": [Beta(1, 1)] * 2}).status
    'data'
    """
    df = n_populations * (2**n_classifiers - 1)
    n_par = 2 * n_classifiers + n_populations + 2 * n_pairs
    informative = sum(
        1 for per in priors.values() for b in per
        if b.proper and np.sqrt(b.alpha * b.beta / ((b.alpha + b.beta) ** 2
                                                    * (b.alpha + b.beta + 1))) < INFORMATIVE_SD
    )
    deficit = n_par - df
    shape = (f"{n_classifiers} classifiers and {n_populations} population(s) give "
             f"{df} degrees of freedom for {n_par} parameters")
    remedy = ("Give informative priors (e.g. Beta(20, 4) from an earlier labelled evaluation) "
              f"for at least {max(deficit, 0)} parameters, add a population with a different "
              "prevalence, or add a classifier.")
    if deficit <= 0:
        return Identifiability(df, n_par, informative, "data", f"{shape}: identified by the "
                               "data (populations must differ in prevalence).")
    if informative >= deficit:
        return Identifiability(
            df, n_par, informative, "priors",
            f"{shape}: identified only through the {informative} informative prior(s). The "
            "posterior is as good as those priors; check how it moves when they change. "
            + remedy)
    return Identifiability(
        df, n_par, informative, "none",
        f"{shape} and only {informative} informative prior(s): the model is not identified "
        "and the posterior is a ridge shaped by the priors, not by the data. " + remedy)


def _pairs(conditional_dependence: Any, classifiers: Sequence[str]) -> list[tuple[int, int]]:
    if conditional_dependence is False or conditional_dependence is None:
        return []
    if conditional_dependence is True:
        return list(itertools.combinations(range(len(classifiers)), 2))
    pairs = []
    for pair in conditional_dependence:
        if len(pair) != 2 or pair[0] == pair[1]:
            raise ValueError(f"A dependent pair names two different classifiers, got {pair!r}.")
        try:
            i, j = sorted(classifiers.index(str(c)) for c in pair)
        except ValueError:
            raise ValueError(
                f"Pair {tuple(pair)} names a classifier not in {list(classifiers)}."
            ) from None
        if (i, j) not in pairs:
            pairs.append((i, j))
    return pairs


def pattern_probabilities(
    se: Any, sp: Any, prev: Any, cov_se_u: Any, cov_sp_u: Any,
    n_classifiers: int, pairs: Sequence[tuple[int, int]], xp: Any = np,
) -> tuple[Any, Any, Any]:
    """Pattern probabilities, written once for NumPy arrays and PyTensor tensors.

    Parameters
    ----------
    se, sp
        Sensitivities and specificities, shape ``(..., T)``.
    prev
        Prevalences, shape ``(..., P)``.
    cov_se_u, cov_sp_u
        Covariance positions in (0, 1) within their bounds, shape ``(..., K)``
        (ignored when there are no pairs).
    xp
        ``numpy`` or ``pytensor.tensor``.

    Returns
    -------
    prob, cov_se, cov_sp
        ``prob`` has shape ``(..., P, 2**T)``; the covariances ``(..., K)``.
    """
    r = pattern_matrix(n_classifiers)  # (R, T)
    # tensors first, so that NumPy never tries to broadcast over a PyTensor variable
    q_pos = se[..., None, :] * r + (1 - se[..., None, :]) * (1 - r)  # (..., R, T)
    q_neg = (1 - sp[..., None, :]) * r + sp[..., None, :] * (1 - r)
    p_pos = xp.prod(q_pos, axis=-1)
    p_neg = xp.prod(q_neg, axis=-1)
    cov_se = cov_sp = None
    if pairs:
        k = len(pairs)
        ii = np.array([a for a, _ in pairs])
        jj = np.array([b for _, b in pairs])
        sign = np.where(r[:, ii] == r[:, jj], 1.0, -1.0)  # (R, K)
        rest = np.ones((len(r), k, n_classifiers))
        rest[:, np.arange(k), ii] = 0
        rest[:, np.arange(k), jj] = 0
        rest_mask = rest.astype(bool)

        def dependent(a, q, u):
            # a: P(test + | class) per classifier; bounds keep every pair's 2x2 table valid,
            # and 1/K of them keeps every pattern valid with K dependent pairs.
            ai, aj = a[..., ii], a[..., jj]
            lower = xp.maximum(-(1 - ai) * (1 - aj), -ai * aj) / k
            upper = xp.minimum(ai * (1 - aj), (1 - ai) * aj) / k
            cov = lower + u * (upper - lower)
            others = xp.prod(xp.where(rest_mask, q[..., :, None, :], 1.0), axis=-1)  # (.., R, K)
            return xp.sum(cov[..., None, :] * sign * others, axis=-1), cov

        extra_pos, cov_se = dependent(se, q_pos, cov_se_u)
        extra_neg, cov_sp = dependent(1 - sp, q_neg, cov_sp_u)
        p_pos = p_pos + extra_pos
        p_neg = p_neg + extra_neg
    prob = prev[..., :, None] * p_pos[..., None, :] + (1 - prev[..., :, None]) * p_neg[..., None, :]
    return prob, cov_se, cov_sp


def hui_walter(
    table: AgreementTable,
    *,
    priors: Mapping[str, Any] | None = None,
    conditional_dependence: bool | Sequence[Sequence[str]] = False,
    identifiability: str = "warn",
) -> pm.Model:
    r"""Build the Hui–Walter latent-class model of T classifiers on P unlabelled populations.

    Parameters
    ----------
    table
        An :class:`bayescm.AgreementTable`.
    priors
        Overrides by name: ``"sensitivity"``, ``"specificity"`` (per classifier) and
        ``"prevalence"`` (per population), each a :class:`~bayescm.priors.Beta` (or
        ``"beta:a,b"``, ``scipy.stats.beta(a, b)``) for all, or a mapping
        ``name -> prior``.  Defaults: Beta(1, 1).
    conditional_dependence
        ``True`` for every pair of classifiers, or a list of pairs of classifier
        names, to add covariances between their errors within the positives and
        within the negatives (Dendukuri & Joseph 2001).
    identifiability
        ``"warn"`` (default), ``"raise"`` (raise :class:`IdentifiabilityError` when
        neither data nor priors identify the model) or ``"ignore"``.

    Returns
    -------
    pymc.Model
        Free ``sensitivity``, ``specificity`` (dim ``classifier``), ``prevalence``
        (dim ``population``); with dependence ``cov_se``, ``cov_sp`` (dim ``pair``);
        deterministic ``pattern_prob`` (dims ``population, pattern``); observed
        ``counts``.  Label switching is ruled out by construction:
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
    """
    import pymc as pm  # PyMC is imported when a model is built, not with bayescm
    import pytensor.tensor as pt

    if not isinstance(table, AgreementTable):
        raise TypeError(f"hui_walter needs a bayescm.AgreementTable, got {type(table).__name__}.")
    if identifiability not in ("warn", "raise", "ignore"):
        raise ValueError(f"identifiability must be 'warn', 'raise' or 'ignore', "
                         f"got {identifiability!r}.")
    classifiers, populations = table.classifiers, table.populations
    t, p = len(classifiers), len(populations)
    pairs = _pairs(conditional_dependence, classifiers)
    resolved = resolve_priors("hui_walter", priors, classifiers,
                              units={"prevalence": populations})
    improper = [k for k, per in resolved.items() if not all(b.proper for b in per)]
    if improper:
        raise PriorError(
            f"Improper priors for {improper}: a latent-class posterior need not be proper with "
            "them. Use Beta(a, b) with a, b > 0."
        )
    for c, se_prior, sp_prior in zip(classifiers, resolved["sensitivity"],
                                     resolved["specificity"], strict=True):
        check_truncation(se_prior, sp_prior, *se_prior.params, *sp_prior.params, c)
    ident = check_identifiability(t, p, len(pairs), resolved)
    if ident.status != "data" and identifiability != "ignore":
        if identifiability == "raise" and ident.status == "none":
            raise IdentifiabilityError(ident.message)
        warnings.warn(ident.message, IdentifiabilityWarning, stacklevel=2)

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
        prob, cov_se, cov_sp = pattern_probabilities(se, sp, prev, u_se, u_sp, t, pairs, xp=pt)
        if pairs:
            pm.Deterministic("cov_se", cov_se, dims="pair")
            pm.Deterministic("cov_sp", cov_sp, dims="pair")
        prob = pm.Deterministic("pattern_prob", prob, dims=("population", "pattern"))
        pm.Multinomial("counts", n=counts.sum(axis=-1), p=prob, observed=counts,
                       dims=("population", "pattern"))
    dependence = [[classifiers[i], classifiers[j]] for i, j in pairs]
    spec = ModelSpec("hui_walter", table, resolved,
                     options={"conditional_dependence": dependence or False,
                              "identifiability": identifiability},
                     extra={"pairs": tuple(pairs), "identifiability": ident})
    return attach(model, spec)


# -- the family: what fit, the draws and the JAGS runner need to know ------------------
def _kernel(model: pm.Model, spec: ModelSpec) -> Kernel:
    from bayescm.models import _kernel_hui_walter

    tab = spec.data
    t, p = len(tab.classifiers), len(tab.populations)
    pairs = spec.extra["pairs"]
    k, r = len(pairs), 2**t

    def value(name: str) -> np.ndarray:
        return data_value(model, name).astype(float).ravel()

    user_data = np.concatenate([
        [t, p, k, r], value("counts_data"),
        *(value(f"{v}_{ab}") for v in ("sensitivity", "specificity") for ab in ("alpha", "beta")),
        value("prevalence_alpha"), value("prevalence_beta"),
        [i for i, _ in pairs], [j for _, j in pairs],
    ])
    names = ["sensitivity", "specificity", "prevalence"]
    shapes = [(t,), (t,), (p,)]
    if pairs:
        names += ["cov_se_position", "cov_sp_position", "cov_se", "cov_sp"]
        shapes += [(k,)] * 4
    return Kernel(_kernel_hui_walter, user_data, 2 * t + p + 2 * k, [*names, "pattern_prob"],
                  [*shapes, (p, r)])


def _jags_data(model: pm.Model, spec: ModelSpec) -> dict[str, Any]:
    tab = spec.data
    t, p = len(tab.classifiers), len(tab.populations)
    patt = pattern_matrix(t)
    pairs = list(spec.extra["pairs"]) or [(0, 1)]
    rest = np.ones((len(pairs), t), dtype=int)
    for q, (i, j) in enumerate(pairs):
        rest[q, [i, j]] = 0
    sgn = np.array([[1 if patt[r, i] == patt[r, j] else -1 for i, j in pairs]
                    for r in range(len(patt))])

    def prior(name: str, part: str) -> np.ndarray:
        return data_value(model, f"{name}_{part}").astype(float)

    counts = data_value(model, "counts_data")
    return {
        "T": t, "P": p, "R": 2**t, "K": len(pairs), "dep": int(bool(spec.extra["pairs"])),
        "counts": counts, "n": counts.sum(axis=1), "patt": patt,
        "pair_i": np.array([i + 1 for i, _ in pairs]),
        "pair_j": np.array([j + 1 for _, j in pairs]),
        "rest": rest, "sgn": sgn, "ok": np.ones(t, dtype=int),
        "se_a": prior("sensitivity", "alpha"), "se_b": prior("sensitivity", "beta"),
        "sp_a": prior("specificity", "alpha"), "sp_b": prior("specificity", "beta"),
        "prev_a": prior("prevalence", "alpha"), "prev_b": prior("prevalence", "beta"),
    }


def _jags_inits(rng: np.random.Generator, spec: ModelSpec, chains: int) -> list[dict]:
    t, p = len(spec.data.classifiers), len(spec.data.populations)
    return [{"se": rng.uniform(0.7, 0.95, t), "sp": rng.uniform(0.7, 0.95, t),
             "prev": rng.uniform(0.2, 0.8, p)} for _ in range(chains)]


def _jags_monitors(spec: ModelSpec) -> list[str]:
    return ["se", "sp", "prev"] + (["cov_se", "cov_sp"] if spec.extra["pairs"] else [])


def _jags_posterior(raw: Mapping[str, np.ndarray], model: pm.Model, spec: ModelSpec
                    ) -> xr.Dataset:
    tab = spec.data
    t, p, k = len(tab.classifiers), len(tab.populations), len(spec.extra["pairs"])

    def stack(node: str, size: int) -> np.ndarray:
        # CODA names a node of length one without an index
        names = [node] if size == 1 and node in raw else [f"{node}[{i + 1}]" for i in range(size)]
        return np.stack([raw[n] for n in names], axis=-1)

    post = {
        "sensitivity": ((*SAMPLE_DIMS, "classifier"), stack("se", t)),
        "specificity": ((*SAMPLE_DIMS, "classifier"), stack("sp", t)),
        "prevalence": ((*SAMPLE_DIMS, "population"), stack("prev", p)),
    }
    coords = {"classifier": list(tab.classifiers), "population": list(tab.populations)}
    if k:
        post["cov_se"] = ((*SAMPLE_DIMS, "pair"), stack("cov_se", k))
        post["cov_sp"] = ((*SAMPLE_DIMS, "pair"), stack("cov_sp", k))
        coords["pair"] = list(model.coords["pair"])
    return xr.Dataset(post, coords=coords)


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
    prob, _, _ = pattern_probabilities(se, sp, prev, u[0], u[1], se.shape[-1], pairs)
    return xr.DataArray(prob, dims=(*SAMPLE_DIMS, "population", "pattern"),
                        coords={"population": list(tab.populations),
                                "pattern": list(tab.patterns)})


class HuiWalter(Family):
    """The Hui–Walter latent-class family (no closed form; a compiled kernel; a JAGS twin)."""

    name = "hui_walter"
    default_priors: ClassVar[dict[str, Any]] = {
        "sensitivity": Beta(1, 1), "specificity": Beta(1, 1), "prevalence": Beta(1, 1)}
    jags = JagsTwin("hui_walter.jags", _jags_data, _jags_inits, _jags_monitors,
                    _jags_posterior)
    log_likelihood_by_default = True

    def parameters(self, spec: ModelSpec) -> list[str]:
        return ["sensitivity", "specificity", "prevalence"] + (
            ["cov_se", "cov_sp"] if spec.extra["pairs"] else [])

    def kernel(self, model: pm.Model, spec: ModelSpec, conjugate: Any = None) -> Kernel:
        return _kernel(model, spec)

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
        prob, cov_se, cov_sp = pattern_probabilities(
            se, sp, values["prevalence"], u[0], u[1], se.shape[-1], pairs)
        values["pattern_prob"] = prob
        if pairs:
            values.update(cov_se_position=u[0], cov_sp_position=u[1], cov_se=cov_se,
                          cov_sp=cov_sp)
        return values

    def predictive(self, draws: xr.Dataset, n: xr.DataArray, rng: np.random.Generator,
                   spec: ModelSpec | None):
        prob = draws["pattern_prob"].transpose(*SAMPLE_DIMS, "population", "pattern")
        counts = multinomial(rng, n.values.astype(np.int64),
                             prob.values / prob.values.sum(-1, keepdims=True))
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
            "which rules out label switching.")

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
