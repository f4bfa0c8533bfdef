r"""Is a Hui–Walter model identified by its data, only by its priors, or not at all?

Complete tables (every case has every result, none verified) use the counting
argument: ``P (2**T - 1)`` independent cell proportions against ``2T + P + 2K``
parameters (:func:`check_identifiability`).

With missing results or verified cases the count no longer applies: a block of
cases with one result carries one proportion, a verified block carries the class
as well.  :func:`check_cell_identifiability` uses Goodman's criterion of local
identifiability ("Exploratory latent structure analysis using both identifiable and
unidentifiable models", 1974): the parameters are locally identified where the
Jacobian of the map (Se, Sp, prevalence, covariance positions) -> cell
probabilities of the observed blocks (one cell per block dropped, since a block's
cells sum to one) has full column rank.  The rank is taken at a few random interior
points (its maximum: the generic rank) and plays the part of the degrees of freedom.

One classifier on unlabelled data (:func:`one_classifier`) carries one margin per
population, the share of positive calls: the posterior of Se and Sp is their prior,
updated only through that margin.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from bayescm.data.agreement import AgreementTable
from bayescm.models.hui_walter.probabilities import cell_probabilities, class_probabilities
from bayescm.priors import Beta

__all__ = ["Identifiability", "IdentifiabilityError", "IdentifiabilityWarning",
           "check_cell_identifiability", "check_identifiability", "identify", "one_classifier",
           "user_stacklevel"]

INFORMATIVE_SD = 0.1
_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def user_stacklevel() -> int:
    """``stacklevel`` for a warning raised by the caller of this function that points at
    the first frame outside bayescm: the reader's own line, also when the builder runs
    inside ``bcm.rebuild`` or another bayescm function (a warning at a line of
    bayescm's would be shown again for every new caller's line, and point nowhere
    useful)."""
    here = inspect.currentframe()
    frame, level = (here.f_back if here is not None else None), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            _PACKAGE + os.sep):
        frame, level = frame.f_back, level + 1
    return level


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
        Independent cell proportions of the data: ``P * (2**T - 1)`` for a complete
        table, the generic rank of the cells' Jacobian otherwise.
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


def _informative(b: Beta) -> bool:
    a, c = b.alpha, b.beta
    return bool(b.proper and np.sqrt(a * c / ((a + c) ** 2 * (a + c + 1))) < INFORMATIVE_SD)


def _verdict(df: int, n_par: int, informative: int, shape: str, remedy: str,
             data_note: str) -> Identifiability:
    deficit = n_par - df
    if deficit <= 0:
        return Identifiability(df, n_par, informative, "data", f"{shape}: {data_note}")
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


def check_identifiability(
    n_classifiers: int, n_populations: int, n_pairs: int, priors: Mapping[str, Sequence[Beta]]
) -> Identifiability:
    """Compare a complete table's degrees of freedom with the free parameters.

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
    informative = sum(_informative(b) for per in priors.values() for b in per)
    shape = (f"{n_classifiers} classifiers and {n_populations} population(s) give "
             f"{df} degrees of freedom for {n_par} parameters")
    remedy = ("Give informative priors (e.g. Beta(20, 4) from an earlier labelled evaluation) "
              f"for at least {max(n_par - df, 0)} parameters, add a population with a "
              "different prevalence, or add a classifier.")
    return _verdict(df, n_par, informative, shape, remedy,
                    "identified by the data (populations must differ in prevalence).")


def one_classifier(n_populations: int, priors: Mapping[str, Sequence[Beta]]) -> Identifiability:
    """One classifier on unlabelled data: identified at best through its Se and Sp priors.

    Examples
    --------
    >>> from bayescm.priors import Beta
    >>> one_classifier(1, {"sensitivity": [Beta(20, 4)], "specificity": [Beta(20, 4)],
    ...                    "prevalence": [Beta(1, 1)]}).status
    'priors'
    """
    n_par = 2 + n_populations
    informative = sum(_informative(b) for per in priors.values() for b in per)
    both = _informative(priors["sensitivity"][0]) and _informative(priors["specificity"][0])
    message = (
        "One classifier on unlabelled data: the data give only the share of positive calls "
        f"(one margin per population: {n_populations} degree(s) of freedom for {n_par} "
        "parameters), so the posterior of Se, Sp and prevalence is the prior updated by that "
        "one margin. ")
    if both:
        return Identifiability(
            n_populations, n_par, informative, "priors",
            message + "It is as good as the informative priors on Se and Sp; report them and "
            "check how the posterior moves when they change. Verified cases or a second "
            "classifier would let the data speak.")
    return Identifiability(
        n_populations, n_par, informative, "none",
        message + "Without informative priors on both Se and Sp (e.g. Beta(20, 4) from an "
        "earlier labelled evaluation) the posterior is a ridge shaped by the priors, not by "
        "the data. Give such priors, verify some cases, or add a classifier.")


def jacobian_rank(table: AgreementTable, pairs: Sequence[tuple[int, int]], *,
                  points: int = 3, seed: int = 0) -> int:
    """Generic rank of d(cell probabilities of observed blocks) / d(parameters).

    Central differences at ``points`` random interior points; the largest rank found
    (a rank-deficient random point has probability zero, rounding aside).
    """
    design = table.design()
    t, p, k = len(table.classifiers), len(table.populations), len(pairs)
    n_par = 2 * t + p + 2 * k
    block_n = np.stack([table.counts[:, design.block == b].sum(1)
                        for b in range(len(design.blocks))], axis=1)  # (P, B)
    last = np.array([c == np.flatnonzero(design.block == design.block[c])[-1]
                     for c in range(len(design.cells))])
    # rows kept: each population's cells of its observed blocks, one cell per block dropped
    keep = (block_n[:, design.block] > 0) & ~last[None, :]

    def cells(theta: np.ndarray) -> np.ndarray:
        se, sp, prev = theta[:t], theta[t:2 * t], theta[2 * t:2 * t + p]
        u_se, u_sp = theta[2 * t + p:2 * t + p + k], theta[2 * t + p + k:]
        p_pos, p_neg, _, _ = class_probabilities(se, sp, u_se, u_sp, t, pairs)
        return cell_probabilities(p_pos, p_neg, prev, design)[keep]

    rng = np.random.default_rng(seed)
    best, h = 0, 1e-6
    for _ in range(points):
        theta = np.concatenate([rng.uniform(0.6, 0.95, 2 * t), rng.uniform(0.1, 0.9, p),
                                rng.uniform(0.2, 0.8, 2 * k)])
        jac = np.empty((int(keep.sum()), n_par))
        for i in range(n_par):
            step = np.zeros(n_par)
            step[i] = h
            jac[:, i] = (cells(theta + step) - cells(theta - step)) / (2 * h)
        s = np.linalg.svd(jac, compute_uv=False)
        best = max(best, int((s > 1e-7 * max(s.max(initial=0.0), 1.0)).sum()))
    return best


def check_cell_identifiability(table: AgreementTable, pairs: Sequence[tuple[int, int]],
                               priors: Mapping[str, Sequence[Beta]]) -> Identifiability:
    """Local identifiability (Goodman 1974) of a table with missing results or verified cases.

    Examples
    --------
    >>> import bayescm as bcm
    >>> from bayescm.priors import Beta
    >>> tab = bcm.AgreementTable.from_counts({"++": 40, "+-": 3, "-+": 7, "--": 100,
    ...                                       "++|D+": 9, "--|D-": 12})
    >>> flat = {"sensitivity": [Beta(1, 1)] * 2, "specificity": [Beta(1, 1)] * 2,
    ...         "prevalence": [Beta(1, 1)]}
    >>> check_cell_identifiability(tab, [], flat).status
    'data'
    """
    t, p = len(table.classifiers), len(table.populations)
    df = jacobian_rank(table, pairs)
    n_par = 2 * t + p + 2 * len(pairs)
    informative = sum(_informative(b) for per in priors.values() for b in per)
    design = table.design()
    verified = [b for b, (v, _) in enumerate(design.blocks)
                if v and table.counts[:, design.block == b].sum() > 0]
    kind = "missing results and verified cases" if verified and any(
        "0" in m for _, m in design.blocks) else (
        "verified cases" if verified else "missing results")
    shape = (f"{t} classifier(s) and {p} population(s) with {kind} give {df} locally "
             f"identified directions (the rank of the cell probabilities' Jacobian; Goodman "
             f"1974) for {n_par} parameters")
    note = "identified by the data."
    if verified:
        note = ("identified by the data: verified cases, whose class is known, inform Se, Sp "
                "and prevalence directly.")
    remedy = ("Give informative priors (e.g. Beta(20, 4) from an earlier labelled evaluation) "
              f"for at least {max(n_par - df, 0)} parameters, verify some cases, add a "
              "population with a different prevalence, or add a classifier.")
    return _verdict(df, n_par, informative, shape, remedy, note)


def identify(table: AgreementTable, pairs: Sequence[tuple[int, int]],
             priors: Mapping[str, Sequence[Beta]]) -> Identifiability:
    """The check that applies to ``table``: one classifier on unlabelled data, a complete
    table (counting), or cells with missing results or verified cases (Jacobian rank)."""
    design = table.design()
    unlabelled = not any(v and table.counts[:, design.block == b].sum() > 0
                         for b, (v, _) in enumerate(design.blocks))
    if len(table.classifiers) == 1 and unlabelled:
        return one_classifier(len(table.populations), priors)
    if table.complete:
        return check_identifiability(len(table.classifiers), len(table.populations),
                                     len(pairs), priors)
    return check_cell_identifiability(table, pairs, priors)
