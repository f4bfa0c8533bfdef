r"""Rating patterns: identical items collapsed, with their multiplicities.

An item's *pattern* is what the raters said about it: for every rater the number of
times it gave each label (an ``R × K`` array of counts; a rater who did not rate the
item has a row of zeros, one who rated it three times a row summing to three), plus
the item's gold class when it has one.  Items with the same pattern contribute the
same factor to a latent-class likelihood, so a model needs each distinct pattern once,
with its multiplicity :math:`m_p`:

.. math::

    \log L = \sum_{i=1}^{I} \log \Pr(\text{ratings of item } i)
           = \sum_{p=1}^{P} m_p \log \Pr(\text{pattern } p).

Gold items are kept apart from unlabelled items with the same ratings (their pattern
includes the class).  Patterns are numbered in the order of their first item, so the
numbering follows the data.  Collapsing is exact (a lexicographic ``np.unique`` over
each item's sorted (rater, label, count) entries), vectorised, and costs
:math:`O(I \log I)` for :math:`I` items.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["RatingPatterns", "collapse"]


@dataclass(frozen=True, eq=False)
class RatingPatterns:
    """The distinct rating patterns of a :class:`~bayescm.RatingsTable`.

    Attributes
    ----------
    counts
        ``(P, R, K)`` int64: how often each rater gave each label in pattern ``p``.
    multiplicity
        ``(P,)`` int64: how many items have pattern ``p`` (sums to the number of items).
    gold
        ``(P,)`` int64: the gold class (label position) of pattern ``p``, -1 for none.
    item_pattern
        ``(I,)`` int64: the pattern of every item.
    first_item
        ``(P,)`` int64: the first item (position) with pattern ``p``.
    indptr, rater, label, count
        The nonzero entries of ``counts`` in CSR form: pattern ``p``'s entries are
        ``rater[indptr[p]:indptr[p+1]]`` (and ``label``, ``count``), sorted by rater
        then label (what a compiled density loops over).
    """

    counts: np.ndarray
    multiplicity: np.ndarray
    gold: np.ndarray
    item_pattern: np.ndarray
    first_item: np.ndarray
    indptr: np.ndarray
    rater: np.ndarray
    label: np.ndarray
    count: np.ndarray

    def __len__(self) -> int:
        return int(self.multiplicity.size)

    @property
    def gold_mask(self) -> np.ndarray:
        """``(P, K)`` bool: the classes a pattern's items may belong to (all of them
        for unlabelled patterns, only the gold class for gold ones)."""
        k = self.counts.shape[-1]
        return (self.gold[:, None] < 0) | (self.gold[:, None] == np.arange(k)[None, :])


def collapse(item: np.ndarray, rater: np.ndarray, label: np.ndarray, count: np.ndarray,
             gold: np.ndarray, n_raters: int, n_classes: int) -> RatingPatterns:
    """Collapse COO ratings (sorted by item, rater, label; unique triples) into patterns.

    Parameters
    ----------
    item, rater, label, count
        One entry per (item, rater, label) with a positive count, sorted.
    gold
        ``(I,)`` gold class of every item (-1 for none); every item has an entry.
    n_raters, n_classes
        R and K.

    Examples
    --------
    >>> import numpy as np
    >>> # items 0 and 2 rated alike (rater 0 says class 1 twice), item 1 differently
    >>> pat = collapse(np.array([0, 1, 1, 2]), np.array([0, 0, 1, 0]), np.array([1, 0, 0, 1]),
    ...                np.array([2, 1, 1, 2]), np.array([-1, -1, -1]), 2, 2)
    >>> pat.multiplicity.tolist(), pat.item_pattern.tolist()
    ([2, 1], [0, 1, 0])
    >>> pat.counts[0].tolist()
    [[0, 2], [0, 0]]
    """
    n_items = gold.size
    per_item = np.bincount(item, minlength=n_items)
    width = int(per_item.max()) if per_item.size else 0
    starts = np.concatenate([[0], np.cumsum(per_item)[:-1]])
    slot = np.arange(item.size) - starts[item]
    # one row per item: its gold class, then its (rater, label, count) entries, padded
    rows = np.full((n_items, 1 + 3 * width), -1, dtype=np.int64)
    rows[:, 0] = gold
    for j, values in enumerate((rater, label, count)):
        rows[item, 1 + 3 * slot + j] = values
    _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    # number patterns by their first item (np.unique numbers them lexicographically)
    order = np.argsort(first, kind="stable")
    renumber = np.empty_like(order)
    renumber[order] = np.arange(order.size)
    item_pattern = renumber[inverse]
    first_item = first[order]
    multiplicity = np.bincount(item_pattern, minlength=order.size)
    n_patterns = order.size
    counts = np.zeros((n_patterns, n_raters, n_classes), dtype=np.int64)
    keep = np.isin(item, first_item)
    p_of_entry = item_pattern[item[keep]]
    counts[p_of_entry, rater[keep], label[keep]] = count[keep]
    nz_p, nz_r, nz_l = np.nonzero(counts)  # C order: by pattern, rater, label
    indptr = np.concatenate([[0], np.cumsum(np.bincount(nz_p, minlength=n_patterns))])
    out = RatingPatterns(
        counts=counts, multiplicity=multiplicity.astype(np.int64),
        gold=gold[first_item].astype(np.int64), item_pattern=item_pattern.astype(np.int64),
        first_item=first_item.astype(np.int64), indptr=indptr.astype(np.int64),
        rater=nz_r.astype(np.int64), label=nz_l.astype(np.int64),
        count=counts[nz_p, nz_r, nz_l].astype(np.int64))
    for arr in (out.counts, out.multiplicity, out.gold, out.item_pattern, out.first_item,
                out.indptr, out.rater, out.label, out.count):
        arr.setflags(write=False)
    return out
