r"""Benchmark results item by item: accuracy with shared item difficulty, clusters, runs.

For model :math:`m` and item :math:`i` in cluster :math:`c(i)`, with :math:`y_{mi}`
successes in :math:`n_{mi}` runs,

.. math::

    y_{mi} \sim \mathrm{Binomial}(n_{mi}, p_{mi}),\qquad
    \operatorname{logit} p_{mi} = \alpha_m + u_i + v_{c(i)},

    u_i \sim N(0, \sigma_\mathrm{item}^2),\quad v_c \sim N(0, \sigma_\mathrm{cluster}^2),
    \quad \sigma_\mathrm{item} \sim \mathrm{HalfNormal}(2),\quad
    \sigma_\mathrm{cluster} \sim \mathrm{HalfNormal}(2.5),

    \mathrm{acc}_m = \int \operatorname{logit}^{-1}(\alpha_m + s z)\,\varphi(z)\,dz,
    \quad s^2 = \sigma_\mathrm{item}^2 + \sigma_\mathrm{cluster}^2,\qquad
    \mathrm{acc}_m \sim \mathrm{Beta}(a_m, b_m)\ \text{(default Beta(1, 1))}.

The item difficulty :math:`u_i` is shared by all models, so their comparisons on the
same items are paired by construction; clusters are a level above items, runs a
binomial within an item.  ``accuracy`` is a model's expected score on a new item of
a new cluster from the same populations -- what the CLT and clustered-SE intervals
estimate -- and the prior is placed on it directly: given :math:`s` the density of
:math:`\alpha_m` is :math:`\mathrm{Beta}(A(\alpha_m, s))\,\partial_\alpha A`
(:mod:`bayescm.models.items.quadrature`).

NUTS samples an exact reparametrisation: the iid effects split into their mean over
this benchmark's items (and clusters) and sum-to-zero deviations,
:math:`\bar u + \bar v = \tau\, z_\mathrm{offset}` with
:math:`\tau^2 = \sigma_\mathrm{item}^2/N + \sigma_\mathrm{cluster}^2/C`, and
``location`` :math:`\beta_m = \alpha_m + \tau z_\mathrm{offset}` (the log-odds on
this benchmark's mean item).  The likelihood then depends on :math:`\beta` and the
deviations only, so the shift between all :math:`\alpha_m` and all :math:`u_i` -- a
ridge the data leave open -- becomes one standard-normal coordinate.

One model (the marginal route, ``marginal="auto"``): the item and cluster effects
integrate out exactly up to quadrature (:mod:`bayescm.models.items.marginal`), and
NUTS runs over :math:`(\alpha, \sigma_\mathrm{item}[, \sigma_\mathrm{cluster}])`
alone -- with one coordinate per item and cluster the scales mix slowly.

One model, independent items, one run each: the scores are i.i.d.
Bernoulli(:math:`\mathrm{acc}`) whatever :math:`\sigma_\mathrm{item}`, so the
posterior is exactly :math:`\mathrm{Beta}(a + k, b + n - k)` (``sampler="exact"``).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import xarray as xr
from scipy.special import betaln, gammaln

from bayescm.data.items import OUTCOMES, ItemResults
from bayescm.family import ClosedForm, Conjugate, Family, Kernel, ModelSpec, attach, register_family
from bayescm.models.items.centring import clusters_stand_out
from bayescm.models.items.marginal import CELLS_LIMIT, WORK_MAX, grid_work
from bayescm.models.items.marginal import layout as marginal_layout
from bayescm.models.items.marginal import loglik as marginal_loglik
from bayescm.models.items.newset import new_set_accuracy
from bayescm.models.items.quadrature import NODES, WEIGHTS, accuracy_of, alpha_of
from bayescm.priors import Beta, HalfNormal, PriorError
from bayescm.priors import resolve as resolve_priors
from bayescm.stats import SAMPLE_DIMS

if TYPE_CHECKING:
    import pymc as pm

__all__ = ["CENTRE_MIN", "Items", "items"]

CENTRE_MIN = 20
"""``centered="auto"``: item effects are centred when items hold at least this many
scores on average (models x runs); the data then pin each effect, and the
non-centred :math:`\\sigma z` becomes a ridge.  With fewer, non-centred (a funnel
otherwise)."""

def items(results: ItemResults, *, priors: Mapping[str, Any] | None = None,
          centered: bool | str = "auto", marginal: bool | str = "auto") -> pm.Model:
    r"""Build the item-level model of benchmark results (many models, the same items).

    Parameters
    ----------
    results
        A :class:`bayescm.ItemResults` (``ItemResults.from_frame(df, ...)``).
    priors
        Overrides by name: ``"accuracy"`` (a :class:`bayescm.priors.Beta` for every
        model, or a mapping ``model -> prior``; default Beta(1, 1)),
        ``"sigma_item"`` and ``"sigma_cluster"`` (:class:`bayescm.priors.HalfNormal`:
        the spread of item and of cluster difficulty on the log-odds scale; defaults
        HalfNormal(2) and HalfNormal(2.5), the wider one for clusters because with few
        clusters the prior decides how large a cluster spread the interval allows:
        under HalfNormal(2) the accuracy's 95% interval covered 0.93 at 6 and 20
        clusters of strongly different difficulty, under HalfNormal(2.5) 0.95-0.955;
        ``benchmarks/bench_items_prior_reweight.py``).
    centered
        ``True``: sample the item and cluster effects themselves (``effect_item``,
        ``effect_cluster``); ``False``: the standardised ``z_item``, ``z_cluster``
        (effect = σ z); ``"auto"`` (default): item effects centred when items hold
        at least :data:`CENTRE_MIN` scores on average, cluster effects when clusters
        hold enough scores and differ clearly
        (:func:`bayescm.models.items.centring.clusters_stand_out`).  Not used by the
        marginal route.
    marginal
        ``True``: integrate the item and cluster effects out (one model only):
        the posterior is over ``alpha``, ``sigma_item`` and ``sigma_cluster``, the
        likelihood

        .. math::

            \prod_c \int \prod_{i \in c} \binom{n_i}{y_i}\int
            \sigma(\alpha + \sigma_c z + \sigma_i u)^{y_i}
            \sigma(-\alpha - \sigma_c z - \sigma_i u)^{n_i - y_i}\varphi(u)\,du\,
            \varphi(z)\,dz

        by trapezoid rules (:mod:`bayescm.models.items.marginal`); ``False``: every
        effect sampled; ``"auto"`` (default): marginal for one model unless the
        posterior is the exact Beta (one run of independent items) or the grids
        would take more than :data:`~bayescm.models.items.marginal.WORK_MAX` of
        work per evaluation (many runs per item, in clusters), where the sampled
        effects are faster.

    Returns
    -------
    pymc.Model
        Unsampled.  Free variables ``location`` (dim ``model``: the log-odds on
        this benchmark's mean item), ``sigma_item``, ``sigma_cluster`` (with
        clusters), ``z_offset`` (the benchmark's mean item and cluster effect,
        standardised), ``z_item`` or ``effect_item`` (``item``) and ``z_cluster`` or
        ``effect_cluster`` (``cluster``), each summing to zero; deterministic
        ``alpha`` (``model``: the population's location, ``location - tau * z_offset`` with
        :math:`\tau^2 = \sigma_\mathrm{item}^2/N + \sigma_\mathrm{cluster}^2/C`) and
        ``accuracy`` (``model``).  ``fit``
        adds ``acc`` (the same draws under the metric key the analyses use),
        ``accuracy_new_set`` (the accuracy a new set of the benchmark's design
        would show) and ``effect_item``/``effect_cluster``.

        The marginal route: free ``alpha``, ``sigma_item``, ``sigma_cluster`` (with
        clusters), Potentials ``accuracy_prior`` and ``loglik_marginal``,
        deterministic ``accuracy``; ``fit`` adds ``acc`` and ``accuracy_new_set``.
        Item and cluster effects are integrated out: they are not in its posterior.

    Examples
    --------
    >>> import pandas as pd, bayescm as bcm
    >>> df = pd.DataFrame({"item": list(range(6)) * 2, "model": ["a"] * 6 + ["b"] * 6,
    ...                    "correct": [1, 1, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1],
    ...                    "topic": ["x", "x", "y", "y", "z", "z"] * 2})
    >>> model = bcm.models.items(bcm.ItemResults.from_frame(df, cluster="topic"))
    >>> [v.name for v in model.free_RVs]
    ['location', 'sigma_item', 'sigma_cluster', 'z_offset', 'z_item', 'z_cluster']
    >>> model.named_vars_to_dims["accuracy"]
    ('model',)
    """
    import pymc as pm  # PyMC is imported when a model is built, not with bayescm
    import pytensor.tensor as pt

    spec = _specify(results, priors, centered, marginal)
    res: ItemResults = spec.data
    opts = spec.extra
    coords = {"model": list(res.models), "item": list(res.items), "outcome": list(OUTCOMES)}
    if opts["clustered"]:
        coords["cluster"] = list(res.clusters)
    prior = spec.priors
    with pm.Model(coords=coords) as model:
        counts = pm.Data("counts_data", res.outcome_counts_array,
                         dims=("model", "item", "outcome"))
        a = pm.Data("accuracy_alpha", np.array([p.alpha for p in prior["accuracy"]]),
                    dims="model")
        b = pm.Data("accuracy_beta", np.array([p.beta for p in prior["accuracy"]]),
                    dims="model")
        # the marginal route samples alpha itself (no location, offset or effects)
        free = pm.Flat("alpha" if opts["marginal"] else "location", dims="model")
        sig_i = pm.HalfNormal("sigma_item", sigma=prior["sigma_item"][0].sigma)
        s2, t2, sig_c = sig_i**2, sig_i**2 / res.n_items, 0.0
        if opts["clustered"]:
            sig_c = pm.HalfNormal("sigma_cluster", sigma=prior["sigma_cluster"][0].sigma)
            s2, t2 = s2 + sig_c**2, t2 + sig_c**2 / res.n_clusters
        if opts["marginal"]:
            alpha = free
        else:
            beta = free
            offset = pm.Normal("z_offset", 0.0, 1.0)
            if opts["centred"]:
                u = pm.ZeroSumNormal("effect_item", sigma=sig_i, dims="item")
            else:
                u = sig_i * pm.ZeroSumNormal("z_item", sigma=1.0, dims="item")
            if opts["clustered"]:
                if opts["centred_cluster"]:
                    v = pm.ZeroSumNormal("effect_cluster", sigma=sig_c, dims="cluster")
                else:
                    v = sig_c * pm.ZeroSumNormal("z_cluster", sigma=1.0, dims="cluster")
                u = u + v[res.cluster_index]
            # the mean item and cluster effect of this benchmark (an exact split of the
            # iid normal effects into their mean and the deviations from it): alpha is
            # the population's location, beta the benchmark's
            alpha = pm.Deterministic("alpha", beta - pt.sqrt(t2) * offset, dims="model")
        s = pt.sqrt(s2)
        eta_k = alpha[:, None] + s * NODES[None, :]
        p, q = pt.sigmoid(eta_k), pt.sigmoid(-eta_k)
        acc = pt.dot(p, WEIGHTS)
        rest = pt.dot(q, WEIGHTS)
        slope = pt.dot(p * q, WEIGHTS)
        pm.Deterministic("accuracy", acc, dims="model")
        log_beta = pt.gammaln(a) + pt.gammaln(b) - pt.gammaln(a + b)
        pm.Potential("accuracy_prior", pt.sum((a - 1) * pt.log(acc) + (b - 1) * pt.log(rest)
                                              - log_beta + pt.log(slope)))
        if opts["marginal"]:
            # the patterns and grids are data, so nutpie's compiled model is reused
            # across data sets of one shape with their own values
            lay = marginal_layout(res, prior["sigma_item"][0].sigma, _scale_c(spec))
            data = {k: pm.Data(k, v) for k, v in lay.arrays().items()}
            pm.Potential("loglik_marginal", marginal_loglik(alpha[0], sig_i, sig_c, data))
        else:
            pm.Binomial("successes", n=counts.sum(axis=-1),
                        logit_p=beta[:, None] + u[None, :], observed=counts[..., 0],
                        dims=("model", "item"))
    return attach(model, spec)


def _specify(results: Any, priors: Mapping[str, Any] | None, centered: Any,
             marginal: Any = "auto") -> ModelSpec:
    """Validated data, resolved priors and options (no PyMC)."""
    if not isinstance(results, ItemResults):
        raise TypeError("items() needs a bayescm.ItemResults (ItemResults.from_frame(df, "
                        f"item=..., model=..., correct=...)), got {type(results).__name__}.")
    if isinstance(centered, bool | np.bool_):
        centered = bool(centered)
    elif centered != "auto":
        raise ValueError(f"items: centered must be True, False or 'auto', got {centered!r}.")
    if isinstance(marginal, bool | np.bool_):
        marginal = bool(marginal)
    elif marginal != "auto":
        raise ValueError(f"items: marginal must be True, False or 'auto', got {marginal!r}.")
    if marginal is True and results.n_models != 1:
        raise ValueError(f"items: marginal=True integrates the item effects out for one model, "
                         f"but these results hold {results.n_models} models (their item "
                         "effects are shared, so they do not integrate out model by model); "
                         "use marginal=False or 'auto', or fit one model's results.")
    clustered = results.clusters is not None
    if results.n_items < 2:
        raise ValueError(f"items() needs at least 2 items, got {results.n_items}: one item "
                         "says nothing of the items a benchmark could hold.")
    if clustered and results.n_clusters < 2:
        raise ValueError(f"items() needs at least 2 clusters, got {results.n_clusters} (all "
                         f"{results.n_items} items in one): drop cluster= (one cluster has "
                         "nothing to separate it from the items).")
    units = {"sigma_item": ["item"], "sigma_cluster": ["cluster"]}
    resolved = resolve_priors("items", priors, list(results.models), units=units)
    improper = [f"{m!r}: {p!r}" for m, p in zip(results.models, resolved["accuracy"],
                                                  strict=True) if not p.proper]
    if improper:
        raise PriorError(
            f"items: the accuracy prior is improper for model(s) {', '.join(improper)}. "
            "The accuracy's prior enters as a density over the item population's location "
            "and scales, which a parameter of 0 makes infinite; use a proper Beta, e.g. "
            "Beta(1, 1) (the default, uniform) or Beta(0.5, 0.5) (Jeffreys).")
    if not clustered:
        if priors and "sigma_cluster" in priors:
            raise ValueError("priors['sigma_cluster'] needs clusters: build the results "
                             "with ItemResults.from_frame(..., cluster=...).")
        resolved.pop("sigma_cluster")
    per_item = float(results.trials_array.sum()) / results.n_items
    centred = per_item >= CENTRE_MIN if centered == "auto" else centered
    centred_c = clustered and (clusters_stand_out(results) if centered == "auto"
                               else centered)
    if marginal is not False and results.n_models == 1:
        cells, work = grid_work(results, resolved["sigma_item"][0].sigma,
                                resolved["sigma_cluster"][0].sigma if clustered else None)
        if marginal is True and cells > CELLS_LIMIT:
            raise ValueError(
                f"items: marginal=True would integrate over {cells:,} grid cells per density "
                f"evaluation (at most {CELLS_LIMIT:,}): the quadrature steps shrink with the "
                "runs per item and the trials per cluster. Use marginal=False or 'auto' "
                "(sampled effects: the same posterior).")
        if marginal == "auto":
            marginal = not _exact_case(results) and work <= WORK_MAX
    elif marginal == "auto":
        marginal = False
    # the route taken, not "auto": a saved fit rebuilds the model it came from
    return ModelSpec("items", results, resolved,
                     options={"centered": centered, "marginal": marginal},
                     extra={"clustered": clustered, "centred": bool(centred),
                            "centred_cluster": bool(centred_c),
                            "marginal": marginal})


def _scale_c(spec: ModelSpec) -> float | None:
    """The cluster scale's HalfNormal scale, or None without clusters."""
    return spec.priors["sigma_cluster"][0].sigma if spec.extra["clustered"] else None


def _exact_case(res: ItemResults) -> bool:
    """One model, independent items, one run each: the posterior is a Beta."""
    return res.n_models == 1 and res.clusters is None and res.one_run


def _seed(values: np.ndarray) -> int:
    """A seed from draws (the derived draws are reproducible with the fit's seed)."""
    return zlib.crc32(np.ascontiguousarray(values.reshape(-1)[:64]).tobytes())


class Items(Family):
    """The items family: accuracy per model with shared item and cluster effects."""

    name = "items"
    default_priors: ClassVar[dict[str, Any]] = {
        "accuracy": Beta(1, 1), "sigma_item": HalfNormal(2), "sigma_cluster": HalfNormal(2.5)}
    target_accept = 0.9
    replicates_data = False  # a new set's accuracy is accuracy_new_set, in the posterior

    def nuts_target_accept(self, spec: ModelSpec) -> float | None:
        """0.95 on the marginal route: its posterior in ``(alpha, log scales)`` bends
        where large scales let alpha grow with them at a fixed accuracy.  At 0.9, 12 of
        20 data sets of 6 clusters and 4 of 20 of 20 clusters (ICC 0.3, one run) left
        divergences there; at 0.95 none, for about 15% more time."""
        return 0.95 if spec.extra.get("marginal") else self.target_accept

    def parameters(self, spec: ModelSpec) -> list[str]:
        """``alpha``, the scales and ``accuracy`` (the marginal route's free variables
        are ``alpha`` and the scales themselves)."""
        res: ItemResults = spec.data
        # one model answering each item once says nothing of the item spread (its
        # scores are Bernoulli(accuracy) whatever sigma_item): its draws are the prior's,
        # and their mixing is not a verdict on the fit
        scales = [] if res.n_models == 1 and res.one_run else ["sigma_item"]
        scales += ["sigma_cluster"] if spec.extra.get("clustered") else []
        return ["alpha", *scales, "accuracy"]

    def conjugate(self, model: pm.Model, spec: ModelSpec) -> Conjugate | None:
        res = spec.data
        if not _exact_case(res):
            return None
        k, n = res.successes_array.sum(axis=1), res.trials_array.sum(axis=1)
        a = np.array([p.alpha for p in spec.priors["accuracy"]])
        b = np.array([p.beta for p in spec.priors["accuracy"]])
        return Conjugate(betas={"accuracy": (a + k, b + n - k)})

    def closed_form(self, data: Any, priors: Mapping[str, Any] | None = None,
                    options: Mapping[str, Any] | None = None) -> ClosedForm | None:
        """One model's independent single-run scores: accuracy ~ Beta(a + k, b + n - k)
        (None for any other results)."""
        opts = {"centered": "auto", "marginal": "auto", **dict(options or {})}
        spec = _specify(data, priors, opts.pop("centered"), opts.pop("marginal"))
        if opts:  # as the builder would say
            raise TypeError(f"items() got unexpected keyword argument(s) {sorted(opts)}.")
        conj = self.conjugate(None, spec)  # type: ignore[arg-type]  (it reads the spec)
        if conj is None:
            return None
        res: ItemResults = spec.data
        observed = xr.DataArray(res.outcome_counts_array, dims=("model", "item", "outcome"),
                                coords={"model": list(res.models), "item": list(res.items),
                                        "outcome": list(OUTCOMES)})
        return ClosedForm(spec, conj, {"accuracy": ("model",)}, {"model": list(res.models)},
                          observed)

    def kernel(self, model: pm.Model, spec: ModelSpec, conjugate: Any = None) -> Kernel:
        from bayescm.models.items import kernel as _kernel_items

        res: ItemResults = spec.data
        if spec.extra["marginal"]:
            from bayescm.models.items import kernel_marginal

            prior = spec.priors["accuracy"][0]
            return kernel_marginal.kernel(res, float(prior.alpha), float(prior.beta),
                                          spec.priors["sigma_item"][0].sigma, _scale_c(spec))
        y, n = res.successes_array.astype(float), res.trials_array.astype(float)
        a = np.array([p.alpha for p in spec.priors["accuracy"]])
        b = np.array([p.beta for p in spec.priors["accuracy"]])
        clustered, centred = spec.extra["clustered"], spec.extra["centred"]
        centred_c = spec.extra["centred_cluster"]
        # binomial coefficients and Beta functions: constants, kept so the value is PyMC's
        const = float(np.sum(gammaln(n + 1) - gammaln(y + 1) - gammaln(n - y + 1))
                      - np.sum(betaln(a, b)))
        m_, n_, c_ = res.n_models, res.n_items, res.n_clusters if clustered else 0
        scale_c = spec.priors["sigma_cluster"][0].sigma if clustered else 1.0
        user_data = np.concatenate([
            [m_, n_, c_, float(clustered) + float(centred_c), float(centred), float(n.max()),
             const,
             NODES.size, spec.priors["sigma_item"][0].sigma, scale_c], a, b, NODES,
            WEIGHTS, res.cluster_index, n.ravel(), y.sum(axis=1), y.sum(axis=0),
            np.where(np.ptp(n, axis=1) == 0, n[:, 0], -1.0)]).astype(float)
        names = ["location", "sigma_item"] + (["sigma_cluster"] if clustered else [])
        shapes: list[tuple[int, ...]] = [(m_,), ()] + ([()] if clustered else [])
        names += ["z_offset", "effect_item" if centred else "z_item"]
        shapes += [(), (n_,)]
        if clustered:
            names.append("effect_cluster" if centred_c else "z_cluster")
            shapes.append((c_,))
        n_dim = m_ + 2 + (n_ - 1) + (c_ if clustered else 0)
        return Kernel(_kernel_items, user_data, n_dim, names, shapes)

    def complete(self, ds: xr.Dataset, spec: ModelSpec, conjugate: Any = None) -> xr.Dataset:
        res: ItemResults = spec.data
        ds = ds.drop_vars([v for v in ds.data_vars if str(v).endswith("__")])
        ds = ds.drop_dims([d for d in ds.dims if "__dim_" in str(d)])
        runs = np.maximum(np.rint(res.runs_per_item), 1).astype(np.int64)
        if "sigma_item" in ds:  # sampled: the effects' route or the marginal one
            sig_i = ds["sigma_item"].transpose(*SAMPLE_DIMS).values
            sig_c = (ds["sigma_cluster"].transpose(*SAMPLE_DIMS).values
                     if "sigma_cluster" in ds else np.zeros_like(sig_i))
            if "location" in ds:
                tau = np.sqrt(sig_i**2 / res.n_items + sig_c**2 / res.n_clusters)
                alpha = (ds["location"].transpose(*SAMPLE_DIMS, "model").values
                         - (tau * ds["z_offset"].transpose(*SAMPLE_DIMS).values)[..., None])
                ds["alpha"] = ((*SAMPLE_DIMS, "model"), alpha)
            else:  # the marginal route samples alpha itself (no effects to add)
                alpha = ds["alpha"].transpose(*SAMPLE_DIMS, "model").values
            acc = accuracy_of(alpha, np.sqrt(sig_i**2 + sig_c**2)[..., None])
            ds["accuracy"] = ((*SAMPLE_DIMS, "model"), acc)
            for level, sig in (("item", sig_i), ("cluster", sig_c)):
                if f"z_{level}" in ds:  # the effect itself, in place of its z
                    z = ds[f"z_{level}"]
                    ds[f"effect_{level}"] = z * xr.DataArray(sig, dims=SAMPLE_DIMS)
                    ds = ds.drop_vars(f"z_{level}")
            shape = alpha.shape
            rng = np.random.default_rng(_seed(alpha))
            new = new_set_accuracy(alpha.reshape(-1, shape[-1]), sig_i.reshape(-1),
                                   sig_c.reshape(-1), res.cluster_index, runs, rng)
            ds["accuracy_new_set"] = ((*SAMPLE_DIMS, "model"), new.reshape(shape))
        else:  # the exact case: one model, independent items, one run each
            acc = ds["accuracy"].transpose(*SAMPLE_DIMS, "model").values
            rng = np.random.default_rng(_seed(acc))
            new = rng.binomial(res.n_items, acc) / res.n_items
            ds["accuracy_new_set"] = ((*SAMPLE_DIMS, "model"), new)
        ds["accuracy_new_set"].attrs["meaning"] = (
            f"the accuracy a new set of {res.n_items} items of the benchmark's design would "
            "show (predictive), not the posterior of the accuracy")
        ds["acc"] = ds["accuracy"]  # the metric key the analyses ask for
        return ds.assign_coords(model=list(res.models))

    def prior_draws(self, model: pm.Model, spec: ModelSpec, size: tuple[int, ...],
                    rng: np.random.Generator) -> dict[str, np.ndarray] | None:
        per = spec.priors["accuracy"]
        a, b = np.array([p.alpha for p in per]), np.array([p.beta for p in per])
        acc = rng.beta(a, b, size=(*size, a.size))
        marginal = spec.extra.get("marginal", False)
        if _exact_case(spec.data) and not marginal:
            return {"accuracy": acc}
        out = {"sigma_item": np.abs(rng.normal(0.0, spec.priors["sigma_item"][0].sigma, size))}
        s2 = out["sigma_item"] ** 2
        if spec.extra["clustered"]:
            out["sigma_cluster"] = np.abs(
                rng.normal(0.0, spec.priors["sigma_cluster"][0].sigma, size))
            s2 = s2 + out["sigma_cluster"] ** 2
        alpha = alpha_of(acc, np.sqrt(s2)[..., None])
        if marginal:  # alpha is the free variable: no location or offset
            out["alpha"] = alpha
            return out
        res: ItemResults = spec.data
        t2 = out["sigma_item"] ** 2 / res.n_items + (
            out["sigma_cluster"] ** 2 / res.n_clusters if "sigma_cluster" in out else 0.0)
        out["z_offset"] = rng.standard_normal(size)
        out["location"] = alpha + (np.sqrt(t2) * out["z_offset"])[..., None]
        return out

    def predictive(self, draws: xr.Dataset, n: xr.DataArray, rng: np.random.Generator,
                   spec: ModelSpec | None) -> None:
        # a new set's accuracy is in the posterior (accuracy_new_set); replicated
        # item-by-item scores (draws x models x items) would be too large to keep
        return None

    def prior_units(self, spec: ModelSpec) -> Mapping[str, Sequence[str]]:
        return {"accuracy": list(spec.data.models), "sigma_item": ["item"],
                "sigma_cluster": ["cluster"]}

    def encode_data(self, data: ItemResults) -> dict[str, Any]:
        return data.to_dict()

    def decode_data(self, payload: Mapping[str, Any]) -> ItemResults:
        return ItemResults.from_dict(payload)

    def rebuild(self, data: Any, priors: Mapping[str, Any], options: Mapping[str, Any]
                ) -> pm.Model:
        """The model again; a fit saved before the marginal route existed records no
        ``marginal`` option and was sampled with every effect (``marginal=False``)."""
        return super().rebuild(data, priors, {"marginal": False, **options})

    def describe(self, spec: ModelSpec) -> str:
        res: ItemResults = spec.data
        where = (f" in {res.n_clusters} clusters (a normal cluster effect above the items)"
                 if res.clusters is not None else "")
        return (
            f"Item-level model of {res.n_models} model(s) on the same {res.n_items} items"
            f"{where}: each model's successes on an item ~ Binomial(runs, p), logit p = "
            "α (the model) + u (the item, shared by all models: comparisons are paired) "
            "+ v (the cluster); u, v normal with HalfNormal scales. Accuracy is the expected "
            "score on a new item of a new cluster, ∫ logit⁻¹(α + s z) φ(z) dz, with its "
            "Beta prior placed on it directly."
            + (" The item and cluster effects are integrated out by quadrature (one model): "
               "the posterior is over α and the scales." if spec.options.get("marginal")
               else ""))


register_family(Items(items))
