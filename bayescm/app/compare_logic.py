r"""The Compare page's logic: is one classifier better than another, and who wins?

Two designs (:attr:`CompareState.design`):

* ``"independent"``: every classifier has its own test set, typed as one row of
  confusion-matrix counts per classifier (header ``name, tp, fn, fp, tn``; cells are
  read by their names, in any order).  A versus B is
  :func:`bayescm.analysis.compare` (the difference of independent three-Beta
  posteriors, Beta(1, 1) priors); the leaderboard is
  :func:`bayescm.analysis.leaderboard` on the batch.
* ``"paired"``: one test set's predictions, a CSV with column ``y_true`` and one
  column per classifier.  A versus B is :func:`bayescm.analysis.compare_paired`, which
  models the joint outcome of every case so that the errors the two classifiers share
  are accounted for; the leaderboard ranks each classifier's confusion matrix, which
  treats their test sets as independent (the page says so).

"Better by a margin" is P(m_A - m_B > margin) for a higher-is-better metric and
P(m_A - m_B < -margin) otherwise (the library's :class:`~bayescm.analysis.Comparison`).
Nothing here imports a web framework: :func:`run` takes a :class:`CompareState` and
returns a :class:`CompareResult` of tables, figures and notes, or raises
:class:`~bayescm.app.pages_common.InputError` naming the field at fault.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

import bayescm as bcm
from bayescm.app.downloads import SCREEN_DPI, new_figure, to_bytes
from bayescm.app.fitjob import check_seed
from bayescm.app.folds_logic import DEFAULT_FOLDS
from bayescm.app.pages_common import (
    InputError,
    PageState,
    field,
    positive_label,
    read_csv_text,
    read_table,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["DEFAULT_COUNTS", "DEFAULT_PREDICTIONS", "CompareResult", "CompareState",
           "parse_counts", "parse_predictions", "run", "seeds"]

DEFAULT_COUNTS = """name, tp, fn, fp, tn
A, 40, 7, 8, 15
B, 31, 9, 13, 20
C, 36, 11, 9, 17"""
"""Three classifiers on their own test sets (the first two are
:func:`bayescm.analysis.compare`'s example)."""

DEFAULT_PREDICTIONS = "y_true, A, B\n" + "\n".join(
    f"{y}, {a}, {b}" for y, a, b in
    [(1, 1, 1)] * 30 + [(1, 1, 0)] * 6 + [(1, 0, 1)] * 2 + [(1, 0, 0)] * 4
    + [(0, 0, 0)] * 35 + [(0, 0, 1)] * 5 + [(0, 1, 0)] * 1 + [(0, 1, 1)] * 3)
"""86 cases of a paired test: A and B share most of their errors."""

COMPARE_DRAWS = 20_000  # draws of the difference (Monte Carlo sd of P <= 0.0036)
BOARD_DRAWS = 4000  # joint draws of the leaderboard (sd of a rank probability <= 0.008)


#: The Compare page's mode for two algorithms across folds and data sets.
ACROSS_FOLDS = "folds"

@dataclasses.dataclass(frozen=True)
class CompareState(PageState):
    """Inputs of the Compare page (every field travels in the page's URL)."""

    design: str = "independent"
    counts: str = DEFAULT_COUNTS
    cases: str = DEFAULT_PREDICTIONS  # the paired design's predictions
    positive: str = ""
    metric: str = "ba"
    label: str = ""  # the class of a per-class metric of K-class matrices ("f1" of "cat")
    margin: float = 0.0
    a: str = ""
    b: str = ""
    hdi_prob: float = 0.95
    seed: int = 1
    # ACROSS_FOLDS: two algorithms across cross-validation folds / data sets (folds_logic)
    mode: str = "classifiers"
    folds: str = DEFAULT_FOLDS
    rope: float = 0.01
    plug_in: bool = False
    draws: int = 1000  # the hierarchical model across data sets (NUTS)
    tune: int = 1000
    chains: int = 4
    fitted: bool = False  # a shared link of a fitted comparison fits again when opened


@dataclasses.dataclass(frozen=True)
class CompareResult:
    """What the page shows: A versus B, the leaderboard, and notes."""

    names: list[str]
    a: str
    b: str
    comparison: Any  # bayescm.analysis.Comparison
    board: Any  # bayescm.analysis.Leaderboard
    notes: list[str]

    @property
    def comparison_table(self) -> pd.DataFrame:
        frame = self.comparison.to_frame()
        frame.index = pd.MultiIndex.from_tuples([(self.a, self.b)], names=["a", "b"])
        return frame

    @property
    def leaderboard_table(self) -> pd.DataFrame:
        return self.board.to_frame()

    def difference_figure(self) -> Figure:
        """Histogram of the posterior of metric_A - metric_B with its HDI and the margin."""
        comp = self.comparison
        fig, ax = new_figure(6, 3.2)
        d = comp.difference.values.reshape(-1)
        ax.hist(d, bins=60, color="#4c72b0", alpha=0.8)
        lo, hi = comp.hdi
        ax.axvspan(lo, hi, color="#4c72b0", alpha=0.12, label=f"{comp.hdi_prob:.0%} HDI")
        edge = comp.margin if comp.higher_is_better else -comp.margin
        ax.axvline(edge, color="#c44e52", ls="--", label=f"margin ({comp.event})")
        ax.set_xlabel(f"{comp.metric}: {self.a} - {self.b}")
        ax.set_ylabel("posterior draws")
        ax.set_title(f"P({comp.event}) = {comp.probability:.3f}")
        ax.legend(loc="upper left", fontsize=8, frameon=False)
        return fig

    def leaderboard_figure(self) -> Figure:
        """The rank probabilities as a heat map (:func:`bayescm.plots.leaderboard`): a
        new Figure, the caller's own."""
        return _board_figure(self.board, len(self.names))

    def leaderboard_png(self) -> bytes:
        """:meth:`leaderboard_figure` as PNG at the page's resolution, remembered with
        its leaderboard: an edit of the margin or of A and B keeps the leaderboard, so
        the same bytes come back (the page compares them by identity to skip a redraw).

        >>> res = run(CompareState())
        >>> png = res.leaderboard_png()
        >>> png[:4], run(CompareState(margin=0.1)).leaderboard_png() is png
        (b'\\x89PNG', True)
        """
        return _board_png(self.board, len(self.names))


def _board_figure(board: Any, n: int) -> Figure:
    fig, ax = new_figure(6, 1.2 + 0.5 * min(n, 10), right=0.5)  # the colour bar's label
    bcm.plots.leaderboard(board, ax=ax)
    return fig


@functools.lru_cache(maxsize=16)
def _board_png(board: Any, n: int) -> bytes:
    # Drawing the heat map is most of an edit's time, so it is remembered across edits
    # and sessions.  The cache holds immutable bytes, never the Figure: a Figure shared
    # by every session could be drawn into, resized or saved by two at once (a Jupyter
    # kernel and the server, or a download while another session shows it), and would
    # keep its canvas and every artist alive for all of them.
    return to_bytes(_board_figure(board, n), "png", dpi=SCREEN_DPI)


def parse_counts(text: str) -> bcm.ConfusionMatrix | bcm.MulticlassConfusionMatrix:
    """Confusion matrices typed one per line under a header ``name, tp, fn, fp, tn``,
    or K-class matrices one per line as ``name: labels; row; row; ...``.

    Binary: the cells are read by the header's names (any order); the first column
    names the classifiers.  K-class: each line is a name, a colon and the matrix in the
    One-classifier page's format (:func:`bayescm.data.text.parse_matrix`: the labels,
    then row ``i`` the counts of actual class ``i`` by predicted class); every line
    must have the same labels.

    Examples
    --------
    >>> cms = parse_counts("name, tn, fp, fn, tp\\nX, 15, 8, 7, 40\\nY, 20, 13, 9, 31")
    >>> cms.classifiers, cms.to_frame().loc["X"].to_dict()
    (('X', 'Y'), {'tp': 40, 'fn': 7, 'fp': 8, 'tn': 15})
    >>> k = parse_counts("A: cat,dog,bird; 50,3,2; 4,40,6; 1,2,30\\n"
    ...                  "B: cat,dog,bird; 45,8,2; 6,38,6; 3,2,28")
    >>> k.classifiers, list(k.labels)
    (('A', 'B'), ['cat', 'dog', 'bird'])
    """
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    if lines and ":" in lines[0]:
        return _parse_multiclass(lines)
    names, columns, rows = read_table(text, "counts", header_hint="name, tp, fn, fp, tn",
                                     is_value=lambda h: h.lower() in bcm.CELLS)
    lower = [c.lower() for c in columns]
    if sorted(lower) != sorted(bcm.CELLS):
        raise InputError("counts", f"The header must name the four cells {', '.join(bcm.CELLS)} "
                                   f"(after a name column), got {', '.join(columns)}.")
    values = np.array(rows, dtype=float)
    cells = {c: values[:, lower.index(c)] for c in bcm.CELLS}
    names = names or [f"C{i + 1}" for i in range(len(rows))]
    with field("counts"):
        return bcm.ConfusionMatrix(**cells, classifier=names)


def _parse_multiclass(lines: list[str]) -> bcm.MulticlassConfusionMatrix:
    from bayescm.data.text import parse_matrix

    names, matrices, labels = [], [], None
    for i, line in enumerate(lines, start=1):
        name, sep, rest = line.partition(":")
        if not sep or not name.strip():
            raise InputError("counts", f"Line {i}: write one K-class matrix per line as "
                                       f"'name: labels; row; row', got {line!r}.")
        with field("counts"):
            these, counts = parse_matrix(rest, what=f"line {i} ({name.strip()})")
        if labels is not None and these != labels:
            raise InputError("counts", f"Line {i} has labels {these}, line 1 {labels}: every "
                                       "classifier must be tested on the same classes.")
        labels = these
        names.append(name.strip())
        matrices.append(counts)
    with field("counts"):
        return bcm.MulticlassConfusionMatrix(np.array(matrices), labels, classifier=names)


def parse_predictions(text: str) -> tuple[pd.Series, pd.DataFrame]:
    """``y_true`` and one column of predictions per classifier, from pasted CSV.

    >>> y, preds = parse_predictions("y_true, A, B\\n1, 1, 0\\n0, 0, 0")
    >>> y.tolist(), list(preds.columns)
    ([1, 0], ['A', 'B'])
    """
    frame = read_csv_text(text, "cases")
    if "y_true" not in frame.columns:
        raise InputError("cases", "The first line must name the columns: y_true (the "
                                        "true labels) and one column per classifier, got "
                                        f"{', '.join(frame.columns)}.")
    preds = frame.drop(columns="y_true")
    if preds.shape[1] < 2:
        raise InputError("cases", "A paired comparison needs the predictions of at "
                                        "least two classifiers: one column each after y_true.")
    if frame.empty:
        raise InputError("cases", "No cases: give one line per case below the header.")
    return frame["y_true"], preds


def _pick(state: CompareState, names: list[str]) -> tuple[str, str]:
    a = state.a or names[0]
    b = state.b or next(n for n in names if n != a)
    for key, value in (("a", a), ("b", b)):
        if value not in names:
            raise InputError(key, f"No classifier named {value!r}; the classifiers are "
                                  f"{', '.join(names)}.")
    if a == b:
        raise InputError("b", "Choose two different classifiers to compare.")
    return a, b


def seeds(seed: int) -> tuple[int, int]:
    """The seeds of the comparison and of the leaderboard drawn from the page's seed (so
    that anyone can reproduce the page's numbers with the library).

    >>> seeds(1) == seeds(1) != seeds(2)
    True
    """
    a, b = np.random.default_rng(seed).integers(2**31, size=2)
    return int(a), int(b)


def run(state: CompareState) -> CompareResult:
    """Compare A with B and rank every classifier, for the state's inputs.

    Examples
    --------
    >>> res = run(CompareState(metric="tpr", margin=0.02))
    >>> res.a, res.b, list(res.board.summary.index)
    ('A', 'B', ['A', 'B', 'C'])
    >>> res.comparison.event
    'A - B > 0.02'
    """
    with field("margin"):
        if not np.isfinite(state.margin):
            raise ValueError(f"margin must be a finite number, got {state.margin!r}.")
    with field("hdi_prob"):
        bcm.stats.check_hdi_prob(state.hdi_prob)
    if state.design not in ("independent", "paired"):
        raise InputError("design", f"design must be 'independent' or 'paired', "
                                   f"got {state.design!r}.")
    notes: list[str] = []
    with field("seed"):  # a link's or a typed seed=-1 gets the field's message
        check_seed(state.seed)
    seed_ab, seed_board = seeds(state.seed)
    if state.design == "independent":
        data = parse_counts(state.counts)
        names = list(data.classifiers)
        if len(names) < 2:
            raise InputError("counts", "Give at least two classifiers, one per line.")
        a, b = _pick(state, names)
        label = _label(state, data)
        # a per-class metric's errors are about its class once one is given
        with field("label" if label is not None else "metric"):
            comparison = bcm.analysis.compare(
                (data, a), (data, b), state.metric, state.margin, label=label,
                hdi_prob=state.hdi_prob, draws=COMPARE_DRAWS, random_seed=seed_ab)
    else:
        y, preds = parse_predictions(state.cases)
        names = [str(c) for c in preds.columns]
        preds.columns = names
        a, b = _pick(state, names)
        positive = positive_label(state.positive, y,
                                  where="the true labels (column y_true)")
        with field("metric"):
            comparison = bcm.analysis.compare_paired(
                y, preds[a], preds[b], state.metric, state.margin, positive=positive,
                hdi_prob=state.hdi_prob, draws=COMPARE_DRAWS, random_seed=seed_ab)
        with field("cases"):
            data = _batch(y, preds, positive)
        notes.append("The leaderboard ranks each classifier's confusion matrix on its own, "
                     "as if their test sets were independent; the comparison of A and B "
                     "above accounts for the cases they share.")
    with field("metric"):
        board = leaderboard(data, state.metric, state.hdi_prob, seed_board,
                            label=_label(state, data))
    return CompareResult(names, a, b, comparison, board, notes)


@functools.lru_cache(maxsize=64)
def leaderboard(data: Any, metric: str, hdi_prob: float, seed: int, *,
                label: Any = None) -> Any:
    """:func:`bayescm.analysis.leaderboard` of ``data``, remembered: an edit of the margin
    or of A and B leaves the leaderboard (and its figure) as they were."""
    return bcm.analysis.leaderboard(data, metric, label=label, hdi_prob=hdi_prob,
                                    draws=BOARD_DRAWS, random_seed=seed)


def _label(state: CompareState, data: Any) -> Any:
    """The class label the page's text names (a K-class matrix's labels may be
    numbers), or None; an unknown label goes to the library, whose message lists
    the known ones."""
    if not state.label:
        return None
    return next((x for x in getattr(data, "labels", ()) if str(x) == state.label),
                state.label)


def _batch(y: pd.Series, preds: pd.DataFrame, positive: Any) -> Any:
    """Each classifier's confusion matrix: binary for two labels, else K-class."""
    labels = pd.unique(pd.concat([y, *(preds[c] for c in preds.columns)]))
    columns = {c: preds[c].to_numpy() for c in preds.columns}
    if len(labels) <= 2:
        return bcm.ConfusionMatrix.from_predictions(y.to_numpy(), columns, positive=positive)
    return bcm.MulticlassConfusionMatrix.from_predictions(y.to_numpy(), columns)
