r"""Test-set size for a K-class metric's HDI width (Kruschke's protocol, K classes).

:func:`bayescm.analysis.sample_size` comes here when it is given K-class data: a
pilot :class:`~bayescm.MulticlassConfusionMatrix` (or a multiclass fit), or a
generating truth -- a class-prevalence vector :math:`\pi` and a matrix of
predicted-class probabilities :math:`\rho` (row *k*: what the classifier predicts for
cases of actual class *k*).  For each simulated study and test-set size :math:`N`:

1. the truth is :math:`(\pi, \rho)`, or a draw of :math:`\theta` from the pilot's
   posterior with :math:`\pi_k = \sum_j \theta_{kj}`, :math:`\rho_{kj} =
   \theta_{kj} / \pi_k`;
2. class counts are fixed, :math:`n = ` the largest-remainder rounding of
   :math:`N\pi^*` for a given test-set composition :math:`\pi^*` (``prevalence``),
   or :math:`n \sim \mathrm{Multinomial}(N, \pi)`;
3. row *k* of the table is :math:`C_{k\cdot} \sim \mathrm{Multinomial}(n_k,
   \rho_k)`;
4. the table's exact posterior under the chosen family (``multiclass_rows``: class
   prevalence and rows Dirichlet; ``multiclass_cells``: one Dirichlet over the
   :math:`K^2` cells; flat priors) is drawn ``draws`` times, the metric evaluated on
   every draw of :math:`\theta` and the width of its HDI taken.

Everything is vectorised over the studies (in blocks of bounded memory).  Common
random numbers make the curve smooth in :math:`N`: multinomials are sequences of
binomial inverse CDFs of fixed uniforms, and every :math:`N` reuses one stream of
posterior draws.  The search over :math:`N` is :func:`bayescm.analysis.
sample_size.result.search`, as for binary metrics.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats

from bayescm import idata as idata_mod
from bayescm.analysis.prevalence_multiclass import class_shares
from bayescm.analysis.sample_size.result import (
    SampleSizePlan,
    check_goal,
    grid,
    positive_int,
    search,
)
from bayescm.data.multiclass import MulticlassConfusionMatrix, align_predicted
from bayescm.family import Family, default_family, families, get_family
from bayescm.inference import draws as draws_mod
from bayescm.metrics import MulticlassMetric, evaluate_multiclass, get_multiclass
from bayescm.models import PriorWeightWarning
from bayescm.models.multiclass_rows.model import largest_remainder
from bayescm.stats import SAMPLE_DIMS, check_hdi_prob, hdi

__all__ = ["plan_multiclass"]

_CHUNK = 2**21  # posterior cell draws held in memory at once
_U_MAX = 1 - 2.0**-53  # a uniform of exactly 1 would put n cases in a zero-probability cell


def plan_multiclass(
    target_width: float,
    *,
    metric: str | MulticlassMetric = "acc",
    pilot: Any = None,
    prevalence: Any = None,
    rows: Any = None,
    label: Hashable | None = None,
    model: Any = None,
    hdi_prob: float = 0.95,
    assurance: float = 0.95,
    n_grid: Sequence[int] | np.ndarray | None = None,
    n_sims: int | None = None,
    draws: int | None = None,
    random_seed: int | np.random.Generator | None = None,
) -> SampleSizePlan:
    """The K-class plan of :func:`bayescm.analysis.sample_size` (same arguments)."""
    m = get_multiclass(metric)
    check_hdi_prob(hdi_prob)
    check_goal(target_width, m.bounds[1] - m.bounds[0], m.key, assurance)
    if (pilot is None) == (rows is None):
        raise ValueError("Give either pilot=MulticlassConfusionMatrix(...) or the truth "
                         "prevalence=[...] with rows=[[...], ...], not both: each defines "
                         "where the simulated tables come from.")
    family = _family(model)
    n_grid = grid(n_grid)
    n_sims = positive_int(n_sims, 400, "n_sims", minimum=2)
    draws = positive_int(draws, 1000, "draws", minimum=10)
    rng = np.random.default_rng(random_seed)

    if pilot is not None:
        labels, pi, rho, desc = _from_pilot(pilot, family, n_sims, rng)
    else:
        labels, pi, rho, desc = _truth(prevalence, rows, n_sims)
    k = len(labels)
    column = _column(m, label, labels)
    if prevalence is not None:
        shares = class_shares(prevalence, labels)
        fixed: np.ndarray | None = shares
        desc += "; test set with class shares " + ", ".join(
            f"{lab}: {p:.3g}" for lab, p in zip(labels, shares, strict=True))
    else:
        fixed = None
        desc += "; class counts ~ Multinomial(N, prevalence)"
    desc += f"; each study analysed with the {family.name} posterior (flat priors)"
    u_class = np.minimum(1 - rng.random((n_sims, k - 1)), _U_MAX)
    u_rows = np.minimum(1 - rng.random((n_sims, k, k - 1)), _U_MAX)
    post_seed = int(rng.integers(2**63))

    def simulate(n: int) -> np.ndarray:
        sizes = (np.broadcast_to(largest_remainder(np.array(n), fixed), (n_sims, k))
                 if fixed is not None else multinomial_ppf(n, pi, u_class))
        tables = multinomial_ppf(sizes, rho, u_rows)
        return _widths(tables, labels, family, m, column, hdi_prob, draws,
                       np.random.default_rng(post_seed))

    n_required, curve, note = search(simulate, n_grid, target_width=target_width,
                                     assurance=assurance, n_sims=n_sims, mean_width=True)
    curve.attrs.update(metric=m.key, target_width=float(target_width), hdi_prob=hdi_prob,
                       assurance=assurance)
    if m.per_class and label is None:
        note = "; ".join(x for x in (note, "per-class metric: the widest class's HDI "
                                           "must reach the target") if x)
    return SampleSizePlan(
        metric=m.key, target_width=float(target_width), hdi_prob=hdi_prob,
        assurance=assurance, n_required=n_required, curve=curve, generating=desc,
        method="posterior draws", n_sims=n_sims, draws=draws, n_rule=None, note=note,
        label=label,
    )


def multinomial_ppf(n: Any, p: np.ndarray, u: np.ndarray) -> np.ndarray:
    r"""Multinomial(n, p) along the last axis from fixed uniforms ``u`` (K - 1 of them).

    Sequential conditional binomials, each an inverse CDF:
    :math:`X_i = F^{-1}_{\mathrm{Bin}(n - \sum_{j<i} X_j,\ p_i / (1 - \sum_{j<i}
    p_j))}(u_i)`, so the same uniforms give nearby tables at nearby :math:`n`.

    Examples
    --------
    >>> import numpy as np
    >>> multinomial_ppf(100, np.array([0.2, 0.3, 0.5]), np.array([0.5, 0.5])).tolist()
    [20, 30, 50]
    """
    p = np.asarray(p, dtype=float)
    out = np.empty(np.broadcast_shapes((*np.shape(n), 1), p.shape, (*u.shape[:-1], 1)))
    left = np.broadcast_to(np.asarray(n, dtype=float), out.shape[:-1])
    mass = np.ones(p.shape[:-1])
    for i in range(p.shape[-1] - 1):
        share = np.clip(p[..., i] / np.where(mass > 0, mass, 1.0), 0.0, 1.0)
        out[..., i] = stats.binom.ppf(u[..., i], left, share)
        left = left - out[..., i]
        mass = mass - p[..., i]
    out[..., -1] = left
    return out.astype(np.int64)


def _widths(tables: np.ndarray, labels: list, family: Family, m: MulticlassMetric,
            column: int | None, hdi_prob: float, draws: int, rng: np.random.Generator
            ) -> np.ndarray:
    """HDI width of the metric under the family's exact posterior, one per table."""
    n_sims, k = tables.shape[0], tables.shape[1]
    chunk = max(1, _CHUNK // (draws * k * k))
    widths = np.empty(n_sims)
    for start in range(0, n_sims, chunk):  # bounded memory: blocks of studies
        block = MulticlassConfusionMatrix(tables[start:start + chunk], labels)
        with warnings.catch_warnings():  # simulated studies: small classes are the point
            warnings.simplefilter("ignore", PriorWeightWarning)
            closed = family.closed_form(block)
        # the family's own draws and theta: one chain of `draws` per study
        post = draws_mod.complete(closed.conjugate.draw(rng, (1, draws)), None, family,
                                  closed.spec, closed.conjugate, closed=closed)
        theta = post["theta"].transpose(*SAMPLE_DIMS, "classifier", "actual", "predicted")
        values = evaluate_multiclass(m, theta.values[0])  # (draws, studies[, class])
        lo, hi = hdi(values, hdi_prob, axis=0)
        w = hi - lo
        if m.per_class:
            # every class must reach the target unless a label is chosen; NaN stays NaN
            w = w.max(axis=-1) if column is None else w[..., column]
        widths[start:start + chunk] = w
    return widths


def _family(model: Any) -> Family:
    if model is None:
        return default_family("multiclass")
    if isinstance(model, Family):
        fam = model
    elif isinstance(model, str):
        fam = get_family(model)
    else:
        found = [f for f in families().values() if f.builder is model]
        if not found:
            raise TypeError(f"model must be a K-class builder such as bcm.models."
                            f"multiclass_rows or bcm.models.multiclass_cells (or its name), "
                            f"got {model!r}.")
        fam = found[0]
    try:
        with warnings.catch_warnings():  # a probe of the family, not the user's data
            warnings.simplefilter("ignore", PriorWeightWarning)
            closed = fam.closed_form(MulticlassConfusionMatrix([[1, 0], [0, 1]]))
    except (TypeError, ValueError):
        closed = None
    if closed is None:
        raise ValueError(f"model={fam.name!r} has no exact posterior of K×K tables; use "
                         "bcm.models.multiclass_rows or bcm.models.multiclass_cells.")
    return fam


def _one_table(theta: xr.DataArray) -> xr.DataArray:
    if "classifier" in theta.dims:
        if theta.sizes["classifier"] != 1:
            names = theta["classifier"].values.tolist()
            raise ValueError(f"pilot holds {len(names)} classifiers {names}; pass one, e.g. "
                             f"pilot[{names[0]!r}].")
        theta = theta.isel(classifier=0, drop=True)
    return theta


def _from_pilot(pilot: Any, family: Family, n_sims: int, rng: np.random.Generator
                ) -> tuple[list, np.ndarray, np.ndarray, str]:
    """Labels, then prevalence (S, K) and rows (S, K, K) drawn from the pilot's posterior."""
    if isinstance(pilot, MulticlassConfusionMatrix):
        if len(pilot) != 1:
            _one_table(pilot.to_xarray())  # raises, naming the classifiers
        closed = family.closed_form(pilot)
        post = draws_mod.complete(closed.conjugate.draw(rng, (1, n_sims)), None, family,
                                  closed.spec, closed.conjugate, closed=closed)
        theta = align_predicted(_one_table(post["theta"]))
        pick = slice(None)
        desc = (f"{family.name} posterior of the pilot ({pilot.n_classes} classes, "
                f"N = {int(pilot.n[0])})")
    elif idata_mod.is_inference_data(pilot):
        theta = align_predicted(_one_table(idata_mod.group(pilot, "posterior")["theta"]))
        pick = rng.integers(theta.sizes["chain"] * theta.sizes["draw"], size=n_sims)
        desc = "posterior draws of the pilot fit"
    else:
        raise TypeError("pilot must be a bayescm.MulticlassConfusionMatrix or a multiclass "
                        f"fit's InferenceData, got {type(pilot).__name__}.")
    k = theta.sizes["actual"]
    values = theta.transpose(*SAMPLE_DIMS, "actual", "predicted").values.reshape(-1, k, k)
    values = values[pick]
    pi = values.sum(axis=-1)
    return theta["actual"].values.tolist(), pi, values / pi[..., None], desc


def _truth(prevalence: Any, rows: Any, n_sims: int) -> tuple[list, np.ndarray, np.ndarray, str]:
    """Labels, prevalence and rows of a generating truth, repeated for every study."""
    if prevalence is None:
        raise ValueError("rows= needs the class prevalence too: prevalence=[p_1, ..., p_K] "
                         "(or a mapping label -> share) of the planned test set.")
    if isinstance(rows, pd.DataFrame):
        labels = rows.index.tolist()
        if set(rows.columns) != set(labels):
            raise ValueError(f"rows' columns {rows.columns.tolist()} must be the classes of "
                             f"its index {labels} (predicted and actual classes).")
        rows = rows.loc[:, labels]
    elif isinstance(rows, xr.DataArray):
        rows = align_predicted(rows.transpose("actual", "predicted"))
        labels = rows["actual"].values.tolist() if "actual" in rows.coords \
            else list(range(rows.sizes["actual"]))
    else:
        labels = (list(prevalence) if isinstance(prevalence, Mapping)
                  else list(range(np.shape(rows)[0] if np.ndim(rows) == 2 else 0)))
    rho = _check_rows(rows, labels)
    pi = class_shares(prevalence, labels)
    desc = "truth: rows with recall " + ", ".join(f"{r:.3g}" for r in np.diag(rho))
    return labels, np.broadcast_to(pi, (n_sims, pi.size)), \
        np.broadcast_to(rho, (n_sims, *rho.shape)), desc


def _check_rows(rows: Any, labels: list) -> np.ndarray:
    try:
        rho = np.asarray(rows, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError(f"rows must be a K×K matrix of numbers, got {rows!r}.") from err
    k = len(labels)
    if rho.ndim != 2 or rho.shape[0] != rho.shape[1] or rho.shape[0] < 2 or \
            (k and rho.shape[0] != k):
        raise ValueError(f"rows must be a K×K matrix (row k: predicted-class probabilities "
                         f"of actual class k) for the classes {labels}, got shape "
                         f"{rho.shape}.")
    if not np.all(np.isfinite(rho)) or np.any(rho < 0) or \
            not np.allclose(rho.sum(axis=1), 1, atol=1e-6):
        raise ValueError(f"Each row of rows must hold probabilities >= 0 summing to 1, got "
                         f"row sums {rho.sum(axis=1).tolist()}.")
    return rho / rho.sum(axis=1, keepdims=True)


def _column(m: MulticlassMetric, label: Hashable | None, labels: list) -> int | None:
    """Index of ``label`` among the classes of a per-class metric (None: all classes)."""
    if label is None:
        return None
    if not m.per_class:
        raise ValueError(f"label= picks the class of a per-class metric; {m.key!r} is one "
                         "number per table: drop label=.")
    for i, lab in enumerate(labels):
        if lab == label or str(lab) == str(label):
            return i
    raise ValueError(f"label={label!r} is not one of the classes {labels}.")

