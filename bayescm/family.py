r"""A model family is one unit: what ``fit`` and everything after it need to know.

A *family* is the builder of a kind of model plus the knowledge that the generic
machinery asks for, so that nothing outside :mod:`bayescm.models` names a family:

* which free parameters convergence is judged on (:meth:`Family.parameters`);
* how raw draws are completed with derived quantities, above all the confusion
  probabilities ``theta`` on dim ``cell`` from which every metric is computed
  (:meth:`Family.complete`);
* its conjugate posterior, when it has one, for ``sampler="exact"``
  (:meth:`Family.conjugate`), and the same without building the model
  (:meth:`Family.closed_form`: no PyMC, for the light exact path of the CLI), and
  the Beta posteriors of its rates from plain count arrays (:meth:`Family.rate_posteriors`);
* its compiled density for nutpie, if any (:meth:`Family.kernel`, :meth:`Family.kernel_form`);
* i.i.d. prior draws (:meth:`Family.prior_draws`) and replicated data
  (:meth:`Family.predictive`);
* the log-likelihood of each case, for ``az.loo`` and ``az.compare``
  (:meth:`Family.log_likelihood`);
* its JAGS twin (:attr:`Family.jags`), and how to rebuild the model from a saved
  fit (:meth:`Family.rebuild`).

A builder returns a plain ``pm.Model`` and :func:`attach`\ es a :class:`ModelSpec`
to it (weakly keyed by the model).  Adding a family is: a subclass of
:class:`Family`, a builder that attaches its spec, and one call of
:func:`register_family` -- from inside or outside the package.

Examples
--------
A single Beta-binomial rate, defined outside bayescm:

>>> import numpy as np, pymc as pm
>>> import bayescm as bcm
>>> from bayescm.models import Conjugate, Family, ModelSpec, attach, register_family
>>> class Rate(Family):
...     name = "doc_rate"
...     def parameters(self, spec):
...         return ["rate"]
...     def conjugate(self, model, spec):
...         k, n = spec.data
...         return Conjugate(betas={"rate": (np.array(1.0 + k), np.array(1.0 + n - k))})
>>> def rate_model(k, n):
...     with pm.Model() as model:
...         r = pm.Beta("rate", 1, 1)
...         pm.Binomial("k", n=n, p=r, observed=k)
...     return attach(model, ModelSpec("doc_rate", (k, n), {}, options={"k": k, "n": n}))
>>> _ = register_family(Rate(rate_model), replace=True)
>>> idata = bcm.fit(rate_model(7, 10), sampler="exact", random_seed=1)
>>> round(float(idata.posterior["rate"].mean()), 2)   # Beta(8, 4): 2/3
0.67
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import xarray as xr

from bayescm import stats

if TYPE_CHECKING:
    import pymc as pm

    from bayescm.models.kernel_form import KernelForm

__all__ = ["ClosedForm", "Conjugate", "Family", "JagsTwin", "Kernel", "ModelSpec", "attach",
           "default_family", "default_predictive", "families", "family_of", "get_family",
           "is_unmodified", "register_family", "spec_of"]


@dataclass(frozen=True)
class ModelSpec:
    """What a builder made: family, data, priors and the options to rebuild it.

    Attributes
    ----------
    family
        Registered family name.
    data
        The data object the model was built from (a ConfusionMatrix, an
        AgreementTable, ...).
    priors
        ``name -> per-unit priors`` as the builder resolved them.
    var_names
        The model's variable names when built (filled in by :func:`attach`); a
        model with other variables has been extended and loses the family's
        shortcuts (exact draws, compiled kernel, prior draws).
    options
        The builder's keyword arguments other than data and priors, JSON-able:
        what :meth:`Family.rebuild` passes back.
    extra
        Anything else the family keeps for itself (not saved).
    """

    family: str
    data: Any
    priors: Mapping[str, Sequence[Any]]
    var_names: frozenset[str] = frozenset()
    options: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Conjugate:
    """A closed-form posterior made of independent Betas and Dirichlets.

    Attributes
    ----------
    betas
        ``name -> (a, b)``, arrays of the parameter's unit shape.
    dirichlets
        ``name -> alpha``, the categories on the last axis.
    fixed
        ``name -> value`` of parameters fixed by design (not drawn).
    """

    betas: Mapping[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    dirichlets: Mapping[str, np.ndarray] = field(default_factory=dict)
    fixed: Mapping[str, np.ndarray] = field(default_factory=dict)

    def draw(self, rng: np.random.Generator, size: tuple[int, ...]) -> dict[str, np.ndarray]:
        """I.i.d. draws, arrays of shape ``size + unit shape`` (fixed values excluded)."""
        return stats.draw_conjugate(rng, size, self.betas, self.dirichlets)


@dataclass(frozen=True)
class ClosedForm:
    """A model's exact posterior known without building the model (no PyMC).

    Attributes
    ----------
    spec
        The :class:`ModelSpec` the builder would attach (validated data, resolved
        priors, options).
    conjugate
        The posterior, equal to :meth:`Family.conjugate` of the built model.
    dims
        ``name -> dims`` of each parameter's unit shape (what the model's ``dims=``
        say), for every name in ``conjugate``.
    coords
        Coordinates of those dims (and of ``cell``).
    observed
        The observed counts with their dims (the model's ``counts_data``), or None.
    """

    spec: ModelSpec
    conjugate: Conjugate
    dims: Mapping[str, tuple[str, ...]]
    coords: Mapping[str, Sequence[Any]]
    observed: xr.DataArray | None = None


@dataclass(frozen=True)
class Kernel:
    """A compiled log density for nutpie (numba C callbacks) and its layout.

    ``module`` has numba ``cfunc`` callbacks ``logp`` and ``expand`` with the
    signatures nutpie calls; ``user_data`` is the float64 array they read;
    ``var_names`` and ``shapes`` describe the expanded draws in order.
    ``low_rank_mass``: nutpie adapts a low-rank-modified mass matrix, for densities
    whose parameters trade off strongly (a latent prevalence against raters' rows).
    """

    module: Any
    user_data: np.ndarray
    n_dim: int
    var_names: Sequence[str]
    shapes: Sequence[tuple[int, ...]]
    low_rank_mass: bool = False


@dataclass(frozen=True)
class JagsTwin:
    """A family's JAGS model: the script (package data) and how to feed and read it.

    ``data(model, spec)`` returns the JAGS data; ``inits(rng, spec, chains)`` one
    mapping of initial values per chain; ``monitors(spec)`` the nodes to record;
    ``posterior(raw, model, spec)`` turns ``{node[index]: (chains, draws)}`` into a
    Dataset with bayescm's names and dims.
    """

    script: str
    data: Callable[[Any, ModelSpec], Mapping[str, Any]]
    inits: Callable[[np.random.Generator, ModelSpec, int], list[Mapping[str, Any]]]
    monitors: Callable[[ModelSpec], list[str]]
    posterior: Callable[[Mapping[str, np.ndarray], Any, ModelSpec], xr.Dataset]


class Family:
    """Base class of a model family: override what your family has.

    Parameters
    ----------
    builder
        The function that builds the family's ``pm.Model`` from
        ``(data, *, priors=..., **options)``; used by :meth:`rebuild`.

    Notes
    -----
    Every method receives the model's :class:`ModelSpec`.  The defaults describe a
    family with no shortcuts: every free variable is a parameter, nothing is
    derived, no closed form, no compiled kernel, no prior draws, and replicated
    data (when the model has ``theta`` on dim ``cell`` and observed
    ``counts_data``) are multinomial draws from ``theta``.
    """

    name: ClassVar[str] = ""
    #: Default priors by parameter name (visible through bayescm.priors.defaults).
    default_priors: ClassVar[Mapping[str, Any]] = {}
    #: The family's JAGS twin, if it has one.
    jags: ClassVar[JagsTwin | None] = None
    #: Whether ``fit`` adds the ``log_likelihood`` group unasked (latent-class models:
    #: their users choose between dependence structures with ``az.compare``).
    log_likelihood_by_default: ClassVar[bool] = False
    #: NUTS target acceptance rate ``fit`` uses unless told (None: 0.9); hierarchical
    #: families whose scales make the posterior curved ask for more.
    target_accept: ClassVar[float | None] = None
    #: Whether :meth:`predictive` replicates the observed data (fit's memory bound).
    replicates_data: ClassVar[bool] = True

    def __init__(self, builder: Callable[..., Any]) -> None:
        if not self.name:
            raise ValueError(f"{type(self).__name__} needs a class attribute name = '...'.")
        self.builder = builder

    def __repr__(self) -> str:
        return f"<model family {self.name!r}>"

    def nuts_target_accept(self, spec: ModelSpec) -> float | None:
        """The NUTS target acceptance rate ``fit`` uses for this model unless told
        (None: 0.9): :attr:`target_accept`, or per model where a family's routes differ
        in curvature."""
        return self.target_accept

    # -- what fit asks -------------------------------------------------------------
    def parameters(self, spec: ModelSpec) -> list[str]:
        """Free parameters that convergence is judged on (default: none named; fit
        then uses every free variable)."""
        return []

    def complete(self, ds: xr.Dataset, spec: ModelSpec,
                 conjugate: Conjugate | None = None) -> xr.Dataset:
        """Add derived quantities (``theta`` on dim ``cell``) to labelled draws."""
        return ds

    def conjugate(self, model: pm.Model, spec: ModelSpec) -> Conjugate | None:
        """The closed-form posterior of an unmodified model, or None."""
        return None

    def closed_form(self, data: Any, priors: Mapping[str, Any] | None = None,
                    options: Mapping[str, Any] | None = None) -> ClosedForm | None:
        """The exact posterior of ``builder(data, priors=priors, **options)`` without
        building it (no PyMC), or None when the family has no closed form.

        Validates as the builder does; the draws of ``fit(sampler="exact")`` on the
        built model and of :func:`bayescm.inference.fit_closed_form` are the same.
        """
        return None

    def rate_posteriors(self, cells: Mapping[str, Any],
                        priors: Mapping[str, tuple[Any, Any]] | None = None
                        ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        r"""The Beta posterior of each rate from counts by named cell, over plain arrays.

        For a family whose rates have independent conjugate Beta posteriors: a rate
        :math:`r` with prior :math:`\mathrm{Beta}(a_r, b_r)` whose successes are the
        cells :math:`S_r` and failures the cells :math:`F_r` has the posterior

        .. math::

            r \mid D \sim \mathrm{Beta}\Bigl(a_r + \sum_{c \in S_r} n_c,\
                                             b_r + \sum_{c \in F_r} n_c\Bigr).

        (three-Beta: :math:`\phi` from :math:`tp + fn` and :math:`fp + tn`, TPR from
        :math:`tp` and :math:`fn`, TNR from :math:`tn` and :math:`fp`.)  No model and
        no checks: for vectorised work on simulated or batched counts;
        :meth:`closed_form` is the checked route for a data object.

        Parameters
        ----------
        cells
            ``cell name -> counts``, arrays of any shapes that broadcast together.
        priors
            ``rate -> (a, b)`` replacing the family's default prior of that rate;
            each broadcasts against the counts.

        Returns
        -------
        dict
            ``rate -> (a, b)``, float arrays, in the order in which the family draws
            its rates (seeded draws of :func:`bayescm.stats.draw_conjugate` depend on
            it).

        Raises
        ------
        NotImplementedError
            When the family has no such posterior (the default).
        KeyError
            For a missing cell or an unknown rate.

        Examples
        --------
        >>> from bayescm.family import default_family
        >>> post = default_family("binary").rate_posteriors(
        ...     {"tp": 26, "fn": 0, "fp": 2, "tn": 6})
        >>> {rate: (float(a), float(b)) for rate, (a, b) in post.items()}
        {'prevalence': (27.0, 9.0), 'tpr': (27.0, 1.0), 'tnr': (7.0, 3.0)}
        """
        raise NotImplementedError(f"The model family {self.name!r} has no Beta posteriors of "
                                  "rates from counts by cell.")

    def kernel(self, model: pm.Model, spec: ModelSpec,
               conjugate: Conjugate | None = None) -> Kernel | None:
        """A compiled density of an unmodified model for nutpie, or None."""
        return None

    def kernel_form(self, data: Any, priors: Mapping[str, Any] | None = None,
                    options: Mapping[str, Any] | None = None) -> KernelForm | None:
        """:meth:`kernel` of ``builder(data, priors=priors, **options)`` without PyMC, or None."""
        return None

    def prior_draws(self, model: pm.Model, spec: ModelSpec, size: tuple[int, ...],
                    rng: np.random.Generator) -> dict[str, np.ndarray] | None:
        """I.i.d. prior draws of an unmodified model (None: none, e.g. improper)."""
        return None

    def predictive(self, draws: xr.Dataset, n: xr.DataArray, rng: np.random.Generator,
                   spec: ModelSpec | None) -> tuple[xr.DataArray, str, bool] | None:
        """Replicated data for ``n`` cases per unit.

        Returns ``(counts, what, with_metrics)``: the replicated counts with sample
        dims first, a phrase naming what they are, and whether the registry's
        metrics apply to them; or None when the family has no replicated data.
        """
        return default_predictive(draws, n, rng)

    def log_likelihood(self, draws: xr.Dataset, observed: xr.DataArray,
                       spec: ModelSpec) -> xr.DataArray | None:
        """The log-likelihood of every case at every draw (dims chain, draw, ``case``).

        ``observed`` is the model's observed counts (``observed_data["counts"]``);
        one entry per case, so that ``az.loo`` leaves one case out.  Default: None
        (no pointwise log-likelihood).  :func:`bayescm.models.case_log_likelihood` does the
        expansion for count data:
        ``case_log_likelihood(draws["theta"], observed)``.
        """
        return None

    def attrs(self, spec: ModelSpec) -> dict[str, Any]:
        """Extra top-level attributes of a fit (priors are recorded by fit)."""
        return {}

    def describe(self, spec: ModelSpec) -> str:
        """One paragraph, plain text: the model, its math and its assumptions (for reports).

        ``spec`` may come from a saved record (:func:`bayescm.inference.persist.read_spec`): data,
        priors and options, no ``extra``.  Default: the builder's summary line.
        """
        doc = (self.builder.__doc__ or "").strip()
        line = doc.splitlines()[0] if doc else f"The {self.name} model."
        rest = line.removeprefix("Build ")
        return rest[:1].upper() + rest[1:]

    def prior_units(self, spec: ModelSpec) -> Mapping[str, Sequence[str]] | None:
        """Unit names per prior when they are not the classifiers (for the record)."""
        return None

    def prior_record(self, spec: ModelSpec) -> dict[str, dict[str, Any]]:
        """``name -> {unit: prior}``: the priors used, by the unit each applies to.

        Units are :meth:`prior_units` where given, else the data's classifiers, else
        positions ``"0", "1", ...``.
        """
        given = dict(self.prior_units(spec) or {})
        classifiers = [str(c) for c in getattr(spec.data, "classifiers", ())]
        out = {}
        for name, per in spec.priors.items():
            units = [str(u) for u in given.get(name, classifiers)]
            if len(units) != len(per):
                units = [str(i) for i in range(len(per))]
            out[name] = dict(zip(units, per, strict=True))
        return out

    # -- saving and rebuilding -----------------------------------------------------
    def encode_data(self, data: Any) -> Any:
        """The data as JSON-able values (default: the data object's ``to_dict()``)."""
        if hasattr(data, "to_dict"):
            return data.to_dict()
        return data

    def decode_data(self, payload: Any) -> Any:
        """Inverse of :meth:`encode_data`."""
        return payload

    def rebuild(self, data: Any, priors: Mapping[str, Any], options: Mapping[str, Any]
                ) -> pm.Model:
        """The unsampled model again, from saved data, priors and options."""
        kwargs = dict(options)
        if priors:
            kwargs["priors"] = dict(priors)
        return self.builder(data, **kwargs)


def default_predictive(draws: xr.Dataset, n: xr.DataArray, rng: np.random.Generator
                       ) -> tuple[xr.DataArray, str, bool] | None:
    """Multinomial(n, theta) confusion matrices, when the draws have ``theta`` on ``cell``."""
    if "theta" not in draws or "cell" not in draws["theta"].dims:
        return None
    theta = draws["theta"].transpose(*stats.SAMPLE_DIMS, ..., "cell")
    size = n.broadcast_like(theta.isel(cell=0, drop=True)).transpose(*theta.dims[:-1])
    counts = stats.multinomial(rng, size.values.astype(np.int64), theta.values)
    da = xr.DataArray(counts, dims=theta.dims, coords=theta.coords, name="counts")
    return da, "confusion matrices (and their plug-in metrics)", True


# -- the registry -------------------------------------------------------------------
_FAMILIES: dict[str, Family] = {}
_SPECS: weakref.WeakKeyDictionary[Any, ModelSpec] = weakref.WeakKeyDictionary()


def register_family(family: Family, *, replace: bool = False) -> Family:
    """Make ``family`` known to ``fit``, the draws, ``save``/``rebuild`` and the priors.

    Raises
    ------
    ValueError
        When another family has that name (pass ``replace=True`` to replace it).
    """
    if not isinstance(family, Family):
        raise TypeError(f"register_family needs a bayescm.models.Family, got "
                        f"{type(family).__name__}.")
    if family.name in _FAMILIES and not replace:
        raise ValueError(f"A model family named {family.name!r} is registered already; "
                         "choose another name or pass replace=True.")
    _FAMILIES[family.name] = family
    return family


def get_family(name: str) -> Family:
    """The registered family ``name`` (a KeyError listing the known ones)."""
    try:
        return _FAMILIES[name]
    except KeyError:
        raise KeyError(f"No model family {name!r} is registered; known: "
                       f"{sorted(_FAMILIES)}.") from None


DEFAULT_FAMILIES: dict[str, str] = {"binary": "three_beta", "multiclass": "multiclass_rows"}
"""The family a bare confusion matrix gets, by the kind of its table (binary cells or
K×K): Tötsch & Hoffmann's three-Beta model and its K-class generalisation, flat priors."""


def default_family(kind: str) -> Family:
    """The family that analyses a bare matrix of ``kind`` (``"binary"``, ``"multiclass"``)."""
    return get_family(DEFAULT_FAMILIES[kind])


def families() -> dict[str, Family]:
    """The registered families by name."""
    return dict(_FAMILIES)


def attach(model: Any, spec: ModelSpec) -> Any:
    """Record ``spec`` for ``model`` (what a builder does last); returns ``model``.

    ``spec.var_names`` is set to the model's variables now, so that later
    additions by the user are detected.
    """
    if spec.family not in _FAMILIES:
        raise KeyError(f"Register the family {spec.family!r} (register_family) before "
                       "attaching specs of it.")
    spec = spec if spec.var_names else replace(spec, var_names=frozenset(model.named_vars))
    _SPECS[model] = spec
    return model


def spec_of(model: Any) -> ModelSpec | None:
    """The builder's record of ``model``, or None for models built by hand."""
    try:
        return _SPECS.get(model)
    except TypeError:  # not weak-referenceable: not a model
        return None


def is_unmodified(model: Any) -> bool:
    """True when ``model`` still has exactly the variables its builder created."""
    spec = spec_of(model)
    return spec is not None and frozenset(model.named_vars) == spec.var_names


def family_of(model: Any) -> Family | None:
    """The family of a model built by a registered builder, else None."""
    spec = spec_of(model)
    return None if spec is None else _FAMILIES.get(spec.family)
