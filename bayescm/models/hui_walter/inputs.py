r"""What the Hui–Walter builder checks and resolves, and its kernel's inputs, without PyMC.

:func:`prepare` is the builder's first half: the arguments checked, the priors resolved
and checked (proper, not truncated away), the identifiability verdict (warned or raised
as asked), all in a :class:`~bayescm.family.ModelSpec`.  :func:`kernel_of` lays the
counts and the Beta parameters out as the compiled density's ``user_data``
(:mod:`bayescm.models.hui_walter.kernel`).  The builder uses both; so does
:meth:`HuiWalter.kernel_form <bayescm.models.hui_walter.HuiWalter.kernel_form>`, which
gives ``fit`` the same compiled density straight from the data and priors, so that the
shell's ``bayescm unlabeled`` samples without importing PyMC.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from bayescm.data.agreement import AgreementTable
from bayescm.family import Kernel, ModelSpec
from bayescm.models.hui_walter.dependence import dependent_pairs
from bayescm.models.hui_walter.identifiability import (
    IdentifiabilityError,
    IdentifiabilityWarning,
    identify,
    user_stacklevel,
)
from bayescm.models.hui_walter.probabilities import check_size
from bayescm.models.hui_walter.truncated import (
    PriorTruncationWarning,
    check_truncation,
    truncation_note,
)
from bayescm.priors import PriorError
from bayescm.priors import resolve as resolve_priors

__all__ = ["DATA_NAMES", "kernel_of", "prepare", "prior_values"]

#: The model's ``pm.Data`` of the Beta parameters, in the kernel's order.
DATA_NAMES = tuple(f"{v}_{ab}" for v in ("sensitivity", "specificity", "prevalence")
                   for ab in ("alpha", "beta"))


def prepare(table: AgreementTable, priors: Mapping[str, Any] | None,
            conditional_dependence: bool | Sequence[Sequence[str]],
            identifiability: str) -> ModelSpec:
    """The builder's checks and its :class:`ModelSpec` (data, resolved priors, options,
    and in ``extra`` the dependent ``pairs`` and the ``identifiability`` verdict).

    Raises as the builder does (TypeError, ValueError, PriorError, IdentifiabilityError)
    and warns as it does (PriorTruncationWarning, IdentifiabilityWarning).

    Examples
    --------
    >>> import bayescm as bcm
    >>> from bayescm.models.hui_walter.inputs import prepare
    >>> tab = bcm.AgreementTable.from_counts({"s1": {"++": 89, "+-": 43, "-+": 55, "--": 413},
    ...                                       "s2": {"++": 260, "+-": 76, "-+": 52, "--": 212}})
    >>> spec = prepare(tab, None, False, "warn")
    >>> spec.extra["identifiability"].status, spec.extra["pairs"]
    ('data', ())
    """
    if not isinstance(table, AgreementTable):
        raise TypeError(f"hui_walter needs a bayescm.AgreementTable, got {type(table).__name__}.")
    check_size(table.classifiers, table.patterns)  # before the design is made
    if identifiability not in ("warn", "raise", "ignore"):
        raise ValueError(f"identifiability must be 'warn', 'raise' or 'ignore', "
                         f"got {identifiability!r}.")
    classifiers = table.classifiers
    pairs = dependent_pairs(conditional_dependence, classifiers)
    resolved = resolve_priors("hui_walter", priors, classifiers,
                              units={"prevalence": table.populations})
    improper = [k for k, per in resolved.items() if not all(b.proper for b in per)]
    if improper:
        raise PriorError(
            f"Improper priors for {improper}: a latent-class posterior need not be proper with "
            "them. Use Beta(a, b) with a, b > 0."
        )
    for c, se_prior, sp_prior in zip(classifiers, resolved["sensitivity"],
                                     resolved["specificity"], strict=True):
        check_truncation(se_prior, sp_prior, *se_prior.params, *sp_prior.params, c)
        if note := truncation_note(se_prior, sp_prior, *se_prior.params, *sp_prior.params, c):
            warnings.warn(note, PriorTruncationWarning, stacklevel=user_stacklevel())
    ident = identify(table, pairs, resolved)
    if ident.status != "data" and identifiability != "ignore":
        if identifiability == "raise" and ident.status == "none":
            raise IdentifiabilityError(ident.message)
        warnings.warn(ident.message, IdentifiabilityWarning, stacklevel=user_stacklevel())
    dependence = [[classifiers[i], classifiers[j]] for i, j in pairs]
    return ModelSpec("hui_walter", table, resolved,
                     options={"conditional_dependence": dependence or False,
                              "identifiability": identifiability},
                     extra={"pairs": tuple(pairs), "identifiability": ident})


def prior_values(spec: ModelSpec) -> dict[str, np.ndarray]:
    """``{name}_alpha`` and ``{name}_beta`` of every Beta prior (what the model's
    ``pm.Data`` hold), per classifier or population."""
    return {name: np.array([b.alpha if name.endswith("alpha") else b.beta
                            for b in spec.priors[name.split("_")[0]]], dtype=float)
            for name in DATA_NAMES}


def kernel_of(spec: ModelSpec, value: Callable[[str], np.ndarray] | None = None) -> Kernel:
    r"""The compiled density's inputs: ``user_data`` laid out as
    :mod:`~bayescm.models.hui_walter.kernel` reads it, and the expanded draws' layout.

    ``value(name)`` gives the model's data ``counts_data`` and :data:`DATA_NAMES` (the
    built model's current values); without it they come from ``spec`` itself (the table's
    counts and the resolved priors: the values the builder stores).
    """
    from bayescm.models.hui_walter import kernel as compiled

    tab = spec.data
    design = tab.design()
    if value is None:
        values = {"counts_data": np.asarray(tab.counts), **prior_values(spec)}
        value = values.__getitem__
    t, p = len(tab.classifiers), len(tab.populations)
    pairs = spec.extra["pairs"]
    k, r, c = len(pairs), 2**t, len(design.cells)

    def flat(name: str) -> np.ndarray:
        return np.asarray(value(name)).astype(float).ravel()

    user_data = np.concatenate([
        [t, p, k, r, c, float(design.complete)], flat("counts_data"),
        design.pos.ravel(), design.neg.ravel(), *(flat(name) for name in DATA_NAMES),
        [i for i, _ in pairs], [j for _, j in pairs],
    ])
    names = ["sensitivity", "specificity", "prevalence"]
    shapes = [(t,), (t,), (p,)]
    if pairs:
        names += ["cov_se_position", "cov_sp_position", "cov_se", "cov_sp"]
        shapes += [(k,)] * 4
    return Kernel(compiled, user_data, 2 * t + p + 2 * k, [*names, "pattern_prob"],
                  [*shapes, (p, c)])
