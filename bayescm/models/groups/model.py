r"""Hierarchical logit-normal model of prevalence, TPR and TNR over slices.

For each rate :math:`r \in \{\phi, \mathrm{TPR}, \mathrm{TNR}\}` and slice :math:`s`

.. math::

    \operatorname{logit} r_s = \mu_r + \sum_f a_{rf}[\ell_f(s)]
        \;[+\ a_{r,\mathrm{int}}[\ell_1(s), \dots, \ell_F(s)]]
        \;[+\ w_{r, t(s)}],\qquad w_{r0} = 0,\ w_{rt} = w_{r,t-1} + \tau_r e_{rt}

    a_{rf} = \sigma_{rf} z_{rf},\quad z_{rf} \sim \mathrm{ZeroSumNormal}(1)
        \ (\textstyle\sum_\ell z_{rf\ell} = 0),\quad e \sim \mathrm{Normal}(0, 1),

    \mu_r \sim \mathrm{Normal}(0, 1.5),\quad \sigma_{rf}, \tau_r \sim \mathrm{HalfNormal}(1)

    (tp, fn, fp, tn)_s \sim \mathrm{Multinomial}(n_s, \theta_s),\quad
    \theta_s = (\mathrm{TPR}_s\phi_s,\ (1-\mathrm{TPR}_s)\phi_s,\
                (1-\mathrm{TNR}_s)(1-\phi_s),\ \mathrm{TNR}_s(1-\phi_s))

The level effects of each factor (and of the interaction) sum to zero, so their
mean is not a second copy of :math:`\mu_r` (a direction only the prior would
resolve, which NUTS crosses slowly when there are many levels).  ZeroSumNormal(1)
is the law of L iid standard normals minus their mean: each :math:`z` has variance
:math:`1 - 1/L`.  Non-centred (NUTS samples :math:`z`, which keeps it away from the
funnel of small scales) or centred (:math:`a_{rf} \sim
\mathrm{ZeroSumNormal}(\sigma_{rf})` itself, better when every level holds many
cases); by default each factor is centred when the data pin all its levels' effects
and those clearly differ.  Math, priors, pooling and references:
``models/groups/README.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd
import xarray as xr

from bayescm.data.confusion import CELLS
from bayescm.family import Family, JagsTwin, Kernel, ModelSpec, attach, register_family
from bayescm.models._loglik import case_log_likelihood
from bayescm.models._spec import (
    ConfusionCodec,
    as_confusion_matrix,
    counts_data,
    theta_from_rates,
)
from bayescm.models.groups.design import RATES, design, factors_of, spec_design
from bayescm.models.groups.twin import jags_data, jags_inits, jags_monitors, jags_posterior
from bayescm.priors import HalfNormal, Normal
from bayescm.priors import resolve as resolve_priors
from bayescm.stats import SAMPLE_DIMS

if TYPE_CHECKING:
    import pymc as pm

__all__ = ["groups"]


def groups(cm: Any, *, factors: Sequence[str] | None = None, interactions: bool = False,
           priors: Mapping[str, Any] | None = None,
           centered: bool | str = "auto") -> pm.Model:
    r"""Build the hierarchical (partially pooled) model of a sliced confusion matrix.

    Parameters
    ----------
    cm
        A sliced :class:`bayescm.ConfusionMatrix` (``from_predictions(...,
        groups=..., time=..., window=...)``, or ``from_frame``/``from_slices``); an
        unsliced matrix or batch of classifiers is refused (compare classifiers
        with ``three_beta``).
    factors
        The grouping factors with an effect each; default every level column of
        ``cm.slices`` except ``window``.  A time window, when the slices have one,
        always gets a random-walk effect.
    interactions
        Add one effect per combination of the factors' levels (an intersection such
        as sex × age band), on top of the factors' main effects.
    priors
        Overrides by name, one prior for all three rates or a mapping ``rate ->
        prior`` (rates ``prevalence``, ``tpr``, ``tnr``): ``"mu"`` (a
        :class:`bayescm.priors.Normal`, default Normal(0, 1.5)), ``"sigma"`` (every
        factor's and the interaction's scale, a :class:`bayescm.priors.HalfNormal`,
        default HalfNormal(1)), ``"tau"`` (the random walk's step scale, default
        HalfNormal(1)).
    centered
        True: sample the level effects themselves (``effect_<factor>`` ~
        ZeroSumNormal(σ)) instead of the standardised ``z_<factor>``.  Better when
        every level holds many cases: the data then pin each effect and the
        non-centred ``σ z`` becomes a ridge; worse when levels are small or a
        factor's spread is near zero (a funnel).  False: every effect non-centred.
        ``"auto"`` (default): per factor (and for the interaction), centred when
        each of its levels holds at least 100 positives and 100 negatives.  See the
        model card.

    Returns
    -------
    pymc.Model
        Unsampled.  Free variables ``mu`` (dim ``rate``), ``sigma_<factor>``
        (``rate``) and ``z_<factor>`` (``rate, <factor>_level``; ``effect_<factor>``
        when centred; both sum to zero over the levels) per factor,
        ``sigma_interaction``/``z_interaction`` (``rate, combination``), ``tau`` and
        ``z_window`` (``rate, window_step``) for windows; deterministic
        ``prevalence``, ``tpr``, ``tnr`` (dim ``slice``) and ``theta`` (``slice,
        cell``).  ``fit`` adds ``effect_<factor>`` (:math:`\sigma z`; ``z_<factor>``
        when centred) and ``effect_window`` (the walk).

    Examples
    --------
    >>> import numpy as np, bayescm as bcm
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 400)
    >>> sex, site = rng.choice(["F", "M"], 400), rng.choice(["a", "b", "c"], 400)
    >>> cm = bcm.ConfusionMatrix.from_predictions(y, y, groups={"sex": sex, "site": site})
    >>> model = bcm.models.groups(cm)
    >>> [v.name for v in model.free_RVs]
    ['mu', 'sigma_sex', 'z_sex', 'sigma_site', 'z_site']
    >>> model.named_vars_to_dims["z_site"]
    ('rate', 'site_level')
    """
    import pymc as pm  # PyMC is imported when a model is built, not with bayescm
    import pytensor.tensor as pt

    spec = _specify(cm, factors, interactions, priors, centered)
    d = spec_design(spec)
    prior = spec.priors
    with pm.Model(coords=d.coords() | {"cell": list(CELLS)}) as model:
        counts = counts_data(d.counts.astype(np.int64), (d.unit, "cell"))
        mu = pm.Normal("mu", mu=np.array([p.mu for p in prior["mu"]]),
                       sigma=np.array([p.sigma for p in prior["mu"]]), dims="rate")
        eta = mu[:, None]
        scale = np.array([p.sigma for p in prior["sigma"]])
        for b in d.blocks:
            sigma = pm.HalfNormal(f"sigma_{b.name}", sigma=scale, dims="rate")
            # sum to zero over the levels: the effects' mean is mu's, not a second
            # copy of it (a ridge NUTS crawls along with many levels)
            if b.centred:
                effect = pm.ZeroSumNormal(b.free, sigma=sigma[:, None], dims=("rate", b.dim))
            else:
                effect = sigma[:, None] * pm.ZeroSumNormal(b.free, sigma=1.0,
                                                           dims=("rate", b.dim))
            eta = eta + effect[:, b.index]
        if d.walk:
            tau = pm.HalfNormal("tau", sigma=np.array([p.sigma for p in prior["tau"]]),
                                dims="rate")
            e = pm.Normal("z_window", 0.0, 1.0, dims=("rate", "window_step"))
            w = pt.concatenate([pt.zeros((3, 1)), tau[:, None] * pt.cumsum(e, axis=1)], axis=1)
            eta = eta + w[:, d.window]
        rates = {r: pm.Deterministic(r, pm.math.invlogit(eta[i]), dims=d.unit)
                 for i, r in enumerate(RATES)}
        phi, tpr, tnr = rates["prevalence"], rates["tpr"], rates["tnr"]
        theta = pm.Deterministic(
            "theta",
            pt.stack([tpr * phi, (1 - tpr) * phi, (1 - tnr) * (1 - phi), tnr * (1 - phi)], -1),
            dims=(d.unit, "cell"))
        pm.Multinomial("counts", n=counts.sum(axis=-1), p=theta, observed=counts,
                       dims=(d.unit, "cell"))
    return attach(model, spec)


def _specify(cm: Any, factors: Sequence[str] | None, interactions: bool,
             priors: Mapping[str, Any] | None, centered: bool | str = "auto") -> ModelSpec:
    """Validated data, resolved priors and options (no PyMC)."""
    cm = as_confusion_matrix(cm)
    if cm.slices is None:
        # pooling different classifiers as if they were slices of one would shrink
        # each towards the others: a silent, wrong answer
        raise ValueError(
            f"groups pools the slices (groups, time windows) of one classifier's cases, "
            f"but cm is not sliced (a batch of {len(cm)} {cm.unit}(s)); build it with "
            "bcm.ConfusionMatrix.from_predictions(y_true, y_pred, groups=..., time=..., "
            "window=...) or from_frame(..., groups=...), or use bcm.models.three_beta for "
            "separate classifiers."
        )
    chosen = factors_of(cm, factors)
    if isinstance(centered, bool | np.bool_):
        centered = bool(centered)
    elif centered != "auto":
        raise ValueError(f"groups: centered must be True, False or 'auto', got {centered!r}.")
    d = design(cm, chosen, bool(interactions), centered)
    units = {name: list(RATES) for name in ("mu", "sigma", "tau")}
    resolved = resolve_priors("groups", priors, RATES, units=units)
    if not d.walk:
        resolved.pop("tau")  # no windows: no walk, no step scale
    return ModelSpec("groups", cm, resolved,
                     options={"factors": chosen, "interactions": bool(interactions),
                              "centered": centered},
                     extra={"design": d})


class Groups(ConfusionCodec, Family):
    """The groups family: partial pooling of the three rates over slices."""

    name = "groups"
    default_priors: ClassVar[dict[str, Any]] = {
        "mu": Normal(0, 1.5), "sigma": HalfNormal(1), "tau": HalfNormal(1)}
    # a scale with few levels leaves a curved ridge (sigma * z fixed by the data) that
    # NUTS crosses only with small steps: 0.9 gives divergences on ordinary data
    target_accept = 0.99
    jags = JagsTwin("groups/groups.jags", jags_data, jags_inits, jags_monitors, jags_posterior)

    def parameters(self, spec: ModelSpec) -> list[str]:
        scales = [n for n in spec_design(spec).free_names() if n.startswith(("sigma_", "tau"))]
        return ["mu", *scales, *RATES]

    def complete(self, ds: xr.Dataset, spec: ModelSpec, conjugate: Any = None) -> xr.Dataset:
        d = spec_design(spec)
        # nutpie's trace of a PyMC model also holds the log-scales (``sigma_sex_log__``)
        ds = ds.drop_vars([n for n in ds.data_vars if str(n).endswith("__")])
        ds = ds.drop_dims([k for k in ds.dims if "__dim_" in str(k)])
        draws = {n: ds[n].transpose(*SAMPLE_DIMS, ...).values for n in d.free_names()}
        dims = d.dims()
        for b in d.blocks:
            name, value = ((f"z_{b.name}", d.standardised(draws, b)) if b.centred
                           else (f"effect_{b.name}", d.effect(draws, b)))
            ds[name] = ((*SAMPLE_DIMS, *dims[name]), value)
        if d.walk:
            ds["effect_window"] = ((*SAMPLE_DIMS, "rate", "window_level"), d.walk_effect(draws))
            # datetime64[ns] (as the slices' own window coordinate): it survives netCDF
            # unchanged, so a saved fit keeps its content hash
            windows = pd.Index(d.windows)
            if isinstance(windows, pd.DatetimeIndex):
                windows = windows.as_unit("ns")
            ds = ds.assign_coords(window_level=windows.to_numpy(),
                                  window_step=windows[1:].to_numpy())
        rate = 1.0 / (1.0 + np.exp(-d.eta(draws)))
        for i, r in enumerate(RATES):
            ds[r] = ((*SAMPLE_DIMS, d.unit), rate[..., i, :])
        ds["theta"] = theta_from_rates(ds["prevalence"], ds["tpr"], ds["tnr"], (d.unit,))
        return ds

    def kernel(self, model: pm.Model, spec: ModelSpec, conjugate: Any = None) -> Kernel:
        from scipy.special import gammaln

        from bayescm.models.groups import kernel as _kernel_groups

        d = spec_design(spec)
        counts = d.counts
        # the multinomial coefficients: a constant, kept so the value is PyMC's
        const = float(np.sum(gammaln(counts.sum(-1) + 1)) - np.sum(gammaln(counts + 1)))
        prior = spec.priors
        scales = [[p.sigma for p in prior.get(k, prior["sigma"])] for k in ("sigma", "tau")]
        user_data = np.concatenate([
            [len(d.units), len(d.blocks), len(d.windows), const],
            [len(b.labels) for b in d.blocks], [float(b.centred) for b in d.blocks],
            [p.mu for p in prior["mu"]], [p.sigma for p in prior["mu"]], *scales,
            *[b.index for b in d.blocks], d.window, counts.ravel()]).astype(float)
        shapes = d.shapes()  # expanded: each z with all its levels
        return Kernel(_kernel_groups, user_data, d.n_free(), d.free_names(), shapes)

    def prior_draws(self, model: pm.Model, spec: ModelSpec, size: tuple[int, ...],
                    rng: np.random.Generator) -> dict[str, np.ndarray]:
        d = spec_design(spec)
        mu = spec.priors["mu"]
        out = {"mu": rng.normal([p.mu for p in mu], [p.sigma for p in mu], (*size, 3))}
        for name, shape in zip(d.free_names()[1:], d.shapes()[1:], strict=True):
            if name == "z_window":
                out[name] = rng.standard_normal((*size, *shape))
            elif len(shape) == 2:
                # iid N(0, 1) minus its mean over the levels is exactly ZeroSumNormal(1)
                z = rng.standard_normal((*size, *shape))
                out[name] = z - z.mean(-1, keepdims=True)
            else:
                scale = [p.sigma for p in spec.priors["tau" if name == "tau" else "sigma"]]
                out[name] = np.abs(rng.normal(0.0, scale, (*size, 3)))
        for b in d.blocks:
            if b.centred:  # the effect is sigma times a ZeroSumNormal(1)
                out[b.free] = out[b.free] * out[f"sigma_{b.name}"][..., None]
        return out

    def log_likelihood(self, draws: xr.Dataset, observed: xr.DataArray,
                       spec: ModelSpec) -> xr.DataArray:
        return case_log_likelihood(draws["theta"], observed)

    def prior_units(self, spec: ModelSpec) -> Mapping[str, Sequence[str]]:
        return {name: list(RATES) for name in spec.priors}

    def describe(self, spec: ModelSpec) -> str:
        d = spec_design(spec)
        parts = [f"an effect per level of {', '.join(b.name for b in d.blocks)}"
                 if d.blocks else "no grouping factors (complete pooling)"]
        if d.walk:
            parts.append(f"a Gaussian random walk over {len(d.windows)} time windows")
        form = ("centred (effect ~ ZeroSumNormal(σ))"
                if d.blocks and d.blocks[0].centred
                else "non-centred (effect = σ z, z ~ ZeroSumNormal(1))")
        return (
            f"Hierarchical logit-normal model of prevalence, TPR and TNR over "
            f"{len(d.units)} {d.unit}(s): logit rate = global mean μ ~ Normal + "
            f"{' + '.join(parts)}; each factor's effects sum to zero over its levels, "
            f"{form}, σ ~ HalfNormal; θ = (TPR φ, (1 − TPR) φ, (1 − TNR)(1 − φ), "
            "TNR (1 − φ)) and each slice's counts ~ Multinomial(n, θ). Small slices are "
            "shrunk toward the mean of their levels.")


register_family(Groups(groups))
