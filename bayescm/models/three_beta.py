r"""Tötsch & Hoffmann's three-Beta model of a confusion matrix.

.. math::

    \phi \sim \mathrm{Beta}(a_\phi, b_\phi),\quad
    \mathrm{TPR} \sim \mathrm{Beta}(a_+, b_+),\quad
    \mathrm{TNR} \sim \mathrm{Beta}(a_-, b_-)

    \theta = \bigl(\mathrm{TPR}\,\phi,\ (1-\mathrm{TPR})\,\phi,\
             (1-\mathrm{TNR})(1-\phi),\ \mathrm{TNR}(1-\phi)\bigr)
             \quad\text{over cells } (tp, fn, fp, tn)

    (tp, fn, fp, tn) \sim \mathrm{Multinomial}(N, \theta)

The math, priors and references are in ``models/three_beta/README.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from bayescm.data import CELLS
from bayescm.models._spec import (
    ModelSpec,
    as_confusion_matrix,
    check_proper,
    rate,
    register,
)
from bayescm.priors import PriorError
from bayescm.priors import resolve as resolve_priors

RATES = ("prevalence", "tpr", "tnr")
# The counts that update each rate's Beta (successes, failures), by cell name.
UPDATES = {"prevalence": (("tp", "fn"), ("fp", "tn")), "tpr": (("tp",), ("fn",)),
           "tnr": (("tn",), ("fp",))}


def three_beta(
    cm: Any, *, priors: Mapping[str, Any] | None = None, prevalence: float | None = None
) -> pm.Model:
    r"""Build Tötsch's three-Beta model for one or many confusion matrices.

    Parameters
    ----------
    cm
        A :class:`bayescm.ConfusionMatrix` (one matrix or a batch along dim
        ``classifier``), or a dict of cells / DataFrame accepted by it.
    priors
        Overrides of the default priors by name: ``"prevalence"``, ``"tpr"``,
        ``"tnr"``.  Each value is a :class:`bayescm.priors.Beta` (or
        ``"beta:a,b"``) for all classifiers, or a mapping ``classifier -> prior``.
        Defaults: Beta(1, 1) each (:func:`bayescm.priors.defaults`).
    prevalence
        A number in (0, 1) fixes the prevalence of a designed test set (known class
        balance); then only tpr and tnr are inferred.

    Returns
    -------
    pymc.Model
        Unsampled.  Free variables ``prevalence``, ``tpr``, ``tnr`` (dim
        ``classifier``), deterministic ``theta`` (dims ``classifier, cell``),
        observed ``counts``; prior parameters and counts are ``pm.Data``
        (``tpr_alpha``, ``tpr_beta``, ..., ``counts_data``).

    Raises
    ------
    bayescm.priors.PriorError
        For unknown prior names or a prior (e.g. Haldane's Beta(0, 0)) whose
        posterior would be improper with these counts.

    Examples
    --------
    >>> import bayescm as bcm
    >>> model = bcm.models.three_beta(bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6))
    >>> sorted(v.name for v in model.free_RVs)
    ['prevalence', 'tnr', 'tpr']
    """
    cm = as_confusion_matrix(cm)
    fixed = None
    if prevalence is not None:
        fixed = float(prevalence)
        if not 0 < fixed < 1:
            raise ValueError(f"prevalence must lie strictly between 0 and 1, got {prevalence}.")
        if priors and "prevalence" in priors:
            raise PriorError("A fixed prevalence takes no prior: drop priors['prevalence'].")
    resolved = resolve_priors("three_beta", priors, cm.classifiers)
    if fixed is not None:
        del resolved["prevalence"]
    for name, per in resolved.items():
        succ, fail = UPDATES[name]
        counts = np.stack([sum(cm.cell(c) for c in succ), sum(cm.cell(c) for c in fail)], -1)
        check_proper(name, per, counts, cm.classifiers, [" + ".join(succ), " + ".join(fail)])

    coords = {"classifier": list(cm.classifiers), "cell": list(CELLS)}
    with pm.Model(coords=coords) as model:
        counts = pm.Data("counts_data", cm.counts, dims=("classifier", "cell"))
        if fixed is None:
            phi = rate("prevalence", resolved["prevalence"], "classifier")
        else:
            phi = pm.Data("prevalence", np.full(len(cm), fixed), dims="classifier")
        tpr = rate("tpr", resolved["tpr"], "classifier")
        tnr = rate("tnr", resolved["tnr"], "classifier")
        theta = pm.Deterministic(
            "theta",
            pt.stack([tpr * phi, (1 - tpr) * phi, (1 - tnr) * (1 - phi), tnr * (1 - phi)], -1),
            dims=("classifier", "cell"),
        )
        pm.Multinomial("counts", n=counts.sum(axis=-1), p=theta, observed=counts,
                       dims=("classifier", "cell"))
    spec = ModelSpec("three_beta", cm, resolved, frozenset(model.named_vars), fixed)
    return register(model, spec)
