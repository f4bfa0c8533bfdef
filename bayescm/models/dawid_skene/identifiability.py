r"""Is a Dawid–Skene model identified by its ratings, only by its priors, or not at all?

Given the class, the ratings of an item are independent (raters, and one rater's
repeated ratings).  Three such ratings of an item are a three-way array whose
decomposition (Kruskal 1977) is unique up to a relabelling of the classes when each
view's K×K confusion matrix has full rank: so the confusion matrices of raters who rate
items with **at least three ratings in all** (three raters, or one rater three times,
or two raters one of them twice) and the class prevalence are identified by the
ratings (Allman, Matias & Rhodes 2009, Theorem 4; Dawid & Skene's own design rated
every patient seven times).  Two ratings of an item are not enough: like Hui–Walter
with two tests in one population, they cannot tell a rater's errors from the class
prevalence.  Gold items identify the rows of the classes they cover directly.

:func:`identify` checks, for every rater, whether it rates items with three or more
ratings in all, or gold items of every class; otherwise whether its confusion rows
have informative priors (every cell's prior sd below 0.1, roughly 20 or more
pseudo-counts per row).  The verdict and its plain-words message follow Hui–Walter's:
``"data"``, ``"priors"`` or ``"none"``.  The check is about the design; a rater whose
confusion matrix is singular (always the same label) is not identified by any design.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from bayescm.data.ratings import RatingsTable
from bayescm.priors import Dirichlet

__all__ = ["INFORMATIVE_SD", "RaterIdentifiability", "identify", "informative_rows"]

INFORMATIVE_SD = 0.1


@dataclass(frozen=True)
class RaterIdentifiability:
    """How each rater's confusion matrix is identified (before sampling).

    Attributes
    ----------
    status
        ``"data"`` (every rater identified by the ratings or gold items),
        ``"priors"`` (the others only through informative priors) or ``"none"``.
    message
        The verdict in plain words, with what to do.
    raters
        ``rater -> "ratings" | "gold" | "priors" | "none"``: how it is identified.
    items_with_three
        Items with at least three ratings in all.
    gold_items
        Items with a gold label.
    """

    status: str
    message: str
    raters: dict[str, str] = field(default_factory=dict)
    items_with_three: int = 0
    gold_items: int = 0


def informative_rows(prior: Dirichlet, k: int) -> bool:
    """True when every row of a confusion prior has every cell's sd below 0.1."""
    alpha = np.broadcast_to(np.asarray(prior.alpha, dtype=float), (k, k))
    total = alpha.sum(axis=-1, keepdims=True)
    if np.any(alpha <= 0):
        return False
    mean = alpha / total
    sd = np.sqrt(mean * (1 - mean) / (total + 1))
    return bool(np.all(sd < INFORMATIVE_SD))


def identify(ratings: RatingsTable, confusion_priors: Sequence[Dirichlet]
             ) -> RaterIdentifiability:
    """The identifiability of every rater of ``ratings`` under its confusion prior.

    Examples
    --------
    >>> import numpy as np
    >>> import bayescm as bcm
    >>> from bayescm.priors import Dirichlet
    >>> two = bcm.RatingsTable(np.array([[[1, 0], [1, 0]], [[0, 1], [1, 0]]]))
    >>> flat = [Dirichlet.diagonal(2, correct=2, wrong=1)] * 2
    >>> identify(two, flat).status
    'none'
    >>> three = bcm.RatingsTable(np.array([[[1, 0], [1, 0], [0, 1]]] * 4))
    >>> identify(three, flat * 2).status
    'data'
    """
    k = ratings.n_classes
    item, rater, _, _ = ratings.entries
    per_item = ratings.ratings_per_item()
    three = per_item >= 3
    gold = ratings.gold_index
    how: dict[str, str] = {}
    for r, name in enumerate(ratings.raters):
        items = np.unique(item[rater == r])
        classes = set(gold[items][gold[items] >= 0].tolist())
        if three[items].any():
            how[name] = "ratings"
        elif len(classes) == k:
            how[name] = "gold"
        elif informative_rows(confusion_priors[r], k):
            how[name] = "priors"
        else:
            how[name] = "none"
    n3, n_gold = int(three.sum()), int((gold >= 0).sum())
    weak = [n for n, h in how.items() if h in ("priors", "none")]
    loose = [n for n, h in how.items() if h == "none"]
    shape = (f"{ratings.n_raters} rater(s), {ratings.n_items} items, {k} classes; "
             f"{n3} item(s) with at least three ratings in all, {n_gold} gold item(s)")
    remedy = (
        "Have a third rater (or the same rater again) rate some of their items, add gold "
        "labels for items of every class, or give their confusion rows informative priors "
        f"(e.g. bcm.priors.Dirichlet.diagonal({k}, correct=16, wrong=1) from an earlier "
        "labelled evaluation).")
    if not weak:
        by_gold = [n for n, h in how.items() if h == "gold"]
        note = (f" (rater(s) {by_gold} through gold items of every class)" if by_gold else "")
        message = (
            f"{shape}: every rater rates items with three or more conditionally independent "
            f"ratings, or gold items{note}, so the ratings identify every confusion matrix "
            "and the class prevalence up to a relabelling of the classes (Kruskal 1977), "
            "which the start of the chains fixes (see the model card).")
        return RaterIdentifiability("data", message, how, n3, n_gold)
    why = ("rate only items with fewer than three ratings in all (two conditionally "
           "independent ratings of an item cannot tell a rater's errors from the class "
           "prevalence) and have no gold items of every class")
    if not loose:
        message = (
            f"{shape}: rater(s) {weak} {why}; their confusion matrices are identified only "
            "through their informative priors. The posterior is as good as those priors; "
            "check how it moves when they change. " + remedy)
        return RaterIdentifiability("priors", message, how, n3, n_gold)
    message = (
        f"{shape}: rater(s) {loose} {why}, and their priors are not informative: the model "
        "is not identified, and their confusion matrices (and with them the prevalence and "
        "the item classes) are a ridge shaped by the priors, not by the data. " + remedy)
    return RaterIdentifiability("none", message, how, n3, n_gold)
