r"""Posterior predictive check of fit: Bayesian p-values of a discrepancy.

For each posterior draw :math:`s` with cell probabilities :math:`\pi^{(s)}` (pattern
probabilities of a latent-class model, ``theta`` of a labelled one) the expected
counts are :math:`E^{(s)} = n\,\pi^{(s)}`; the discrepancy of the observed table
:math:`y` is compared with that of the replicated table :math:`y^{rep,(s)}` drawn in
``posterior_predictive``:

.. math::

    \chi^2(y, E) = \sum_r \frac{(y_r - E_r)^2}{E_r},\qquad
    G^2(y, E) = 2 \sum_r y_r \log\frac{y_r}{E_r}\quad(0 \log 0 = 0),

    p_B = \Pr\bigl(D(y^{rep}, E) \ge D(y, E) \mid y\bigr)

(Gelman, Meng & Stern, "Posterior predictive assessment of model fitness via
realized discrepancies", Statistica Sinica 1996).  Values near 0 say the model
cannot reproduce the data (e.g. conditional dependence left out); values near 1
that it fits suspiciously well.  A saturated model (as many parameters as degrees
of freedom) always fits, so the check only has power when the data over-identify
the model.

Agreement tables with missing results or verified cases (cells such as ``"+?"`` and
``"+-|D+"``, :mod:`bayescm.data.agreement_cells`) are one multinomial per block of cells
observed the same way, so a cell's expected count is its probability times its
block's number of cases, :math:`E_c = n_{b(c)}\,\pi_c` (the replicated tables keep
those numbers); for a complete table this is :math:`n\,\pi`.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescm import idata as idata_mod
from bayescm.inference.arguments import check_fit_result
from bayescm.stats import SAMPLE_DIMS

if TYPE_CHECKING:
    import arviz as az

__all__ = ["STATISTICS", "PredictiveCheck", "posterior_predictive_check"]

STATISTICS = ("chi2", "g2")


class PredictiveCheck(pd.DataFrame):
    """Result of :func:`posterior_predictive_check`: a DataFrame with a readable header.

    One row per table and ``"all"``; columns ``observed``, ``replicated``,
    ``p_value``.  It is a DataFrame (indexing, ``iterrows``, ``to_string`` work as
    usual); :meth:`to_frame` returns a plain copy, and the repr and HTML repr say
    what the numbers mean.
    """

    @property
    def _constructor(self) -> type[pd.DataFrame]:
        return pd.DataFrame  # derived frames are plain DataFrames

    def to_frame(self) -> pd.DataFrame:
        """A plain ``pandas.DataFrame`` copy (with ``attrs``)."""
        frame = pd.DataFrame(self, copy=True)
        frame.attrs = dict(self.attrs)
        return frame

    def _header(self) -> str:
        statistic = self.attrs.get("statistic", "chi2")
        name = {"chi2": "chi-square", "g2": "G-square"}.get(statistic, statistic)
        return (f"Posterior predictive check ({name} discrepancy): p_value = "
                "P(D(y_rep) >= D(y)); near 0 the model cannot reproduce the data")

    def __repr__(self) -> str:
        return f"{self._header()}\n{pd.DataFrame.__repr__(self.to_frame())}"

    def _repr_html_(self) -> str:
        table = self.to_frame().to_html(float_format="{:.4g}".format)
        return f"<div><p><b>{html.escape(self._header())}</b></p>{table}</div>"


def _cases_of_block(y: xr.DataArray, cell: str) -> np.ndarray:
    """Cases of each cell's block ``(unit, cell)``: the table's total, except for
    agreement-table cells with missing results or verified cases, whose blocks count
    their own cases."""
    from bayescm.data.agreement_cells import cell_design, parse_cell

    names = [str(c) for c in y[cell].values] if cell in y.coords else []
    counts = np.asarray(y.values)
    try:
        design = cell_design(names, len(parse_cell(names[0])[0])) if names else None
    except ValueError:  # not cell names (e.g. tp, fn, fp, tn): one block
        design = None
    if design is None or len(design.blocks) == 1:
        return counts.sum(-1, keepdims=True)
    onehot = np.eye(len(design.blocks))[design.block]  # (C, B)
    return counts @ onehot @ onehot.T


def _family_tables(idata: az.InferenceData, post: xr.Dataset) -> Any:
    """``(observed, replicated, expected)`` tables from the fit's family's
    ``predictive_check_tables`` hook, or None when its family has none."""
    from bayescm.family import families

    family = families().get(idata_mod.attrs(idata).get("model"))
    if family is None or not hasattr(family, "predictive_check_tables"):
        return None
    from bayescm.inference.persist import read_spec

    record = read_spec(idata)
    if record is None:
        return None
    return family.predictive_check_tables(
        post, idata_mod.group(idata, "observed_data")["counts"],
        idata_mod.group(idata, "posterior_predictive")["counts"], record[1])


def _discrepancy(y: np.ndarray, expected: np.ndarray, statistic: str) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        if statistic == "chi2":
            terms = np.where(expected > 0, (y - expected) ** 2 / expected,
                             np.where(y > 0, np.inf, 0.0))
        else:
            terms = np.where(y > 0, 2 * y * np.log(y / expected), 0.0)
    return terms.sum(axis=-1)


def posterior_predictive_check(
    idata: az.InferenceData, *, statistic: str = "chi2"
) -> PredictiveCheck:
    """Bayesian p-value of a chi-square or G-square discrepancy, per table.

    Parameters
    ----------
    idata
        From :func:`bayescm.fit` with the ``posterior_predictive`` group.
    statistic
        ``"chi2"`` (default) or ``"g2"``.

    Returns
    -------
    PredictiveCheck
        A DataFrame with one row per table (population or classifier) and a row ``"all"`` for the
        sum over tables: ``observed`` (posterior mean of D(y, E)), ``replicated``
        (mean of D(y_rep, E)) and ``p_value``.

    Examples
    --------
    >>> import bayescm as bcm
    >>> tab = bcm.AgreementTable.from_counts({"pop1": {"++": 40, "+-": 3, "-+": 7, "--": 100},
    ...                                       "pop2": {"++": 90, "+-": 8, "-+": 5, "--": 40}})
    >>> idata = bcm.fit(bcm.models.hui_walter(tab), random_seed=1)
    >>> table = bcm.posterior_predictive_check(idata)
    >>> list(table.columns)
    ['observed', 'replicated', 'p_value']
    """
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {STATISTICS}, got {statistic!r}.")
    check_fit_result(idata)
    for group in ("posterior", "posterior_predictive", "observed_data"):
        if not idata_mod.has_group(idata, group):
            raise KeyError(f"The check needs group {group!r}; fit with predictive=True.")
    post = idata_mod.group(idata, "posterior")
    tables = _family_tables(idata, post)
    if tables is not None:  # a family that says what to compare (dawid_skene: agreement)
        y, rep, expected_da = tables
        unit, cell = y.dims
        expected = expected_da.transpose(*SAMPLE_DIMS, unit, cell).values
        rep = rep.transpose(*SAMPLE_DIMS, unit, cell)
    else:
        prob = post["pattern_prob"] if "pattern_prob" in post else post.get("theta")
        if prob is None:
            raise KeyError("The posterior has neither 'pattern_prob' nor 'theta'.")
        cell = prob.dims[-1]
        unit = next(d for d in prob.dims if d not in (*SAMPLE_DIMS, cell))
        y = idata_mod.group(idata, "observed_data")["counts"].transpose(unit, cell)
        rep = idata_mod.group(idata, "posterior_predictive")["counts"].transpose(
            *SAMPLE_DIMS, unit, cell)
        prob = prob.transpose(*SAMPLE_DIMS, unit, cell)
        expected = prob.values * _cases_of_block(y, cell)
    d_obs = _discrepancy(y.values.astype(float), expected, statistic)
    d_rep = _discrepancy(rep.values.astype(float), expected, statistic)
    names = [str(v) for v in y[unit].values]
    rows = {}
    for i, name in enumerate(names):
        rows[name] = (d_obs[..., i].mean(), d_rep[..., i].mean(),
                      float(np.mean(d_rep[..., i] >= d_obs[..., i])))
    tot_obs, tot_rep = d_obs.sum(-1), d_rep.sum(-1)
    rows["all"] = (tot_obs.mean(), tot_rep.mean(), float(np.mean(tot_rep >= tot_obs)))
    out = PredictiveCheck(pd.DataFrame.from_dict(rows, orient="index",
                                                 columns=["observed", "replicated", "p_value"]))
    out.index.name = unit
    out.attrs["statistic"] = statistic
    return out

