r"""The K-class generalisation of Tötsch's three-Beta model: prevalence and rows.

.. math::

    \pi \sim \mathrm{Dirichlet}(\alpha),\qquad
    \rho_a \sim \mathrm{Dirichlet}(\beta_{a\cdot})\quad (a = 1, \dots, K)

    \theta_{ap} = \pi_a\, \rho_{ap},\qquad
    C \sim \mathrm{Multinomial}(N, \theta)\ \text{over the } K^2 \text{ cells}

``π`` is the class prevalence, ``ρ_a`` the predicted-class probabilities of actual
class ``a`` (its recall is ``ρ_aa``).  At K = 2 this is three_beta: the rows are
(TPR, 1 − TPR) and (1 − TNR, TNR), Dirichlets of two categories are Betas.  The row
priors :math:`\beta` form a K×K matrix (row ``a`` for actual class ``a``); a single
Dirichlet of K concentrations is the same for every row.

The defaults carry the same information at every K: two pseudo-cases on the class mix
and two on each row, Dirichlet(2/K, ..., 2/K) (:func:`default_priors`), which is
three_beta's Beta(1, 1) at K = 2.  A prior heavier than a quarter of a class's test
cases draws a :class:`~bayescm.models.multiclass_rows.weight.PriorWeightWarning`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import xarray as xr

from bayescm.data.multiclass import MulticlassConfusionMatrix
from bayescm.family import ClosedForm, Conjugate, Family, Kernel, ModelSpec, attach, register_family
from bayescm.models._dirichlet import dirichlet
from bayescm.models._loglik import case_log_likelihood
from bayescm.models._spec import check_proper, conjugate_kernel, counts_data, data_value
from bayescm.models.multiclass_rows.twin import ROWS_TWIN
from bayescm.models.multiclass_rows.weight import Weight, check_prior_weight
from bayescm.priors import Dirichlet, PriorError
from bayescm.priors import resolve as resolve_priors
from bayescm.stats import SAMPLE_DIMS, multinomial

if TYPE_CHECKING:
    import pymc as pm

DIMS = ("classifier", "actual", "predicted")
PAIR = "pair"
"""The flat dim of the K² cells (actual-major) on which the multinomial is written."""


def as_multiclass(data: Any) -> MulticlassConfusionMatrix:
    """Accept a MulticlassConfusionMatrix, or what its constructor accepts."""
    if isinstance(data, MulticlassConfusionMatrix):
        return data
    if hasattr(data, "tp") and hasattr(data, "tn"):
        raise TypeError("This is a binary ConfusionMatrix; convert it with "
                        "bcm.MulticlassConfusionMatrix.from_binary(cm) or use a binary model.")
    if isinstance(data, (str, bytes)):
        raise TypeError(
            f"cm must be a MulticlassConfusionMatrix or a K×K array of counts (rows actual, "
            f"columns predicted), not the string {data!r}; build one with "
            "bcm.MulticlassConfusionMatrix.from_predictions(y_true, y_pred) or .from_frame."
        )
    return MulticlassConfusionMatrix(data)


PSEUDO_CASES = 2.0
"""Pseudo-cases of each default K-class prior (the class mix, every row): Beta(1, 1)'s two."""


def default_priors(k: int) -> dict[str, Dirichlet]:
    """The defaults at K classes: Dirichlet(2/K, ..., 2/K) for the prevalence and every row.

    Two pseudo-cases each, whatever K, as the binary default Beta(1, 1); at K = 2 they
    are three_beta's defaults.  (The flat Dirichlet(1, ..., 1) would add K.)

    >>> default_priors(4)
    {'prevalence': Dirichlet(0.5, 0.5, 0.5, 0.5), 'rows': Dirichlet(0.5, 0.5, 0.5, 0.5)}
    """
    return {name: Dirichlet.weighted(k, PSEUDO_CASES) for name in ("prevalence", "rows")}


def pair_coords(labels: Sequence[Hashable]) -> list[str]:
    """Names of the K² cells on the flat dim, ``"actual|predicted"``, actual-major."""
    return [f"{a}|{p}" for a in labels for p in labels]


def model_coords(cm: MulticlassConfusionMatrix) -> dict[str, list]:
    return {**cm.coords, PAIR: pair_coords(cm.labels)}


def observed_likelihood(counts: Any, theta: Any, k: int) -> None:
    """``counts ~ Multinomial(N, theta)`` over the K² cells of each classifier."""
    import pymc as pm

    flat = counts.reshape((counts.shape[0], k * k))
    pm.Multinomial("counts", n=flat.sum(axis=-1), p=theta.reshape((theta.shape[0], k * k)),
                   observed=flat, dims=("classifier", PAIR))


def dirichlet_draws(alpha: np.ndarray, size: tuple[int, ...], rng: np.random.Generator
                    ) -> np.ndarray | None:
    """I.i.d. Dirichlet draws along the last axis (None for an improper prior)."""
    if np.any(alpha <= 0):
        return None
    return dirichlet(rng, alpha, (*size, *alpha.shape))


def largest_remainder(n: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Integers summing to ``n`` closest to ``n * p`` (Hamilton's method), last axis."""
    n = np.asarray(n, dtype=np.int64)
    exact = n[..., None] * p
    out = np.floor(exact).astype(np.int64)
    left = n - out.sum(axis=-1)
    order = np.argsort(-(exact - out), axis=-1, kind="stable")
    ranks = np.argsort(order, axis=-1)
    return out + (ranks < left[..., None])


def multiclass_rows(cm: Any, *, priors: Mapping[str, Any] | None = None,
                    prevalence: Sequence[float] | None = None) -> pm.Model:
    r"""Build the prevalence-and-rows model of K-class confusion matrices.

    Parameters
    ----------
    cm
        A :class:`bayescm.MulticlassConfusionMatrix` (one matrix or a batch along
        dim ``classifier``).
    priors
        ``"prevalence"``: a Dirichlet of K concentrations (class order); ``"rows"``:
        a Dirichlet of K concentrations (predicted-class order) for every actual
        class's row, or a K×K matrix Dirichlet whose row ``a`` is actual class
        ``a``'s (a nested sequence or array in the data's class order, or a
        DataFrame or :meth:`~bayescm.priors.Dirichlet.diagonal` matched by label).
        Each for all classifiers or as ``{classifier: prior}``.  Defaults:
        Dirichlet(2/K, ..., 2/K) for both (:func:`default_priors`): two pseudo-cases on
        the class mix and on each row at every K, Beta(1, 1) at K = 2.  A prior whose
        pseudo-cases exceed 25 % of a class's test cases (of all N for the prevalence)
        draws a :class:`~bayescm.models.multiclass_rows.weight.PriorWeightWarning`
        naming a lighter prior.
    prevalence
        K class prevalences summing to 1 fix the class balance of a designed test
        set; then only the rows are inferred.

    Returns
    -------
    pymc.Model
        Unsampled.  Free ``prevalence`` (dims ``classifier, actual``) and ``rows``
        (dims ``classifier, actual, predicted``); deterministic ``theta`` (dims
        ``classifier, actual, predicted``); observed ``counts`` on the flat dim
        ``pair``; pm.Data ``prevalence_alpha``, ``rows_alpha``, ``counts_data``.

    Notes
    -----
    Conjugate: :math:`\pi \mid C \sim \mathrm{Dirichlet}(\alpha + r)` with row sums
    :math:`r`, :math:`\rho_a \mid C \sim \mathrm{Dirichlet}(\beta_{a\cdot} + C_{a\cdot})`,
    independently; so each class's recall is
    :math:`\mathrm{Beta}(\beta_{aa} + C_{aa}, \sum_{p \ne a} \beta_{ap} + C_{ap})`.

    Examples
    --------
    >>> import bayescm as bcm
    >>> mc = bcm.MulticlassConfusionMatrix([[5, 1, 0], [2, 7, 1], [0, 3, 9]],
    ...                                    labels=["cat", "dog", "bird"])
    >>> [v.name for v in bcm.models.multiclass_rows(mc).free_RVs]
    ['prevalence', 'rows']
    >>> diag = bcm.priors.Dirichlet.diagonal(["cat", "dog", "bird"], correct=8, wrong=1)
    >>> m = bcm.models.multiclass_rows(mc, priors={"rows": diag})
    >>> m["rows_alpha"].get_value()[0].tolist()
    [[8.0, 1.0, 1.0], [1.0, 8.0, 1.0], [1.0, 1.0, 8.0]]
    """
    import pymc as pm  # PyMC is imported when a model is built, not with bayescm

    spec = _specify(cm, priors, prevalence)
    cm, resolved, fixed = spec.data, spec.priors, spec.options["prevalence"]
    k = cm.n_classes
    with pm.Model(coords=model_coords(cm)) as model:
        counts = counts_data(cm.counts, DIMS)
        if fixed is None:
            pi = _dirichlet("prevalence", resolved["prevalence"], DIMS[:2], None)
        else:
            pi = pm.Data("prevalence", np.tile(np.asarray(fixed, float), (len(cm), 1)),
                         dims=DIMS[:2])
        rows = _dirichlet("rows", resolved["rows"], DIMS, k)
        theta = pm.Deterministic("theta", pi[..., None] * rows, dims=DIMS)
        observed_likelihood(counts, theta, k)
    return attach(model, spec)


def row_concentrations(per: Sequence[Dirichlet], k: int) -> np.ndarray:
    """``(classifiers, K, K)`` row concentrations: a 1-d prior repeated for every row."""
    return np.stack([np.broadcast_to(np.asarray(p.alpha, dtype=float), (k, k)) for p in per])


def _dirichlet(name: str, per: Sequence[Dirichlet], dims: tuple[str, ...], rows: int | None):
    """A Dirichlet whose concentrations are ``{name}_alpha`` (Haldane-type: a potential)."""
    import pymc as pm
    import pytensor.tensor as pt

    alpha = (np.array([p.alpha for p in per], dtype=float) if rows is None
             else row_concentrations(per, rows))
    a = pm.Data(f"{name}_alpha", alpha, dims=dims)
    if all(p.proper for p in per):
        return pm.Dirichlet(name, a=a, dims=dims)
    x = pm.Dirichlet(name, a=pt.ones_like(a), dims=dims)
    pm.Potential(f"{name}_prior", pt.sum((a - 1) * pt.log(x)))
    return x


def _specify(cm: Any, priors: Mapping[str, Any] | None,
             prevalence: Sequence[float] | None = None) -> ModelSpec:
    """Validated data, resolved priors and options: the builder's record (no PyMC)."""
    cm = as_multiclass(cm)
    k = cm.n_classes
    fixed = None
    if prevalence is not None:
        values = np.asarray(prevalence, dtype=float).ravel()
        if values.size != k or not np.all(np.isfinite(values)) or np.any(values <= 0) \
                or abs(values.sum() - 1) > 1e-9:
            raise ValueError(f"prevalence must be {k} positive numbers summing to 1 (one per "
                             f"class {list(cm.labels)}), got {prevalence!r}.")
        fixed = values.tolist()
        if priors and "prevalence" in priors:
            raise PriorError("A fixed prevalence takes no prior: drop priors['prevalence'].")
    base = default_priors(k)
    labels = [str(x) for x in cm.labels]
    resolved = resolve_priors("multiclass_rows", priors, cm.classifiers, base=base,
                              matrices={"rows": labels})
    if fixed is None:
        check_proper("prevalence", resolved["prevalence"], cm.counts.sum(axis=2),
                     cm.classifiers, labels)
    else:
        del resolved["prevalence"]
    beta = row_concentrations(resolved["rows"], k)
    for a, label in enumerate(labels):
        # each row's own concentrations with that row's counts
        check_proper(f"rows[{label}]", [Dirichlet(b) for b in beta[:, a]], cm.counts[:, a, :],
                     cm.classifiers, labels)
    weights = [Weight("rows", k, per_class=beta.sum(axis=2))]
    if fixed is None:
        weights.append(Weight("prevalence", k, total=np.array(
            [np.sum(p.alpha) for p in resolved["prevalence"]], dtype=float)))
    check_prior_weight("multiclass_rows", cm.counts, labels, cm.classifiers, weights)
    return ModelSpec("multiclass_rows", cm, resolved, options={"prevalence": fixed})


def _posterior(counts: np.ndarray, alpha: np.ndarray | None, beta: np.ndarray,
               fixed: np.ndarray | None) -> Conjugate:
    """Dirichlet(α + row sums) and Dirichlet(β_a + row a); ``counts`` (C, K, K)."""
    dirichlets = {}
    if alpha is not None:
        dirichlets["prevalence"] = (alpha + counts.sum(axis=2)).astype(float)
    dirichlets["rows"] = (beta + counts).astype(float)
    return Conjugate(dirichlets=dirichlets,
                     fixed={} if fixed is None else {"prevalence": fixed})


def replicate(theta: xr.DataArray, n: xr.DataArray, rng: np.random.Generator
              ) -> tuple[xr.DataArray, str, bool]:
    """K×K tables ~ Multinomial(n, theta) over the K² cells (a family's ``predictive``)."""
    theta = theta.transpose(*SAMPLE_DIMS, *DIMS)
    shape = theta.shape
    flat = theta.values.reshape(*shape[:-2], -1)
    counts = multinomial(rng, n.values.astype(np.int64), flat).reshape(shape)
    return labelled_tables(counts, theta)


def labelled_tables(counts: np.ndarray, theta: xr.DataArray) -> tuple[xr.DataArray, str, bool]:
    da = xr.DataArray(counts, dims=theta.dims, coords=theta.coords, name="counts")
    return da, "K×K confusion matrices (and their plug-in metrics)", True


SHOWN_DEFAULTS = {name: replace(prior, rationale="Two pseudo-cases at every K, as Beta(1, 1): "
                                "Dirichlet(2/K, ..., 2/K), shown at K = 2")
                  for name, prior in default_priors(2).items()}
"""The registered defaults (``bcm.priors.defaults("multiclass_rows")``): K = 2's."""


class MulticlassFamily(Family):
    """What the multiclass families share: data records, kernel, replicated tables."""

    def kernel(self, model: pm.Model, spec: ModelSpec,
               conjugate: Conjugate | None = None) -> Kernel:
        # Dirichlets only, in the order of the free variables
        return conjugate_kernel(conjugate or self.conjugate(model, spec))

    def log_likelihood(self, draws: xr.Dataset, observed: xr.DataArray,
                       spec: ModelSpec) -> xr.DataArray:
        # each case: the log of its cell's probability (counts ~ Multinomial(N, theta))
        return case_log_likelihood(draws["theta"], observed)

    def predictive(self, draws: xr.Dataset, n: xr.DataArray, rng: np.random.Generator,
                   spec: ModelSpec | None):
        return replicate(draws["theta"], n, rng)

    def encode_data(self, data: MulticlassConfusionMatrix) -> dict:
        return data.to_dict()

    def decode_data(self, payload: Any) -> MulticlassConfusionMatrix:
        return MulticlassConfusionMatrix.from_dict(payload)


class MulticlassRows(MulticlassFamily):
    r"""The prevalence-and-rows family: independent Dirichlet posteriors."""

    name = "multiclass_rows"
    #: Dirichlet(2/K, ..., 2/K) for the prevalence and every row: two pseudo-cases each
    #: at every K (:func:`default_priors`).  Shown here at K = 2, where it is Beta(1, 1);
    #: the builder sizes it to the data's K (Dirichlet(0.2, ...) at K = 10).
    default_priors: ClassVar[dict[str, Any]] = SHOWN_DEFAULTS
    jags = ROWS_TWIN

    @staticmethod
    def _fixed(spec: ModelSpec) -> list[float] | None:
        return spec.options.get("prevalence")

    def parameters(self, spec: ModelSpec) -> list[str]:
        return ["rows"] + ([] if self._fixed(spec) is not None else ["prevalence"])

    def conjugate(self, model: pm.Model, spec: ModelSpec) -> Conjugate:
        fixed = self._fixed(spec) is not None
        return _posterior(
            data_value(model, "counts_data"),
            None if fixed else data_value(model, "prevalence_alpha"),
            data_value(model, "rows_alpha"),
            data_value(model, "prevalence").astype(float) if fixed else None)

    def closed_form(self, data: Any, priors: Mapping[str, Any] | None = None,
                    options: Mapping[str, Any] | None = None) -> ClosedForm:
        spec = _specify(data, priors, **dict(options or {}))
        cm, fixed, k = spec.data, self._fixed(spec), spec.data.n_classes
        alpha = (None if fixed is not None else
                 np.array([p.alpha for p in spec.priors["prevalence"]], dtype=float))
        beta = row_concentrations(spec.priors["rows"], k)
        conj = _posterior(cm.counts, alpha, beta,
                          None if fixed is None else np.tile(np.asarray(fixed), (len(cm), 1)))
        coords = model_coords(cm)
        return ClosedForm(spec, conj, {"prevalence": DIMS[:2], "rows": DIMS}, coords,
                          xr.DataArray(cm.counts, dims=DIMS, coords=cm.coords))

    def complete(self, ds: xr.Dataset, spec: ModelSpec,
                 conjugate: Conjugate | None = None) -> xr.Dataset:
        rows = ds["rows"]
        if "prevalence" not in ds:
            value = (conjugate.fixed["prevalence"] if conjugate is not None
                     and "prevalence" in conjugate.fixed
                     else np.tile(np.asarray(self._fixed(spec)), (rows.sizes["classifier"], 1)))
            shape = rows.shape[:-1]
            ds["prevalence"] = xr.DataArray(np.broadcast_to(value, shape).copy(),
                                            dims=rows.dims[:-1])
        if "theta" not in ds:
            ds["theta"] = (ds["prevalence"] * rows).transpose(*SAMPLE_DIMS, *DIMS)
        return ds

    def prior_draws(self, model: pm.Model, spec: ModelSpec, size: tuple[int, ...],
                    rng: np.random.Generator) -> dict[str, np.ndarray] | None:
        out = {}
        names = ["rows"] if self._fixed(spec) is not None else ["prevalence", "rows"]
        for name in names:
            x = dirichlet_draws(data_value(model, f"{name}_alpha"), size, rng)
            if x is None:
                return None
            out[name] = x
        return out

    def predictive(self, draws: xr.Dataset, n: xr.DataArray, rng: np.random.Generator,
                   spec: ModelSpec | None):
        if spec is None or self._fixed(spec) is None:
            return replicate(draws["theta"], n, rng)
        # a designed test set: the class sizes stay fixed, the rows are replicated
        rows = draws["rows"].transpose(*SAMPLE_DIMS, *DIMS)
        phi = draws["prevalence"].transpose(*SAMPLE_DIMS, *DIMS[:2]).values[0, 0]
        sizes = np.broadcast_to(largest_remainder(n.values, phi), rows.shape[:-1])
        return labelled_tables(multinomial(rng, sizes, rows.values), rows)

    def attrs(self, spec: ModelSpec) -> dict[str, Any]:
        fixed = self._fixed(spec)
        return {} if fixed is None else {"fixed_prevalence": str(fixed)}

register_family(MulticlassRows(multiclass_rows))
