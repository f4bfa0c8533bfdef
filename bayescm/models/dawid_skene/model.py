r"""Dawid–Skene latent-class model: R raters, K classes, the true class never (or rarely) seen.

Item :math:`i` has a class :math:`z_i \in \{1..K\}` with prevalence :math:`\pi`; rater
:math:`r` labels an item of class :math:`c` as :math:`l` with probability
:math:`\theta_{rcl}` (row :math:`c` of its confusion matrix), independently of the
other raters and of its own other ratings given the class:

.. math::

    \pi \sim \mathrm{Dirichlet}(\alpha),\qquad
    \theta_{rc\cdot} \sim \mathrm{Dirichlet}(\beta_{rc\cdot}),\qquad
    \Pr(\text{ratings of } i) = \sum_c \pi_c \prod_{r,l} \theta_{rcl}^{\,n_{irl}},

with gold items contributing :math:`\pi_{c_i} \prod_{r,l} \theta_{rc_il}^{n_{irl}}` for
their known class :math:`c_i`.  The class is summed out (no discrete sampling) over
the distinct rating patterns, each weighted by its number of items
(:mod:`~bayescm.models.dawid_skene.likelihood`).  Each rater is a classifier whose K×K
confusion probabilities are :math:`\pi_a \theta_{rap}`: every multiclass metric per
rater follows.  The math, priors, identifiability and label switching are in
``models/dawid_skene/README.md``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import xarray as xr

from bayescm.data.ratings import RatingsTable
from bayescm.family import Family, Kernel, ModelSpec, attach, register_family
from bayescm.models._dirichlet import dirichlet
from bayescm.models._spec import counts_data, data_value
from bayescm.models.dawid_skene.hierarchical import (
    PARTIAL_PRIORS,
    build_confusion,
    centred,
    default_partial_priors,
    partial_kernel,
    partial_prior_draws,
)
from bayescm.models.dawid_skene.identifiability import identify
from bayescm.models.dawid_skene.labelling import LabelSwitchingWarning, label_switching
from bayescm.models.dawid_skene.likelihood import (
    class_probabilities,
    em_start,
    item_design,
    pattern_logp,
    relabel,
    relabelling,
    replicate,
    tensor_logp,
)
from bayescm.models.dawid_skene.twin import TWIN, twin_for
from bayescm.models.hui_walter import IdentifiabilityError, IdentifiabilityWarning
from bayescm.priors import Dirichlet, PriorError
from bayescm.priors import resolve as resolve_priors
from bayescm.stats import SAMPLE_DIMS

if TYPE_CHECKING:
    import pymc as pm

__all__ = ["DawidSkene", "LabelSwitchingWarning", "dawid_skene", "default_priors_for",
           "label_switching"]

POOLING = ("none", "partial")
#: Above this many values (draws x items x raters x labels) replicated rating tables are
#: left out of a fit's predictive groups.
PREDICTIVE_MAX_VALUES = 50_000_000


def default_priors_for(k: int) -> dict[str, Dirichlet]:
    r"""The default priors at K classes.

    ``prevalence``: Dirichlet(2/K, ..., 2/K), two pseudo-cases (Beta(1, 1) at K = 2), as
    for bayescm's other K-class models.  ``confusion``: every row a Dirichlet with 2 on
    the diagonal and 1 off it: flat, plus one pseudo-case on the right label, so each
    class's recall is a priori :math:`\mathrm{Beta}(2, K - 1)` (mean :math:`2/(K+1)`,
    above chance :math:`1/K`; Beta(2, 1) at K = 2).  Raters are assumed better than
    chance, not good.  No concentration is below 1: a cell no rating falls in then
    keeps a bounded density, where a concentration :math:`\alpha < 1` would leave an
    exponential tail of scale :math:`1/\alpha` in PyMC's simplex coordinates (which
    halved NUTS's efficiency at K = 5 with :math:`\alpha = 1/4`).

    >>> default_priors_for(3)["confusion"]
    Dirichlet([[2, 1, 1], [1, 2, 1], [1, 1, 2]])
    """
    return {"prevalence": Dirichlet((2.0 / k,) * k),
            "confusion": Dirichlet.diagonal(k, correct=2.0, wrong=1.0)}


def _rows(prior: Dirichlet, k: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(prior.alpha, dtype=float), (k, k)).copy()


def dawid_skene(ratings: RatingsTable, *, priors: Mapping[str, Any] | None = None,
                pooling: str = "none", identifiability: str = "warn") -> pm.Model:
    r"""Build the Bayesian Dawid–Skene model of R raters labelling items with K classes.

    Parameters
    ----------
    ratings
        A :class:`bayescm.RatingsTable` (missing ratings, repeated ratings and gold
        items allowed).
    priors
        Overrides by name.  ``"prevalence"``: a Dirichlet of K concentrations (class
        order).  ``"confusion"``: the rows of a rater's confusion matrix, a K×K matrix
        Dirichlet (row ``a`` for actual class ``a``; nested lists in class order, a
        DataFrame, or :meth:`bcm.priors.Dirichlet.diagonal(labels, correct=...,
        wrong=...) <bayescm.priors.Dirichlet.diagonal>` matched by label) or one
        Dirichlet of K for every row; for all raters or as ``{rater: prior}``.
        Defaults: :func:`default_priors_for` (prevalence Dirichlet(2/K), rows with 2 on
        the diagonal and 1 off it).  Improper priors are refused.
    pooling
        ``"none"``: each rater's matrix on its own.  ``"partial"``: hierarchical
        Dawid–Skene (Paun et al. 2018, :mod:`~bayescm.models.dawid_skene.hierarchical`):
        row :math:`c` of rater :math:`r` is :math:`\operatorname{softmax}(u_{rc\cdot})`,
        :math:`u_{rcc} = 0`, :math:`u_{rcl} = \zeta_{cl} + \sigma_{cl}\eta_{rcl}`, so
        raters with few ratings borrow from the others.  Its priors are
        ``"prevalence"``, ``"confusion_logit_mean"`` (a Normal for every :math:`\zeta`,
        default Normal(-1, 1.14)) and ``"confusion_logit_scale"`` (a HalfNormal for
        every :math:`\sigma`, default HalfNormal(1)); no ``"confusion"``.
    identifiability
        ``"warn"`` (default), ``"raise"`` (:class:`~bayescm.models.IdentifiabilityError`
        when neither the design nor the priors identify the model) or ``"ignore"``.

    Returns
    -------
    pymc.Model
        Unsampled.  Free ``prevalence`` (dim ``class``) and ``confusion`` (dims
        ``rater, actual, predicted``); observed ``ratings`` (the distinct patterns, dims
        ``pattern, rater, rating``; a ``pm.CustomDist`` whose log density is
        :math:`\sum_p m_p \log \sum_c \pi_c \prod \theta^{n}` with gold patterns
        restricted to their class); ``pm.Data`` ``counts_data`` (every item's ratings,
        dims ``item, rater, rating``), ``pattern_counts``, ``multiplicity``,
        ``pattern_gold`` (-1: no gold), ``prevalence_alpha``, ``confusion_alpha``;
        deterministic ``theta`` (dims ``classifier, actual, predicted``: each rater as a
        classifier, :math:`\pi_a \theta_{rap}`), from which ``bcm.fit`` computes every
        multiclass metric per rater.  With ``pooling="partial"``, ``confusion`` is
        deterministic and the free ``confusion_logit_mean`` (ζ), ``confusion_logit_scale``
        (σ; dims ``actual, error``: row ``a``'s K-1 other labels in label order) and
        ``confusion_logit_z`` (η; dims ``rater, actual, error``), the deterministic
        ``confusion_population`` (dims ``actual, predicted``: the rows at the population's
        centre) and ``pm.Data`` ``confusion_logit_mu``, ``confusion_logit_sd``,
        ``confusion_scale_sd`` replace ``confusion_alpha``.  ``bcm.fit``'s compiled
        density starts the chains around Dawid & Skene's EM estimate from majority
        votes (``spec_of(model).extra["start"]``), which fixes what each class means,
        and draws that fit the labels better relabelled are reported
        (:class:`LabelSwitchingWarning`).  The model holds no initial values, so PyMC's
        model transforms (``pm.do``, ``pm.observe``, ...) apply to it.

    Examples
    --------
    >>> import bayescm as bcm
    >>> from bayescm.data.datasets_ratings import anaesthesia
    >>> m = bcm.models.dawid_skene(anaesthesia())
    >>> [v.name for v in m.free_RVs], m.named_vars_to_dims["confusion"]
    (['prevalence', 'confusion'], ('rater', 'actual', 'predicted'))
    >>> m["confusion_alpha"].get_value()[0, 0].tolist()  # rater 1, class 1's row
    [2.0, 1.0, 1.0, 1.0]
    """
    import pymc as pm  # PyMC is imported when a model is built, not with bayescm

    spec = _specify(ratings, priors, pooling, identifiability)
    rt, resolved = spec.data, spec.priors
    pat = rt.patterns()
    labels = list(rt.labels)
    partial = spec.options["pooling"] == "partial"
    k = rt.n_classes
    coords = {"class": labels, "rater": list(rt.raters), "classifier": list(rt.raters),
              "actual": labels, "predicted": labels, "rating": labels, "item": list(rt.items),
              "pattern": list(range(len(pat))), "error": list(range(1, k))}
    with pm.Model(coords=coords) as model:
        counts_data(rt.counts.astype(np.int32), ("item", "rater", "rating"))
        value = pm.Data("pattern_counts", pat.counts.astype(np.int32),
                        dims=("pattern", "rater", "rating"))
        mult = pm.Data("multiplicity", pat.multiplicity.astype(np.int32), dims="pattern")
        gold = pm.Data("pattern_gold", pat.gold.astype(np.int32), dims="pattern")
        a = pm.Data("prevalence_alpha", np.asarray(resolved["prevalence"][0].alpha, float),
                    dims="class")
        prev = pm.Dirichlet("prevalence", a=a, dims="class")
        if partial:
            mu, sd, tau = _partial_arrays(resolved, k)
            conf = build_confusion(
                k, pm.Data("confusion_logit_mu", mu, dims=("actual", "error")),
                pm.Data("confusion_logit_sd", sd, dims=("actual", "error")),
                pm.Data("confusion_scale_sd", tau, dims=("actual", "error")))
        else:
            b = pm.Data("confusion_alpha", np.stack([_rows(p, k) for p in resolved["confusion"]]),
                        dims=("rater", "actual", "predicted"))
            conf = pm.Dirichlet("confusion", a=b, dims=("rater", "actual", "predicted"))
        # each rater as a classifier: its K x K confusion probabilities (metrics' tables)
        pm.Deterministic("theta", prev[None, :, None] * conf,
                         dims=("classifier", "actual", "predicted"))
        pm.CustomDist("ratings", prev, conf, mult, gold, logp=tensor_logp,
                      random=_random(pat.counts), signature="(k),(r,k,l),(p),(p)->(p,r,l)",
                      observed=value, dims=("pattern", "rater", "rating"))
    return attach(model, spec)


def _specify(ratings: Any, priors: Mapping[str, Any] | None, pooling: str,
             identifiability: str) -> ModelSpec:
    """Validated data, resolved priors, the identifiability verdict and the start."""
    if not isinstance(ratings, RatingsTable):
        raise TypeError(f"dawid_skene needs a bayescm.RatingsTable (RatingsTable.from_long(df) "
                        f"or from_wide), got {type(ratings).__name__}.")
    if pooling not in POOLING:
        raise ValueError(f"pooling must be 'none' or 'partial', got {pooling!r}.")
    if pooling == "partial" and priors is not None and "confusion" in priors:
        raise PriorError(
            "pooling='partial' has no 'confusion' prior: every rater's rows are drawn around "
            "the population's (softmax of logits against the diagonal). Set "
            "'confusion_logit_mean' (a Normal for each off-diagonal logit, default "
            "Normal(-1, 1.14)) and 'confusion_logit_scale' (a HalfNormal for how much raters "
            "differ, default HalfNormal(1)), or use pooling='none'.")
    if identifiability not in ("warn", "raise", "ignore"):
        raise ValueError(f"identifiability must be 'warn', 'raise' or 'ignore', "
                         f"got {identifiability!r}.")
    k = ratings.n_classes
    if pooling == "partial":
        resolved = resolve_priors("dawid_skene", priors, ratings.raters,
                                  units={n: ["all"] for n in ("prevalence", *PARTIAL_PRIORS)},
                                  base=default_partial_priors(k))
    else:
        resolved = resolve_priors("dawid_skene", priors, ratings.raters,
                                  units={"prevalence": ["all"]}, base=default_priors_for(k),
                                  matrices={"confusion": list(ratings.labels)})
    improper = [name for name, per in resolved.items() if not all(p.proper for p in per)]
    if improper:
        raise PriorError(
            f"Improper priors for {improper}: a latent-class posterior need not be proper "
            "with them (a concentration of 0 lets a class or a rater's row vanish). Use "
            "concentrations > 0, e.g. the defaults "
            "(bayescm.models.dawid_skene.default_priors_for).")
    # partial pooling: judged as with the non-pooled default rows (what borrowing from
    # the other raters adds is not counted)
    rows = resolved.get("confusion", [default_priors_for(k)["confusion"]] * ratings.n_raters)
    ident = identify(ratings, rows)
    if ident.status != "data" and identifiability != "ignore":
        if identifiability == "raise" and ident.status == "none":
            raise IdentifiabilityError(ident.message)
        warnings.warn(ident.message, IdentifiabilityWarning, stacklevel=3)
    alpha = np.asarray(resolved["prevalence"][0].alpha, float)
    beta = np.stack([_rows(p, k) for p in rows])
    start = em_start(ratings.patterns(), alpha, beta)
    return ModelSpec("dawid_skene", ratings, resolved,
                     options={"pooling": pooling, "identifiability": identifiability},
                     extra={"identifiability": ident, "start": start})


def _partial_arrays(resolved: Mapping[str, Any], k: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """μ, s, τ of the partially pooled priors as ``(K, K-1)`` arrays."""
    mean, scale = resolved["confusion_logit_mean"][0], resolved["confusion_logit_scale"][0]
    shape = (k, k - 1)
    return (np.full(shape, mean.mu), np.full(shape, mean.sigma), np.full(shape, scale.sigma))


def _random(counts: np.ndarray):
    """Replicated pattern counts for ``pm.sample_*_predictive``: per pattern one item of a
    class drawn from the prevalence (gold: its class) rated as often by each rater."""
    design = counts.sum(axis=-1)  # (P, R)

    def random(prev: np.ndarray, conf: np.ndarray, mult: np.ndarray, gold: np.ndarray,
               rng: np.random.Generator | None = None, size: Any = None) -> np.ndarray:
        rng = np.random.default_rng(rng)
        prev, conf = np.asarray(prev), np.asarray(conf)
        batch = tuple(size) if size is not None else prev.shape[:-1]
        k = prev.shape[-1]
        prev = np.broadcast_to(prev, (*batch, k)).reshape(-1, k)
        conf = np.broadcast_to(conf, (*batch, *conf.shape[-3:])).reshape(-1, *conf.shape[-3:])
        out = replicate(prev, conf, design, np.asarray(gold), rng)
        return out.reshape(*batch, *out.shape[1:])

    return random


# -- the family ---------------------------------------------------------------------------
def _draws(ds: xr.Dataset) -> tuple[np.ndarray, np.ndarray]:
    """prevalence ``(S, K)`` and confusion ``(S, R, K, K)`` of labelled draws."""
    prev = ds["prevalence"].transpose(*SAMPLE_DIMS, "class").values
    conf = ds["confusion"].transpose(*SAMPLE_DIMS, "rater", "actual", "predicted").values
    return prev.reshape(-1, prev.shape[-1]), conf.reshape(-1, *conf.shape[-3:])


class DawidSkene(Family):
    """The Dawid–Skene family (no closed form; a compiled kernel; a JAGS twin)."""

    name = "dawid_skene"
    #: Shown for K = 2 (:func:`default_priors_for` gives them for any K).
    default_priors: ClassVar[dict[str, Any]] = default_priors_for(2)
    jags = TWIN
    log_likelihood_by_default = True

    def jags_twin(self, spec: ModelSpec) -> Any:
        """The JAGS twin of this model's pooling (``jags`` is the non-pooled one)."""
        return twin_for(spec)

    def parameters(self, spec: ModelSpec) -> list[str]:
        if spec.options.get("pooling") == "partial":
            return ["prevalence", "confusion", "confusion_population", "confusion_logit_scale"]
        return ["prevalence", "confusion"]

    def kernel(self, model: pm.Model, spec: ModelSpec, conjugate: Any = None) -> Kernel:
        from bayescm.models.dawid_skene import kernel as _kernel_dawid_skene

        if spec.options.get("pooling") == "partial":
            return partial_kernel(model, spec)
        # the patterns as the model holds them now (pm.set_data is honoured), in CSR form
        counts = data_value(model, "pattern_counts")
        n_pat, r, k = counts.shape
        indptr, cell, count = _kernel_dawid_skene.csr(counts)
        prev0, conf0 = spec.extra["start"]
        y0 = np.concatenate([centred(prev0), centred(conf0).ravel()])
        user_data = np.concatenate([
            [k, r, n_pat, cell.size],
            data_value(model, "prevalence_alpha").ravel(),
            data_value(model, "confusion_alpha").ravel(), y0,
            data_value(model, "multiplicity").ravel(), data_value(model, "pattern_gold").ravel(),
            indptr, cell, count]).astype(float)
        # the prevalence and every rater's rows trade off: a low-rank mass matrix halves
        # the steps per draw and gives ~10x the effective draws (benchmarks/bench_dawid_skene)
        return Kernel(_kernel_dawid_skene, user_data, y0.size, ["prevalence", "confusion"],
                      [(k,), (r, k, k)], low_rank_mass=True)

    def complete(self, ds: xr.Dataset, spec: ModelSpec, conjugate: Any = None) -> xr.Dataset:
        # prior draws lie in the raters' labelling by construction (prior_draws), so
        # only posterior draws can be reported here
        found = label_switching(ds)
        if found is not None:
            ds.attrs["label_switching"], serious = found
            if serious:
                warnings.warn(found[0], LabelSwitchingWarning, stacklevel=2)
        if "theta" not in ds:
            ds["theta"] = _theta(ds)
        return ds

    def prior_draws(self, model: pm.Model, spec: ModelSpec, size: tuple[int, ...],
                    rng: np.random.Generator) -> dict[str, np.ndarray] | None:
        """Prior draws in the labelling of the raters' labels: the Dirichlet priors
        restricted to draws that no relabelling fits better
        (:func:`~bayescm.models.dawid_skene.likelihood.relabelling`), the labelling the
        chains start in and the posterior is reported in.  A prior that relabelling
        leaves unchanged (equal prevalence concentrations, every rater's rows alike) is
        restricted exactly by relabelling its draws; any other by rejection (None when
        under one draw in a hundred is kept)."""
        if spec.options.get("pooling") == "partial":
            return partial_prior_draws(model, spec, size, rng)
        alphas = {name: data_value(model, f"{name}_alpha").astype(float)
                  for name in ("prevalence", "confusion")}
        k, n = alphas["prevalence"].size, int(np.prod(size))
        symmetric = bool(np.allclose(alphas["prevalence"], alphas["prevalence"][0])
                         and np.allclose(alphas["confusion"], alphas["confusion"][:, :1]))
        kept: dict[str, list[np.ndarray]] = {name: [] for name in alphas}
        have = 0
        while have < n:
            batch = {}
            for name, alpha in alphas.items():
                batch[name] = dirichlet(rng, alpha, (n, *alpha.shape))
            sigma = relabelling(batch["confusion"])
            if symmetric:  # the folded prior is the restricted one
                batch["prevalence"], batch["confusion"] = relabel(
                    batch["prevalence"], batch["confusion"], sigma)
                ok = np.ones(n, dtype=bool)
            else:
                ok = np.all(sigma == np.arange(k), axis=-1)
                if not have and ok.mean() < 0.01:
                    return None
            for name in alphas:
                kept[name].append(batch[name][ok])
            have += int(ok.sum())
        out = {name: np.concatenate(v)[:n].reshape(*size, *alphas[name].shape)
               for name, v in kept.items()}
        out["theta"] = out["prevalence"][..., None, :, None] * out["confusion"]
        return out

    def predictive(self, draws: xr.Dataset, n: xr.DataArray, rng: np.random.Generator,
                   spec: ModelSpec | None):
        """Rating tables of a repeat of the study (dims ``item, rater, rating``): every
        item keeps who rated it how often; its class is drawn from the prevalence (gold
        items keep theirs), its ratings from the raters' rows.  None for another number
        of cases (``predictive_n``: the design of a new study is not known) or when the
        tables would exceed :data:`PREDICTIVE_MAX_VALUES` values."""
        if spec is None:
            return None
        rt = spec.data
        design = item_design(rt)
        if "item" not in n.dims or not np.array_equal(n.values, design.sum(axis=1)):
            return None
        prev, conf = _draws(draws)
        if prev.shape[0] * design.size * rt.n_classes > PREDICTIVE_MAX_VALUES:
            warnings.warn(
                f"Replicated rating tables are left out: {prev.shape[0]:,} draws x "
                f"{rt.n_items:,} items x {rt.n_raters} raters x {rt.n_classes} labels would "
                "be too large. Fit with predictive=False to skip them.", UserWarning,
                stacklevel=2)
            return None
        counts = replicate(prev, conf, design, rt.gold_index, rng)
        shape = (draws.sizes["chain"], draws.sizes["draw"])
        da = xr.DataArray(counts.reshape(*shape, *counts.shape[1:]),
                          dims=(*SAMPLE_DIMS, "item", "rater", "rating"),
                          coords={"item": list(rt.items), "rater": list(rt.raters),
                                  "rating": list(rt.labels)}, name="counts")
        return da, "rating tables (every item rated as often by the same raters)", False

    def log_likelihood(self, draws: xr.Dataset, observed: xr.DataArray,
                       spec: ModelSpec) -> xr.DataArray:
        """Each item's log probability of its ratings (and gold class), dim ``case``."""
        rt, pat = spec.data, spec.data.patterns()
        prev, conf = _draws(draws)
        ll = pattern_logp(prev, conf, pat)[:, pat.item_pattern]
        shape = (draws.sizes["chain"], draws.sizes["draw"])
        return xr.DataArray(
            ll.reshape(*shape, -1), dims=(*SAMPLE_DIMS, "case"), name="counts",
            coords={"case": np.arange(rt.n_items), "item": ("case", list(rt.items)),
                    "pattern": ("case", pat.item_pattern)})

    def item_class_probabilities(self, draws: xr.Dataset, spec: ModelSpec,
                                 patterns: np.ndarray) -> np.ndarray:
        """Class posteriors ``(chain, draw, len(patterns), K)`` of rating patterns
        ``patterns`` at every draw (what :func:`bayescm.analysis.item_classes` summarises)."""
        prev, conf = _draws(draws)
        probs = class_probabilities(prev, conf, spec.data.patterns(), patterns)
        return probs.reshape(draws.sizes["chain"], draws.sizes["draw"], *probs.shape[1:])

    def predictive_check_tables(self, post: xr.Dataset, observed: xr.DataArray,
                                replicated: xr.DataArray, spec: ModelSpec) -> Any:
        """Pairwise agreement tables for ``bcm.posterior_predictive_check``
        (:func:`~bayescm.models.dawid_skene.checks.agreement_tables`)."""
        from bayescm.models.dawid_skene.checks import agreement_tables

        return agreement_tables(post, observed, replicated, spec.data)

    def attrs(self, spec: ModelSpec) -> dict[str, Any]:
        ident = spec.extra.get("identifiability")
        if ident is None:
            return {}
        return {"identifiability": ident.message, "identifiability_status": ident.status}

    def describe(self, spec: ModelSpec) -> str:
        rt = spec.data
        n_gold = int((rt.gold_index >= 0).sum())
        return (
            f"Dawid–Skene latent-class model (Dawid & Skene 1979) of {rt.n_raters} rater(s) "
            f"labelling {rt.n_items} items with {rt.n_classes} classes "
            f"({', '.join(map(str, rt.labels))}); {rt.n_ratings} ratings, {n_gold} gold "
            "item(s). Class prevalence π ~ Dirichlet; rater r labels an item of class c as "
            "l with probability θ_rcl, each row θ_rc· ~ Dirichlet; given the class, ratings "
            "are independent (across raters and a rater's repeats). " + (
                "Partial pooling (Paun et al. 2018): row c of rater r is softmax(u_rc·) with "
                "u_rcc = 0 and u_rcl = ζ_cl + σ_cl η_rcl, η ~ Normal(0, 1), population "
                "logits ζ ~ Normal, scales σ ~ HalfNormal. "
                if spec.options.get("pooling") == "partial" else "") + "An item's ratings have "
            "probability Σ_c π_c ∏ θ_rcl^n_rl (gold items: only their class); the class is "
            "summed out over identical rating patterns. Each rater's K×K confusion "
            "probabilities are π_a θ_rap. The chains start at Dawid & Skene's EM estimate "
            "from majority votes, which fixes what each class means; draws that fit the "
            "labels better relabelled are reported.")

    def prior_units(self, spec: ModelSpec) -> Mapping[str, Sequence[str]]:
        if spec.options.get("pooling") == "partial":
            return {n: ["all"] for n in ("prevalence", *PARTIAL_PRIORS)}
        return {"prevalence": ["all"], "confusion": list(spec.data.raters)}

    def encode_data(self, data: RatingsTable) -> dict[str, Any]:
        return data.to_dict()

    def decode_data(self, payload: Mapping[str, Any]) -> RatingsTable:
        return RatingsTable.from_dict(payload)


def _theta(ds: xr.Dataset) -> xr.DataArray:
    """Each rater's K×K confusion probabilities π_a θ_rap (dims classifier, actual,
    predicted: the multiclass metrics' tables)."""
    prev = ds["prevalence"].rename({"class": "actual"})
    theta = (prev * ds["confusion"]).rename({"rater": "classifier"})
    return theta.transpose(*SAMPLE_DIMS, "classifier", "actual", "predicted")


register_family(DawidSkene(dawid_skene))
