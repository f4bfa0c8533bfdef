r"""Cells of an agreement table: complete, missing results and verified cases.

A case of T classifiers falls into one **cell**, named by the classifiers' calls in
order, first classifier first: ``"+"`` (positive), ``"-"`` (negative) or ``"?"`` (no
result), followed by ``"|D+"`` or ``"|D-"`` when the case's true class is known
(a verified case).  ``"+-"`` is an unverified case the first classifier called
positive and the second negative; ``"+?"`` one the second classifier gave no result
for; ``"--|D+"`` a verified positive both called negative.

Cells group into **blocks** of cases observed the same way: the same classifiers
gave a result, and the case was verified or not.  Within a block the cells'
probabilities sum to one, so each block is a multinomial with its own number of
cases.  With :math:`\Pr(r \mid D^\pm)` the probabilities of the :math:`2^T`
complete patterns :math:`r` given the class and :math:`\pi` the prevalence, a cell
:math:`c` with calls compatible with the set :math:`R(c)` of complete patterns has

.. math::

    \Pr(c) = \pi \sum_{r \in R(c)} \Pr(r \mid D^+) \, [c \text{ not verified negative}]
           + (1 - \pi) \sum_{r \in R(c)} \Pr(r \mid D^-) \, [c \text{ not verified positive}].

The sums over :math:`R(c)` *sum the missing results out*; the indicator keeps only
the verified class.  This is the likelihood of the observed data when whether a
result is missing, and whether a case is verified, depends only on what was
observed (missing at random; Little & Rubin, "Statistical Analysis with Missing
Data", 2002): then the missingness and verification mechanisms factor out of the
likelihood and can be ignored.  Verification that depends on the classifiers'
results — verify every positive and a sample of negatives — is of this kind, so the
joint model corrects the verification bias of Begg & Greenes ("Assessment of
diagnostic tests when disease verification is subject to selection bias", 1983)
without being told how cases were chosen.  It does not cover results that are
missing *because of* the unobserved class (e.g. a classifier that fails more often
on positives).

:class:`CellDesign` holds the two 0/1 matrices of the sums above, ``pos`` and
``neg`` (cell x complete pattern), and each cell's block; a table of complete,
unverified cases has ``pos = neg = I`` and one block.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bayescm.data.confusion import CountsError

CALLS = "+-?"
VERIFIED = ("|D+", "|D-")


def patterns(n_classifiers: int) -> tuple[str, ...]:
    """Complete pattern names for ``n_classifiers`` classifiers, ``"+" * T`` first.

    >>> patterns(2)
    ('++', '+-', '-+', '--')
    """
    return tuple("".join(p) for p in itertools.product("+-", repeat=n_classifiers))


def parse_cell(name: str) -> tuple[str, str | None]:
    """Split a cell name into its calls and its verified class (``"+"``, ``"-"`` or None).

    >>> parse_cell("+?|D-")
    ('+?', '-')
    """
    text = str(name)
    truth = None
    for suffix in VERIFIED:
        if text.endswith(suffix):
            text, truth = text[: -len(suffix)], suffix[-1]
    if not text or set(text) - set(CALLS):
        raise CountsError(
            f"Cell {name!r} is not a pattern: one call per classifier, each '+', '-' or '?' "
            "(no result), optionally followed by '|D+' or '|D-' for a verified case "
            "(e.g. '+-', '+?', '--|D+')."
        )
    return text, truth


def block_of(name: str) -> tuple[bool, str]:
    """The block of a cell: (verified, mask) with mask ``"1"`` where a result exists."""
    calls, truth = parse_cell(name)
    return truth is not None, "".join("0" if c == "?" else "1" for c in calls)


def block_cells(verified: bool, mask: str) -> tuple[str, ...]:
    """Every cell of one block, in canonical order (``+`` before ``-``; D+ before D-)."""
    observed = [i for i, m in enumerate(mask) if m == "1"]
    subs = []
    for calls in itertools.product("+-", repeat=len(observed)):
        chars = ["?"] * len(mask)
        for i, c in zip(observed, calls, strict=True):
            chars[i] = c
        subs.append("".join(chars))
    if not verified:
        return tuple(subs)
    return tuple(s + v for v in VERIFIED for s in subs)


def _block_order(block: tuple[bool, str]) -> tuple[int, int, str]:
    verified, mask = block
    # unverified before verified, more results before fewer, then earlier classifiers first
    return int(verified), -mask.count("1"), "".join("0" if m == "1" else "1" for m in mask)


def canonical_cells(names: Sequence[str], n_classifiers: int) -> tuple[str, ...]:
    """All cells of the blocks that ``names`` touch, complete patterns first.

    The complete, unverified patterns are always present (in :func:`patterns` order);
    every other block present in ``names`` contributes all of its cells, so that a
    predictive draw can fall in a cell no observed case fell in.

    >>> canonical_cells(["++", "+?", "-+|D+"], 2)[4:]
    ('+?', '-?', '++|D+', '+-|D+', '-+|D+', '--|D+', '++|D-', '+-|D-', '-+|D-', '--|D-')
    """
    blocks = {(False, "1" * n_classifiers)}
    for name in names:
        calls, _ = parse_cell(name)
        if len(calls) != n_classifiers:
            raise CountsError(
                f"Cell {name!r} has {len(calls)} calls; the table has {n_classifiers} "
                "classifier(s): every cell names one call per classifier."
            )
        blocks.add(block_of(name))
    return tuple(c for b in sorted(blocks, key=_block_order) for c in block_cells(*b))


@dataclass(frozen=True)
class CellDesign:
    """How each cell's probability follows from the complete patterns' probabilities.

    Attributes
    ----------
    cells
        Cell names (C).
    pos, neg
        0/1 float arrays (C, 2**T): ``Pr(c) = pi * pos @ Pr(r | D+) + (1 - pi) * neg @
        Pr(r | D-)``.
    block
        Block index of each cell (C,); cells of one block are one multinomial.
    blocks
        (verified, mask) of each block.
    """

    cells: tuple[str, ...]
    pos: np.ndarray
    neg: np.ndarray
    block: np.ndarray
    blocks: tuple[tuple[bool, str], ...]

    @property
    def complete(self) -> bool:
        """True for a table of complete, unverified cases only (``pos = neg = I``)."""
        return len(self.blocks) == 1 and not self.blocks[0][0] and "0" not in self.blocks[0][1]


def cell_design(cells: Sequence[str], n_classifiers: int) -> CellDesign:
    """The :class:`CellDesign` of cells (in the given order).

    >>> d = cell_design(["++", "+-", "-+", "--", "+?", "-?"], 2)
    >>> d.pos[4].tolist(), d.block.tolist()
    ([1.0, 1.0, 0.0, 0.0], [0, 0, 0, 0, 1, 1])
    """
    full = patterns(n_classifiers)
    pos = np.zeros((len(cells), len(full)))
    neg = np.zeros((len(cells), len(full)))
    block_ids: dict[tuple[bool, str], int] = {}
    block = np.empty(len(cells), dtype=np.int64)
    for c, name in enumerate(cells):
        calls, truth = parse_cell(name)
        fits = np.array([all(x == "?" or x == y for x, y in zip(calls, r, strict=True))
                         for r in full], dtype=float)
        pos[c] = fits if truth in (None, "+") else 0.0
        neg[c] = fits if truth in (None, "-") else 0.0
        block[c] = block_ids.setdefault(block_of(name), len(block_ids))
    return CellDesign(tuple(cells), pos, neg, block, tuple(block_ids))
