"""Which pairs of classifiers a Hui–Walter model gives conditionally dependent errors.

``conditional_dependence`` is ``False``/``None`` (none), ``True`` (every pair) or a
sequence of pairs of classifier names; :func:`dependent_pairs` turns it into sorted
index pairs and refuses anything else with a message saying what to pass.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

__all__ = ["dependent_pairs"]

_HOW = ("conditional_dependence takes False (none), True (every pair) or a list of "
        "pairs of classifier names such as [('A', 'B')]")


def dependent_pairs(conditional_dependence: Any, classifiers: Sequence[str]
                    ) -> list[tuple[int, int]]:
    """Index pairs ``(i, j)``, ``i < j``, of the classifiers with dependent errors.

    >>> dependent_pairs([("B", "A"), ("A", "B")], ["A", "B", "C"])
    [(0, 1)]
    >>> dependent_pairs(True, ["A", "B", "C"])
    [(0, 1), (0, 2), (1, 2)]
    """
    if conditional_dependence is False or conditional_dependence is None:
        return []
    if isinstance(conditional_dependence, (str, bytes)) or not (
            conditional_dependence is True or isinstance(conditional_dependence, Sequence)):
        raise TypeError(f"{_HOW}; got {conditional_dependence!r}.")
    if len(classifiers) < 2:
        raise ValueError(
            "Conditional dependence is between the errors of two classifiers, but this table "
            f"has one ({classifiers[0]!r}); use conditional_dependence=False, or add a "
            "classifier's results.")
    if conditional_dependence is True:
        return list(itertools.combinations(range(len(classifiers)), 2))
    pairs: list[tuple[int, int]] = []
    for pair in conditional_dependence:
        if (isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence)
                or len(pair) != 2 or pair[0] == pair[1]):
            raise ValueError(f"{_HOW}: a dependent pair names two different classifiers, "
                             f"got {pair!r}.")
        try:
            i, j = sorted(classifiers.index(str(c)) for c in pair)
        except ValueError:
            raise ValueError(
                f"Pair {tuple(pair)} names a classifier not in {list(classifiers)}."
            ) from None
        if (i, j) not in pairs:
            pairs.append((i, j))
    return pairs
