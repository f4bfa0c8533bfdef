r"""The result of :func:`bayescm.analysis.prior_sensitivity`, and how its table is made.

:class:`PriorSensitivity` holds one tidy table of every posterior summary under every
alternative set of priors, how far each moved from the baseline, and each fit's
convergence and identifiability; :func:`rows_of` summarises one fit into its rows and
:func:`assemble` puts the table together (``shift`` and ``width_ratio`` against the
baseline).  The refitting itself is in :mod:`bayescm.analysis.sensitivity`.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from bayescm import idata as idata_mod
from bayescm.stats import SAMPLE_DIMS
from bayescm.summary import stats_columns

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["BASELINE", "PriorSensitivity", "assemble", "rows_of"]

BASELINE = "baseline"
"""Name of the model's own priors in the result."""


@dataclass(frozen=True, eq=False, repr=False)
class PriorSensitivity:
    """Result of :func:`bayescm.analysis.prior_sensitivity`.

    Attributes
    ----------
    table
        Index ``(alternative, parameter, unit)`` (``unit`` joins a scalar's
        coordinates with ``/``, e.g. ``"site1"`` or ``"cm/tp"``; ``""`` for a scalar),
        the baseline first.  Columns: ``mean``, ``sd``, ``hdi_lower``, ``hdi_upper``
        (the ``hdi_prob`` HDI), ``shift`` (change of the posterior mean from the
        baseline in baseline posterior sds), ``width_ratio`` (HDI width over the
        baseline's), ``prior`` (this unit's prior in this alternative; ``""`` for a
        derived quantity), ``r_hat``, ``ess_bulk``, ``ess_tail`` (of this scalar;
        R-hat NaN for i.i.d. draws), ``divergences`` and ``converged`` (the fit's
        verdict on all the model's parameters), and ``identifiability`` (the
        family's verdict for these priors) when the family has one.
    fits
        ``alternative -> InferenceData``.
    alternatives
        One row per alternative: ``priors`` (every prior used, as a string),
        ``engine``, ``seconds`` (rebuild and fit), ``converged``, ``divergences``,
        ``convergence`` (the verdict in words) and, when the family has one,
        ``identifiability`` and ``identifiability_message``.
    family, hdi_prob, parameters, random_seed, chains, draws
        What was analysed and how (the seed every fit used).
    baseline
        The name of the model's own priors in ``table`` and ``alternatives``.
    """

    baseline: ClassVar[str] = BASELINE

    table: pd.DataFrame
    fits: dict[str, Any]
    alternatives: pd.DataFrame
    family: str
    hdi_prob: float
    parameters: list[str]
    random_seed: int
    chains: int = 0
    draws: int = 0

    def to_frame(self) -> pd.DataFrame:
        """The :attr:`table` (a copy); ``attrs`` hold ``hdi_prob``, ``family``, the seed."""
        frame = self.table.copy()
        frame.attrs = {"hdi_prob": self.hdi_prob, "family": self.family,
                       "random_seed": self.random_seed}
        return frame

    @property
    def shifts(self) -> pd.DataFrame:
        """``shift`` with one column per alternative (rows ``parameter, unit``)."""
        wide = self.table["shift"].unstack("alternative")
        order = [a for a in self.alternatives.index if a != BASELINE]
        rows = self.table.loc[BASELINE].index
        return wide.reindex(index=rows, columns=order)

    def plot(self, *, ax: Axes | None = None) -> Axes:
        """Forest plot: per parameter and unit, each alternative's HDI and mean next to
        the baseline's (:func:`bayescm.plots.prior_sensitivity`)."""
        from bayescm.plots.sensitivity import prior_sensitivity as draw

        return draw(self, ax=ax)

    def _parts(self) -> tuple[str, str, list[str]]:
        """Headline, the shifts as text, and notes (convergence, identifiability)."""
        alt = self.alternatives
        others = [a for a in alt.index if a != BASELINE]
        refit = alt.loc[others or list(alt.index), "seconds"]
        head = (f"PriorSensitivity({self.family}: baseline and {len(others)} alternative(s); "
                f"{self.chains} chains x {self.draws} draws each; "
                f"{float(np.median(refit)):.2f} s per refit)")
        shifts = ("shift of the posterior mean from the baseline, in baseline sds:\n"
                  + self.shifts.round(2).to_string()) if others else ""
        notes = []
        bad = alt.index[~alt["converged"].astype(bool)].tolist()
        if bad:
            notes.append(f"NOT converged: {', '.join(bad)} (see .alternatives['convergence']).")
        if "identifiability" in alt:
            notes.append("identified by: " + ", ".join(
                f"{a}: {v}" for a, v in alt["identifiability"].items()))
        return head, shifts, notes

    def __repr__(self) -> str:
        head, shifts, notes = self._parts()
        return "\n".join(x for x in (head, shifts, *notes) if x)

    def _repr_html_(self) -> str:
        head, _, notes = self._parts()
        return (f"<p><b>{html.escape(head)}</b></p>"
                + "".join(f"<p>{html.escape(x)}</p>" for x in notes)
                + self.table.to_html(float_format="{:.4g}".format, max_rows=60))


# -- the table --------------------------------------------------------------------------
def rows_of(name: str, idata: Any, parameters: Sequence[str], hdi_prob: float,
            priors: Mapping[str, Mapping[str, Any]], identifiability: Any, seconds: float
            ) -> tuple[dict[str, Any], pd.DataFrame]:
    """One fit's row of :attr:`PriorSensitivity.alternatives` and its rows of the table.

    ``priors`` is the family's record ``name -> {unit: prior}`` of the fitted model;
    ``identifiability`` the family's verdict for it (an object with ``status`` and
    ``message``), or None when the family has none.
    """
    from bayescm.inference.convergence import check_convergence

    # the per-scalar numbers; fit's verdict (on all the model's parameters) is in attrs
    report = check_convergence(idata, var_names=list(parameters), backend="vectorised")
    attrs = idata_mod.attrs(idata)
    record: dict[str, Any] = {
        "priors": "; ".join(f"{k}: " + ", ".join(f"{u}={p!r}" for u, p in per.items())
                            for k, per in priors.items()),
        "engine": attrs.get("engine"), "seconds": seconds,
        "converged": bool(attrs.get("converged", report.ok)),
        "divergences": report.divergences, "convergence": attrs.get("convergence", ""),
    }
    if identifiability is not None:
        record["identifiability"] = getattr(identifiability, "status", str(identifiability))
        record["identifiability_message"] = getattr(identifiability, "message",
                                                    str(identifiability))
    post = idata_mod.group(idata, "posterior")
    frames = []
    for p in parameters:
        da = post[p]
        units, dims = _units(da)
        cols = stats_columns(da.transpose(*dims, *SAMPLE_DIMS).values.reshape(len(units), -1),
                             hdi_prob)
        # the convergence report labels scalars as ArviZ does: name[coord, coord]
        diag = report.table.reindex([p if not u else f"{p}[{', '.join(u)}]" for u in units])
        per = priors.get(p, {})
        frames.append(pd.DataFrame({
            "mean": cols["mean"], "sd": cols["sd"], "hdi_lower": cols["hdi_lower"],
            "hdi_upper": cols["hdi_upper"],
            "prior": [next((repr(per[c]) for c in u if c in per), "") for u in units],
            **{c: diag[c].to_numpy() for c in ("r_hat", "ess_bulk", "ess_tail")},
        }, index=pd.MultiIndex.from_tuples([(name, p, "/".join(u)) for u in units],
                                           names=["alternative", "parameter", "unit"])))
    rows = pd.concat(frames)
    for column in ("divergences", "converged", "identifiability"):
        if column in record:
            rows[column] = record[column]
    return record, rows


def assemble(records: Mapping[str, Mapping[str, Any]], blocks: Sequence[pd.DataFrame]
             ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The table (with ``shift`` and ``width_ratio``) and the alternatives' frame."""
    alternatives = pd.DataFrame(list(records.values()),
                                index=pd.Index(list(records), name="alternative"))
    return _relative(_in_order(pd.concat(blocks))), alternatives


def _units(da: Any) -> tuple[list[tuple[str, ...]], list[str]]:
    dims = [d for d in da.dims if d not in SAMPLE_DIMS]
    if not dims:
        return [()], dims
    idx = pd.MultiIndex.from_product([[str(v) for v in da[d].values] for d in dims])
    return [tuple(i) if isinstance(i, tuple) else (i,) for i in idx], dims


def _in_order(table: pd.DataFrame) -> pd.DataFrame:
    """The rows as they are, with index levels in order of appearance: the codes are then
    sorted, so ``.loc`` by alternative, parameter and unit is fast and warns of nothing."""
    index = table.index
    values = [index.get_level_values(i) for i in range(index.nlevels)]
    levels = [pd.Index(pd.unique(v)) for v in values]
    codes = [lvl.get_indexer(v) for lvl, v in zip(levels, values, strict=True)]
    return table.set_axis(pd.MultiIndex(levels=levels, codes=codes, names=index.names))


def _relative(table: pd.DataFrame) -> pd.DataFrame:
    """Add ``shift`` and ``width_ratio`` against the baseline's rows."""
    base = table.loc[BASELINE]
    keys = table.index.droplevel("alternative")
    mean, sd = base["mean"].reindex(keys).to_numpy(), base["sd"].reindex(keys).to_numpy()
    width = (base["hdi_upper"] - base["hdi_lower"]).reindex(keys).to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = (table["mean"].to_numpy() - mean) / sd
        ratio = (table["hdi_upper"] - table["hdi_lower"]).to_numpy() / width
    at = list(table.columns).index("hdi_upper") + 1
    table.insert(at, "shift", shift)
    table.insert(at + 1, "width_ratio", ratio)
    return table


