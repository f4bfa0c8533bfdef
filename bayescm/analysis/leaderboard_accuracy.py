r"""Probabilistic leaderboard from published accuracies and the test-set size.

Tötsch & Hoffmann (2021, §2D) ranked the top of a Kaggle private leaderboard from the
accuracies it published: :math:`k_i` of :math:`n` cases right gives
:math:`\mathrm{ACC}_i \sim \mathrm{Beta}(k_i + 1, n - k_i + 1)`, independently.  The
ranks are counted by :mod:`bayescm.analysis.ranks`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from bayescm import metrics as registry
from bayescm.analysis.ranks import (
    Leaderboard,
    build_leaderboard,
    check_options,
    need_two,
    sample_values,
)
from bayescm.stats import draw_conjugate

__all__ = ["leaderboard_from_accuracy"]


def leaderboard_from_accuracy(
    accuracy_percent: Any,
    n: int | Sequence[int],
    names: Sequence[str] | None = None,
    *,
    hdi_prob: float = 0.95,
    prizes: Sequence[float] | None = None,
    draws: int = 4000,
    random_seed: int | None = None,
    chunk: int | None = None,
    top: int | None = None,
) -> Leaderboard:
    r"""Probabilistic leaderboard from published accuracies (percent) and the test-set size.

    The way Tötsch & Hoffmann (2021, §2D) treated a Kaggle private leaderboard: with
    :math:`n` test cases and accuracy :math:`a_i` percent, submission :math:`i` was
    right on :math:`k_i = \mathrm{round}(a_i n / 100)` cases, and with a uniform prior

    .. math::

        \mathrm{ACC}_i \mid k_i \sim \mathrm{Beta}(k_i + 1,\ n - k_i + 1),

    independently across submissions.  Ranks are then counted as in
    :func:`leaderboard` (see there for the estimator and the options).

    Parameters
    ----------
    accuracy_percent
        Accuracies in percent, in ``[0, 100]``: a sequence or array (names from
        ``names``, default ``"s0", "s1", ...``), a pandas Series or a dict (names
        from the index or keys), or a one-column DataFrame (names from the index).
    n
        Test-set size, one for all submissions or one per submission (whole numbers
        >= 1).
    names
        Submission names, overriding those of a Series, dict or DataFrame.
    hdi_prob, prizes, draws, random_seed, chunk, top
        As in :func:`leaderboard`.

    Returns
    -------
    Leaderboard
        For metric ``acc``; index named ``submission``.

    Raises
    ------
    ValueError
        Naming the submission whose accuracy is NaN or outside [0, 100], or whose
        ``n`` is not a whole number >= 1; for fewer than two submissions.

    Examples
    --------
    The top of the Recursion Cellular Image Classification private leaderboard is
    close; with :math:`n = 15123` (the paper's estimate) nobody is safely first:

    >>> from bayescm.analysis.leaderboard import leaderboard_from_accuracy
    >>> board = leaderboard_from_accuracy([97.1, 97.0, 96.5], n=15123,
    ...                                   names=["A", "B", "C"], random_seed=1)
    >>> list(board.summary.index)
    ['A', 'B', 'C']
    >>> 0.6 < board.summary.loc["A", "p_best"] < 0.8
    np.True_
    """
    acc, labels = _accuracies(accuracy_percent, names)
    need_two(len(labels))
    bad = [labels[i] for i in np.flatnonzero(np.isnan(acc))]
    if bad:
        raise ValueError(f"Accuracy of submission {bad[0]!r} is NaN; drop it or give its value.")
    out = np.flatnonzero((acc < 0) | (acc > 100))
    if out.size:
        i = out[0]
        raise ValueError(
            f"Accuracy of submission {labels[i]!r} is {acc[i]:g}, outside [0, 100]; give "
            "accuracies in percent."
        )
    if (acc <= 1).all():
        warnings.warn(
            "Every accuracy is <= 1 %: did you pass fractions? Accuracies are in percent "
            "(multiply by 100).", UserWarning, stacklevel=2)
    sizes = _sizes(n, labels)
    k = np.rint(acc / 100 * sizes)
    a, b = k + 1, sizes - k + 1
    opts = check_options(hdi_prob, prizes, draws, chunk, top)

    def sampler(rng: np.random.Generator, size: int) -> np.ndarray:
        return draw_conjugate(rng, (size,), betas={"acc": (a, b)})["acc"]

    values = sample_values(sampler, draws, len(labels), opts["chunk"], random_seed)
    return build_leaderboard(values, labels, registry.get("acc"), unit="submission",
                             seed=random_seed, **opts)


# -- inputs ----------------------------------------------------------------------


def _accuracies(values: Any, names: Sequence[str] | None) -> tuple[np.ndarray, list[str]]:
    labels: list[str] | None = None
    if isinstance(values, pd.DataFrame):
        if values.shape[1] != 1:
            raise ValueError(
                f"The DataFrame has {values.shape[1]} columns {list(values.columns)}; pass the "
                "accuracy column alone, e.g. frame['accuracy']."
            )
        values = values.iloc[:, 0]
    if isinstance(values, pd.Series):
        labels, values = [str(i) for i in values.index], values.to_numpy()
    elif isinstance(values, Mapping):
        labels, values = [str(i) for i in values], list(values.values())
    try:
        acc = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError(f"Accuracies must be numbers (percent), got {values!r}.") from err
    if acc.ndim != 1:
        raise ValueError(f"Accuracies must be 1-d (one per submission), got shape {acc.shape}.")
    if names is not None:
        labels = [str(x) for x in ([names] if isinstance(names, str) else names)]
    if labels is None:
        labels = [f"s{i}" for i in range(acc.size)]
    if len(labels) != acc.size:
        raise ValueError(f"{len(labels)} names given for {acc.size} accuracies.")
    if len(set(labels)) != len(labels):
        dup = sorted({x for x in labels if labels.count(x) > 1})[:10]
        raise ValueError(f"Submission names must be unique; repeated: {dup}.")
    return acc, labels


def _sizes(n: Any, labels: list[str]) -> np.ndarray:
    try:
        arr = np.asarray(n, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError(f"n (test-set size) must be a whole number >= 1, got {n!r}.") from err
    if arr.ndim > 1 or (arr.ndim == 1 and arr.size != len(labels)):
        raise ValueError(
            f"n must be one number or one per submission ({len(labels)}), got shape {arr.shape}."
        )
    arr = np.broadcast_to(arr, (len(labels),))
    bad = np.flatnonzero(~np.isfinite(arr) | (arr < 1) | (arr != np.floor(arr)))
    if bad.size:
        i = bad[0]
        raise ValueError(
            f"n of submission {labels[i]!r} is {arr[i]:g}; the test-set size must be a whole "
            "number >= 1."
        )
    return arr.astype(float)
