r"""What a conjugate posterior says exactly about each metric: Beta marginals and moments.

A family with a closed-form posterior (:meth:`bayescm.models.Family.closed_form`)
gives independent blocks: Betas and Dirichlets (:class:`bayescm.models.Conjugate`),
from which the family's ``complete`` makes the confusion probabilities
:math:`\theta`.  Two facts follow for a metric of :math:`\theta`.

**Beta marginals.**  A metric that is a ratio of cell sums,
:math:`m = \sum_{c \in S}\theta_c / \sum_{c \in S \cup F}\theta_c`, is exactly Beta
distributed when, for some block :math:`B \sim \mathrm{Dirichlet}(\alpha)` (a Beta
:math:`\mathrm{Beta}(a, b)` is the Dirichlet of :math:`(x, 1 - x)` with
:math:`\alpha = (a, b)`), :math:`m = \sum_{j \in J_S} B_j / \sum_{j \in J_S \cup J_F}
B_j` identically: by the aggregation property of the Dirichlet,

.. math::

    m \sim \mathrm{Beta}\Bigl(\textstyle\sum_{j \in J_S}\alpha_j,\
                              \sum_{j \in J_F}\alpha_j\Bigr).

(Three-Beta: prevalence, TPR and TNR are their own Betas; a Dirichlet over the cells:
every ratio of cell sums such as TPR, PPV, accuracy or Jaccard; Dirichlet rows: each
class's recall is a Beta marginal of its row.)  Nothing here names a family: the
structure is found by probing.  :math:`S` and :math:`F` come from the metric registry
evaluated on the unit tables (value 1 on :math:`S`, 0 on :math:`F`, undefined
elsewhere) and are confirmed on random tables; :math:`J_S` and :math:`J_F` from the
family's ``complete`` with one block moved next to each vertex of its simplex (the
metric near 1: :math:`J_S`, near 0: :math:`J_F`), confirmed on random blocks to
rounding error.  A rational identity that holds at random points holds everywhere.

**Finite moments.**  The unbounded metrics (``dor``, ``lr_pos``, ``lr_neg``) are
functions of TPR and TNR alone.  Where both are exact Betas of disjoint components
(so independent), the posterior mean exists iff no pole is too strong: for
:math:`x \sim \mathrm{Beta}(a, b)` and a metric growing like :math:`(1 - x)^{-p}` as
:math:`x \to 1` (like :math:`x^{-p}` as :math:`x \to 0`),

.. math::

    E[m] < \infty \iff b > p \quad (a > p),\qquad
    \mathrm{sd}[m] < \infty \iff b > 2p \quad (a > 2p),

since :math:`\int_0 t^{b - 1} t^{-p}\,dt` converges iff :math:`b > p`.  E.g.
:math:`E[\mathrm{TPR}/(1 - \mathrm{TPR})] = a / (b - 1)` for :math:`b > 1` and is
infinite for :math:`b \le 1`: with fn = 0 and a Beta(1, 1) prior, TPR ~ Beta(tp + 1, 1)
and the DOR has no finite mean.  The pole orders :math:`p` are read off the registry's
formula (the slope of :math:`\log |m|` against :math:`\log t` for small :math:`t`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm import idata as idata_mod
from bayescm import metrics as registry
from bayescm.data.confusion import UNIT_DIMS
from bayescm.family import ClosedForm, Family
from bayescm.inference import draws as draws_mod
from bayescm.stats import beta_hdi_any

__all__ = ["Exact", "aligned", "closed_form_of", "columns", "disagree", "exact_marginals"]

CLASS_DIM = "class"

_EPS = 1e-10  # distance of a probe from a vertex of its simplex
_TOL = 1e-6  # "near 0" / "near 1" for the metric at a probe
_RANDOM = 12  # random probes that confirm an identity


@dataclass(frozen=True)
class Exact:
    """What a conjugate posterior says exactly about one metric, per unit (and class).

    Attributes
    ----------
    a, b
        Beta parameters of the metric's exact marginal (NaN where it is not a Beta).
    mean_finite, sd_finite
        1.0 / 0.0 where the posterior mean (sd) is known to be finite / infinite,
        NaN where nothing is known.
    sign
        The sign of an infinite mean (+1 or -1).
    note
        Plain words: the exact marginal, or why the mean or sd does not exist.
    """

    a: xr.DataArray
    b: xr.DataArray
    mean_finite: xr.DataArray
    sd_finite: xr.DataArray
    sign: xr.DataArray
    note: xr.DataArray


def closed_form_of(idata: Any) -> tuple[Family, ClosedForm] | None:
    """The closed-form posterior of a fit, rebuilt from its model record.

    None when the fit records no model, its family has no closed form, or the
    record does not describe the fit's data: other observed counts than the
    record's, or posterior variables the builder does not make (a model the user
    extended).
    """
    from bayescm.inference import persist  # the model record's reader, when one is read

    try:
        recorded = persist.read_spec(idata)
    except (ValueError, KeyError, TypeError, AttributeError):  # a foreign or damaged record
        return None
    if recorded is None:
        return None
    family, spec, priors = recorded
    try:
        with warnings.catch_warnings():  # the fit said its warnings already
            warnings.simplefilter("ignore")
            closed = family.closed_form(spec.data, priors, spec.options)
    except (ValueError, KeyError, TypeError):
        return None
    if closed is None:
        return None
    if closed.observed is not None and idata_mod.has_group(idata, "observed_data"):
        seen = idata_mod.group(idata, "observed_data").get("counts")
        want = closed.observed
        if (seen is None or set(seen.dims) != set(want.dims)
                or seen.transpose(*want.dims).shape != want.shape
                or not np.array_equal(np.asarray(seen.transpose(*want.dims), dtype=float),
                                      np.asarray(want, dtype=float))):
            return None
    if idata_mod.has_group(idata, "posterior"):
        post = idata_mod.group(idata, "posterior")
        made = _made_names(family, closed)
        # a NUTS fit of the builder's model also holds its other parameters (item effects)
        made |= set(str(idata_mod.attrs(idata).get("builder_variables", "")).split(","))
        reg = registry.registry_for(post)
        if any(name not in made and name not in reg.names() for name in post.data_vars):
            return None
    return family, closed


def _made_names(family: Family, closed: ClosedForm) -> set[str]:
    """Variables the family's draws hold (parameters, derived quantities)."""
    part = draws_mod.take_units(closed, np.array([0]))
    values = part.conjugate.draw(np.random.default_rng(0), (1, 1))
    ds = draws_mod.complete(values, None, family, part.spec, part.conjugate, closed=part)
    return {*map(str, ds.data_vars), *part.conjugate.betas, *part.conjugate.dirichlets,
            *part.conjugate.fixed}


def exact_marginals(family: Family, closed: ClosedForm, keys: list[str],
                    reg: registry.Registry) -> dict[str, Exact]:
    """What the closed form says exactly about each of ``keys``, for every unit.

    Returns ``key -> Exact`` for the keys with something exact (a Beta marginal or a
    decided moment), each array on dims ``(unit, class)`` with the closed form's unit
    coordinates (class ``""`` for a metric without classes).

    Examples
    --------
    >>> import bayescm as bcm
    >>> from bayescm.family import default_family
    >>> family = default_family("binary")
    >>> closed = family.closed_form(bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6))
    >>> out = exact_marginals(family, closed, ["tnr", "dor", "mcc"], bcm.metrics.BINARY)
    >>> sorted(out), float(out["tnr"].a[0, 0]), float(out["tnr"].b[0, 0])
    (['dor', 'tnr'], 7.0, 3.0)
    >>> float(out["dor"].mean_finite[0, 0]), str(out["dor"].note.values[0, 0])[:16]
    (0.0, 'no finite mean: ')
    """
    unit = next(d for d in closed.coords if d in UNIT_DIMS)
    if not {"cell", "actual"} & set(closed.coords):
        return _own_betas(closed, keys, reg, unit)
    first = draws_mod.take_units(closed, np.array([0]))
    probe = _Probe(family, first, unit)
    unbounded = [k for k in keys if not np.isfinite(reg.get(k).bounds).all()]
    wanted = list(dict.fromkeys([*keys, *(["tpr", "tnr"] if unbounded else [])]))
    betas = probe.betas(wanted, reg)
    names = list(closed.coords[unit])
    out: dict[str, Exact] = {}
    for key in keys:
        shape, coords, dims = _layout(probe, key, reg, unit, names)
        a, b = np.full(shape, np.nan), np.full(shape, np.nan)
        notes = np.full(shape, "", dtype=object)
        for col, where in betas.get(key, {}).items():
            a[:, col], b[:, col] = _alphas(closed, where, unit)
            notes[:, col] = [f"exact: Beta({x:.6g}, {y:.6g})" for x, y in
                             zip(a[:, col], b[:, col], strict=True)]
        mean_ok, sd_ok, sign = (np.full(shape, np.nan) for _ in range(3))
        if key in unbounded:
            _moments(key, reg, betas, closed, unit, mean_ok, sd_ok, sign, notes)
        if np.isnan(a).all() and np.isnan(mean_ok).all():
            continue

        def da(v: np.ndarray, dims=dims, coords=coords) -> xr.DataArray:
            return xr.DataArray(v, dims=dims, coords=coords)

        out[key] = Exact(da(a), da(b), da(mean_ok), da(sd_ok), da(sign), da(notes))
    return out


def _own_betas(closed: ClosedForm, keys: list[str], reg: registry.Registry, unit: str
               ) -> dict[str, Exact]:
    """A closed form without confusion tables: the metrics it answers exactly are its
    own Beta variables (the items family's ``accuracy``, the registry's ``acc``)."""
    names = list(closed.coords[unit])
    out: dict[str, Exact] = {}
    for name in closed.conjugate.betas:
        try:
            key = reg.key(name)
        except KeyError:  # a parameter that is no metric
            continue
        if key not in keys or reg.per_class(key):
            continue
        a, b = (x[:, None] for x in np.moveaxis(_components(closed, name, unit), -1, 0))
        nan = np.full(a.shape, np.nan)
        notes = np.array([[f"exact: Beta({x:.6g}, {y:.6g})"] for x, y in
                          zip(a[:, 0], b[:, 0], strict=True)], dtype=object)

        def da(v: np.ndarray) -> xr.DataArray:
            return xr.DataArray(v, dims=(unit, CLASS_DIM), coords={unit: names, CLASS_DIM: [""]})

        out[key] = Exact(da(a), da(b), da(nan), da(nan), da(nan), da(notes))
    return out


def _layout(probe: _Probe, key: str, reg: registry.Registry, unit: str, names: list
            ) -> tuple[tuple[int, ...], dict, tuple[str, ...]]:
    if reg.per_class(key):
        labels = probe.classes
        return (len(names), len(labels)), {unit: names, "class": labels}, (unit, "class")
    return (len(names), 1), {unit: names, "class": [""]}, (unit, "class")


def _alphas(closed: ClosedForm, where: tuple, unit: str) -> tuple[np.ndarray, np.ndarray]:
    """Beta parameters of every unit for a structure ``(block, sub, J_S, J_F)``."""
    name, sub, succ, fail = where
    comps = _components(closed, name, unit)  # (units, *sub, K)
    row = comps[(slice(None), *sub)]
    return row[:, succ].sum(axis=-1), row[:, fail].sum(axis=-1)


def _components(closed: ClosedForm, name: str, unit: str) -> np.ndarray:
    """A block's parameters with the unit axis first and components last."""
    conj = closed.conjugate
    dims = list(closed.dims.get(name) or (unit,))
    axis = dims.index(unit)
    if name in conj.betas:
        a, b = (np.moveaxis(np.asarray(v, dtype=float), axis, 0) for v in conj.betas[name])
        return np.stack(np.broadcast_arrays(a, b), axis=-1)
    alpha = np.asarray(conj.dirichlets[name], dtype=float)
    return np.moveaxis(alpha, axis, 0)


class _Probe:
    """The first unit's closed form, probed: theta at vertex and random block values."""

    def __init__(self, family: Family, part: ClosedForm, unit: str) -> None:
        rng = np.random.default_rng(20240)
        self.blocks: list[tuple[str, tuple[int, ...], int]] = []
        base: dict[str, np.ndarray] = {}
        for name in (*part.conjugate.betas, *part.conjugate.dirichlets):
            comps = _components(part, name, unit)[0]  # (*sub, K)
            base[name] = comps * 0 + rng.uniform(0.5, 1.5, comps.shape)
            base[name] /= base[name].sum(axis=-1, keepdims=True)
            self.blocks += [(name, sub, comps.shape[-1]) for sub in np.ndindex(comps.shape[:-1])]
        n_vertex = sum(k for *_, k in self.blocks)
        rows = {n: np.repeat(v[None], n_vertex + _RANDOM, axis=0) for n, v in base.items()}
        at = 0
        for name, sub, k in self.blocks:
            for j in range(k):
                vertex = np.full(k, _EPS)
                vertex[j] = 1 - (k - 1) * _EPS
                rows[name][(at, *sub)] = vertex
                at += 1
        for v in rows.values():
            v[n_vertex:] = rng.dirichlet(np.ones(v.shape[-1]), v[n_vertex:].shape[:-1])
        self.rows, self.n_vertex = rows, n_vertex
        values = {}
        for name, v in rows.items():
            dims = list(part.dims.get(name) or (unit,))
            arr = v[..., 0] if name in part.conjugate.betas else v
            values[name] = np.expand_dims(arr, 1 + dims.index(unit))[None]  # chain, draw
        ds = draws_mod.complete(values, None, family, part.spec, part.conjugate, closed=part)
        theta = ds["theta"].isel(chain=0, drop=True).isel({unit: 0}, drop=True)
        self.table = theta.isel(draw=0, drop=True)  # layout and coords of one table
        self.theta = theta.transpose("draw", ...).values.reshape(theta.sizes["draw"], -1)
        self.classes: list[str] = ([str(c) for c in self.table["actual"].values]
                                   if "actual" in self.table.dims else [""])

    def ratios(self, keys: list[str], reg: registry.Registry) -> dict:
        """``(key, column) -> (S, F)`` for metrics that are ratios of cell sums."""
        n = self.theta.shape[1]
        rng = np.random.default_rng(7)
        tables = np.concatenate([np.eye(n), rng.dirichlet(np.ones(n), _RANDOM)])
        cells = xr.DataArray(tables.reshape(-1, *self.table.shape),
                             dims=("probe", *self.table.dims), coords=self.table.coords)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ds = reg.compute(cells, keys)
        out = {}
        for key in keys:
            v = ds[key].transpose("probe", ...).values.reshape(n + _RANDOM, -1)
            for col in range(v.shape[1]):
                at = v[:n, col]
                succ, fail = np.isclose(at, 1, atol=1e-12), np.isclose(at, 0, atol=1e-12)
                if not (succ | fail | np.isnan(at)).all() or not succ.any() or not fail.any():
                    continue
                rand = tables[n:]
                ratio = rand[:, succ].sum(1) / rand[:, succ | fail].sum(1)
                if np.allclose(v[n:, col], ratio, rtol=1e-9, atol=1e-12):
                    out[(key, col)] = (succ, fail)
        return out

    def betas(self, keys: list[str], reg: registry.Registry) -> dict[str, dict[int, tuple]]:
        """``key -> {column: (block, sub, J_S, J_F)}`` for the exact Beta marginals."""
        out: dict[str, dict[int, tuple]] = {}
        rand = slice(self.n_vertex, None)
        with np.errstate(all="ignore"):
            for (key, col), (succ, fail) in self.ratios(keys, reg).items():
                m = self.theta[:, succ].sum(1) / self.theta[:, succ | fail].sum(1)
                at = 0
                for name, sub, k in self.blocks:
                    near = m[at:at + k]
                    at += k
                    j_s, j_f = near > 1 - _TOL, near < _TOL
                    if not (j_s.any() and j_f.any()):
                        continue
                    b = self.rows[name][(rand, *sub)]
                    pred = b[:, j_s].sum(1) / b[:, j_s | j_f].sum(1)
                    if np.allclose(m[rand], pred, rtol=1e-8, atol=1e-12):
                        out.setdefault(key, {})[col] = (name, sub, np.flatnonzero(j_s),
                                                        np.flatnonzero(j_f))
                        break
        return out


def _poles(key: str, reg: registry.Registry) -> dict[tuple[str, int], tuple[float, float]] | None:
    """``(rate, end) -> (p, sign)``: the metric grows like t^-p as tpr or tnr -> end
    (t the distance), read off the binary formula; None unless it is a function of
    tpr and tnr alone."""
    base = getattr(reg.get(key), "base", None) or key
    if base not in registry.REGISTRY:
        return None
    f = registry.REGISTRY[base]
    rng = np.random.default_rng(3)
    x, y = rng.uniform(0.1, 0.9, 8), rng.uniform(0.1, 0.9, 8)
    with np.errstate(all="ignore"):
        one = f(*registry.cells_from_rates(0.3, x, y))
        two = f(*registry.cells_from_rates(0.7, x, y))
        if not np.allclose(one, two, rtol=1e-9, equal_nan=True):
            return None
        out = {}
        for rate in ("tpr", "tnr"):
            for end in (0, 1):
                def at(t: float, rate=rate, end=end) -> float:
                    v = abs(end - t)
                    rates = (v, 0.6) if rate == "tpr" else (0.6, v)
                    return float(f(*registry.cells_from_rates(0.5, *rates)))
                near, far = at(1e-7), at(1e-4)
                p = np.log(abs(near) / abs(far)) / np.log(1e3) if near and far else 0.0
                p = float(np.rint(p)) if np.isfinite(p) else 0.0
                out[(rate, end)] = (max(p, 0.0), float(np.sign(near)))
    return out


def _moments(key: str, reg: registry.Registry, betas: dict, closed: ClosedForm, unit: str,
             mean_ok: np.ndarray, sd_ok: np.ndarray, sign: np.ndarray,
             notes: np.ndarray) -> None:
    """Fill in whether the mean and sd of an unbounded metric are finite (module notes)."""
    poles = _poles(key, reg)
    if poles is None:
        return
    for col in range(mean_ok.shape[1]):
        where = {r: betas.get(r, {}).get(col if reg.per_class(key) else 0) for r in
                 ("tpr", "tnr")}
        if any(v is None for v in where.values()) or not _independent(*where.values()):
            continue
        mean_ok[:, col], sd_ok[:, col] = 1.0, 1.0
        why_mean = [[] for _ in range(mean_ok.shape[0])]
        why_sd = [[] for _ in range(mean_ok.shape[0])]
        for (rate, end), (p, s) in poles.items():
            if p <= 0:
                continue
            a, b = _alphas(closed, where[rate], unit)
            shape = b if end == 1 else a
            letter = "b" if end == 1 else "a"
            grows = f"(1 - {rate})^-{p:g} as {rate} -> 1" if end == 1 else \
                f"{rate}^-{p:g} as {rate} -> 0"
            for i in np.flatnonzero(shape <= p):
                mean_ok[i, col] = 0.0
                sign[i, col] = s
                why_mean[i].append(f"{key} grows like {grows} and {rate} ~ Beta({a[i]:.6g}, "
                                   f"{b[i]:.6g}): a finite mean needs {letter} > {p:g}")
            for i in np.flatnonzero(shape <= 2 * p):
                sd_ok[i, col] = 0.0
                why_sd[i].append(f"{key} grows like {grows} and {rate} ~ Beta({a[i]:.6g}, "
                                 f"{b[i]:.6g}): a finite sd needs {letter} > {2 * p:g}")
        for i in range(mean_ok.shape[0]):
            if mean_ok[i, col] == 0:
                notes[i, col] = "no finite mean: " + "; ".join(why_mean[i])
            elif sd_ok[i, col] == 0:
                notes[i, col] = "no finite sd: " + "; ".join(why_sd[i])


def _independent(one: tuple, two: tuple) -> bool:
    """Two Beta marginals are independent: other blocks (or other sub-blocks), or
    disjoint components of one Dirichlet (its neutrality)."""
    if (one[0], tuple(one[1])) != (two[0], tuple(two[1])):
        return True
    return not set(np.r_[one[2], one[3]]) & set(np.r_[two[2], two[3]])


# -- in a summary table ----------------------------------------------------------------
def aligned(ex: Exact, per_class: bool, base: Sequence[str],
            units: xr.DataArray, classes: list[str]) -> dict[str, np.ndarray]:
    """An Exact's arrays in a summary table's row order (base units, then class): NaN
    (a note "") for a unit or class the Exact does not have.

    Positions are looked up once for the six arrays (``summary_exact`` calls this per
    chunk and metric: reindexing each array through xarray cost about 24 ms a chunk)."""
    unit = next(d for d in base if d in UNIT_DIMS)
    at_unit = pd.Index([str(v) for v in ex.a[unit].values]).get_indexer(
        [str(v) for v in units[unit].values])
    at_class = (pd.Index(ex.a[CLASS_DIM].values).get_indexer(classes) if per_class
                else np.zeros(1, dtype=np.intp))
    missing = (at_unit < 0)[:, None] | (at_class < 0)[None, :]
    # the unit's axis among the base dims; the others repeat each unit's values
    shape = [len(at_unit) if d == unit else 1 for d in base] + [len(at_class)]
    full = [units.sizes[d] for d in base] + [len(at_class)]
    out = {}
    for field in ("a", "b", "mean_finite", "sd_finite", "sign", "note"):
        v = getattr(ex, field).transpose(unit, CLASS_DIM).values[np.ix_(at_unit, at_class)]
        blank = "" if field == "note" else np.nan
        v = np.where(missing, blank, v).astype(object if field == "note" else float)
        out[field] = np.broadcast_to(v.reshape(shape), full).ravel()
    out["note"] = np.array(["" if not isinstance(v, str) else v for v in out["note"]],
                           dtype=object)
    return out


def disagree(cols: Mapping[str, np.ndarray], ex: Mapping[str, np.ndarray], z: float) -> bool:
    """Whether the draws' means lie more than ``z`` MCSEs from the exact Beta means."""
    a, b = ex["a"], ex["b"]
    beta = np.isfinite(a) & np.isfinite(cols["mcse_mean"])
    with np.errstate(invalid="ignore"):
        gap = np.abs(cols["mean"][beta] - a[beta] / (a[beta] + b[beta]))
        room = z * cols["mcse_mean"][beta] + 1e-9 * (1 + np.abs(cols["mean"][beta]))
    return bool((gap > room).any())


def columns(cols: Mapping[str, np.ndarray], ex: Mapping[str, np.ndarray],
                   hdi_prob: float) -> dict[str, np.ndarray]:
    """The summary columns the closed form replaces (``cols``: the draws'): Beta rows,
    and moments that do not exist."""
    # here, not at the top: the summary of a fit without a closed form (the shell's
    # Gibbs and NUTS fits) reads this module but never needs scipy.stats (about 0.5 s)
    from scipy import stats as sps

    n = len(ex["a"])
    out = {c: np.array(cols.get(c, np.full(n, np.nan)), dtype=float, copy=True)
           for c in ("mean", "sd", "median", "hdi_lower", "hdi_upper", "hdi_width",
                     "mcse_mean", "mcse_hdi_lower", "mcse_hdi_upper")}
    beta = np.isfinite(ex["a"])
    a, b = ex["a"][beta], ex["b"][beta]
    lower, upper = beta_hdi_any(a, b, hdi_prob=hdi_prob)
    out["mean"][beta], out["sd"][beta] = sps.beta.mean(a, b), sps.beta.std(a, b)
    out["median"][beta] = sps.beta.median(a, b)
    out["hdi_lower"][beta], out["hdi_upper"][beta] = lower, upper
    out["hdi_width"][beta] = upper - lower
    for c in ("mcse_mean", "mcse_hdi_lower", "mcse_hdi_upper"):
        out[c][beta] = 0.0
    no_mean = ex["mean_finite"] == 0
    out["mean"][no_mean] = ex["sign"][no_mean] * np.inf
    out["sd"][no_mean] = np.nan  # no mean, no variance about it
    out["sd"][(ex["sd_finite"] == 0) & ~no_mean] = np.inf
    out["mcse_mean"][(ex["sd_finite"] == 0) | no_mean] = np.nan
    out["exact"], out["note"] = beta, ex["note"]
    return out
