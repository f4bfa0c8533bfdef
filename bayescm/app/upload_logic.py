r"""The Upload page's logic: a CSV of predictions becomes the right analysis.

The CSV has one row per case: optionally ``y_true`` or ``truth`` (the true label), one
column per classifier (its predicted label), optionally ``group`` (a slice such as a
site or a sex) and ``population`` (for unlabelled data: populations of different
prevalence).  Which column is what is decided by the rule of the CLI's ``--csv``
(:func:`columns`, :func:`bayescm.data.slices.prediction_columns`).
What the columns hold decides the analysis (:func:`analyse`):

============================================  ==========================================
columns                                       analysis
============================================  ==========================================
``y_true`` and one classifier                 one classifier: every metric's exact
                                              posterior (:func:`bayescm.summary_exact`)
``y_true`` and two or more classifiers        compare, paired (the Compare page on the
                                              same cases)
``y_true`` and ``group`` (or several group    the metrics per slice
columns, ``group="sex, site"``)               (:meth:`bayescm.ConfusionMatrix.from_predictions`
                                              with ``groups=``); the page can pool them
                                              (:mod:`bayescm.app.groups_logic`)
no ``y_true``, or ``y_true`` with gaps         agreement table (the No-labels page);
                                              known labels become verified cases
============================================  ==========================================

An empty prediction is a missing result (a ``"?"`` cell of the agreement table).
Where another page carries the analysis on, the result holds that page's state, so
the page can offer a link that opens it (the sufficient statistics travel in the
link, the file does not).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pandas as pd

import bayescm as bcm
from bayescm.app import compare_logic, nolabels_logic, one_classifier_logic
from bayescm.app.fitjob import check_seed
from bayescm.app.pages_common import (
    InputError,
    PageState,
    field,
    positive_label,
    read_csv_text,
)
from bayescm.data.slices import TRUTH_COLUMNS, Columns, prediction_columns

__all__ = ["EMPTY", "UploadResult", "UploadState", "agreement_text", "analyse", "columns",
           "group_columns", "read_csv"]

SUMMARY_METRICS = ("acc", "ba", "tpr", "tnr", "ppv", "npv", "f1", "mcc")
MULTICLASS_METRICS = ("acc", "ba", "kappa", "mcc", "f1_macro")
SUMMARY_DRAWS = 5000  # draws per chain x 4 chains: 20,000 i.i.d. draws per classifier
EMPTY = ("The file is empty: a CSV of predictions has a header line naming the columns "
         "(y_true, one column per classifier, optionally group and population), then one "
         "row per case.")


@dataclasses.dataclass(frozen=True)
class UploadState(PageState):
    """Options of the Upload page (the file itself is not part of the URL)."""

    truth: str = "y_true"
    group: str = "group"
    population: str = "population"
    positive: str = ""
    seed: int = 1
    # the partially pooled analysis of grouped cases (bayescm.app.groups_logic)
    pooled: str = ""  # the classifier whose groups are pooled (default: the first)
    threshold: float = 0.05
    measure: str = "tpr"  # a metric's gap, equalized_odds or demographic_parity
    draws: int = 1000
    tune: int = 1000
    chains: int = 4


@dataclasses.dataclass(frozen=True)
class UploadResult:
    """What was found in the file and what it gave.

    Attributes
    ----------
    kind
        ``"one"``, ``"compare"``, ``"groups"``, ``"agreement"`` or ``"items"``
        (item-level benchmark results: the Benchmark-items page fits them).
    description
        One sentence saying what the columns were read as and which analysis follows.
    tables
        Named result tables (each downloadable as CSV).
    page, state
        The page that carries the analysis on (``"one"``, ``"compare"``, ``"nolabels"``)
        and its state, or None.
    query
        The URL query that opens ``page`` in that state (for the One-classifier page:
        its cells, or its K-class matrix as ``labels; row; row``).
    detail
        The other page's result where it was computed here (a CompareResult, or the
        No-labels page's :class:`~bayescm.app.nolabels_logic.Built` model).
    sliced
        For grouped cases, each classifier's sliced ConfusionMatrix (by name): what
        the page's pooled analysis fits (:mod:`bayescm.app.groups_logic`); else empty.
    """

    kind: str
    description: str
    tables: dict[str, pd.DataFrame]
    page: str | None = None
    state: PageState | None = None
    detail: Any = None
    query: dict[str, str] | None = None
    sliced: dict[str, bcm.ConfusionMatrix] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.query is None and self.state is not None:
            object.__setattr__(self, "query", self.state.to_query())


def read_csv(data: bytes | str) -> pd.DataFrame:
    """The uploaded file as a DataFrame (empty cells are missing values).

    >>> read_csv(b"y_true,A\\n1,1\\n0,\\n").isna().sum().to_dict()
    {'y_true': 0, 'A': 1}
    """
    try:
        text = data.decode("utf-8-sig") if isinstance(data, bytes) else data
    except UnicodeDecodeError as err:
        raise InputError("file", f"The file is not UTF-8 text ({err.reason} at byte "
                                f"{err.start}): save it as CSV UTF-8 (Excel: Save As > "
                                "CSV UTF-8) and upload it again.") from None
    if not text.strip():
        raise InputError("file", EMPTY)
    frame = read_csv_text(text, "file")
    if frame.empty:
        raise InputError("file", "The file has no cases: one row per case below a header "
                                 "line naming the columns (y_true, one column per "
                                 "classifier, optionally group and population).")
    return frame


def agreement_text(table: bcm.AgreementTable) -> str:
    """An agreement table in the No-labels page's text format.

    >>> tab = bcm.AgreementTable.from_counts({"++": 4, "+-": 1, "-+": 0, "--": 9})
    >>> print(agreement_text(tab))
    population, ++, +-, -+, --
    all, 4, 1, 0, 9
    >>> nolabels_logic.parse_table(agreement_text(tab)) == tab
    True
    """
    frame = table.to_frame()
    lines = [", ".join(["population", *frame.columns])]
    lines += [", ".join([str(p), *(str(int(v)) for v in row)])
              for p, row in zip(frame.index, frame.to_numpy(), strict=True)]
    return "\n".join(lines)


def analyse(frame: pd.DataFrame, state: UploadState) -> UploadResult:
    """Choose and run the analysis the columns call for (see the module documentation).

    Examples
    --------
    >>> frame = read_csv("y_true,A\\n1,1\\n1,0\\n0,0\\n0,0\\n1,1")
    >>> result = analyse(frame, UploadState())
    >>> result.kind, result.tables["counts"].loc["A"].tolist()
    ('one', [2, 1, 0, 2])
    >>> result.query
    {'tp': '2', 'fn': '1', 'fp': '0', 'tn': '2', 'metrics': 'acc,ba,tpr,tnr,ppv,npv,f1,mcc'}
    >>> analyse(read_csv("A,B\\n1,1\\n0,1\\n0,0"), UploadState()).kind
    'agreement'
    """
    with field("seed"):  # a link's or a typed seed=-1 gets the field's message
        check_seed(state.seed)
    if {"item", "model", "correct"} <= {str(c).lower() for c in frame.columns}:
        return _items(frame)
    roles = columns(frame, state)
    classifiers = list(roles.classifiers)
    if not classifiers:
        raise InputError("file", f"No classifier columns: every column other than the true "
                                 f"labels, the group and the population columns is read as "
                                 f"one classifier's predictions, and there are none in "
                                 f"{list(frame.columns)}.")
    truth = frame[roles.truth] if roles.truth is not None else None
    if truth is None or truth.isna().any():
        return _agreement(frame, classifiers, truth, state, roles)
    positive = positive_label(state.positive, truth,
                              where=f"the labels in column {roles.truth} of the file")
    if roles.groups:
        return _groups(frame, classifiers, truth, positive, state, list(roles.groups))
    if len(classifiers) == 1:
        return _one(frame, classifiers[0], truth, positive, state)
    return _compare(frame, classifiers, state, roles.truth)


def columns(frame: pd.DataFrame, state: UploadState) -> Columns:
    """Which column is what (:func:`bayescm.data.slices.prediction_columns`, the CLI's
    rule): a column named in a field must be in the file (else that field's message);
    with a field at its default, the true labels are ``y_true`` or ``truth``, the
    groups ``group`` and the population ``population`` when the file has them.

    >>> columns(read_csv("truth,A,B,C\\n1,1,0,1"), UploadState()).describe()
    "true labels 'truth'; classifier(s) 'A', 'B', 'C'"
    """
    default = UploadState()
    names = {"truth": [state.truth], "group": group_columns(state),
             "population": [state.population]}
    for name, given in names.items():
        missing = [c for c in given if c and c not in frame.columns]
        if missing and getattr(state, name) != getattr(default, name):
            what = {"truth": "the true labels", "group": "a group",
                    "population": "the population"}[name]
            raise InputError(name, f"No column {', '.join(map(repr, missing))} ({what}) in "
                                   f"the file; its columns are "
                                   f"{', '.join(map(str, frame.columns))}.")

    def given(name: str) -> str | None:
        value = getattr(state, name)
        return value if value and value != getattr(default, name) else None

    groups = names["group"] if given("group") or not state.group.strip() else None
    return prediction_columns(frame.columns, truth=given("truth"),
                              population=given("population"), groups=groups)


def _one(frame: pd.DataFrame, name: str, truth: pd.Series, positive: Any,
         state: UploadState) -> UploadResult:
    with field("file"):
        if _n_labels(frame[[name]], truth) > 2:
            data: Any = bcm.MulticlassConfusionMatrix.from_predictions(
                truth.to_numpy(), frame[name].to_numpy(), classifier=name)
            metrics = MULTICLASS_METRICS
        else:
            data = bcm.ConfusionMatrix.from_predictions(truth.to_numpy(), frame[name].to_numpy(),
                                                        positive=positive, classifier=name)
            metrics = SUMMARY_METRICS
        # the One-classifier page's own analysis: its link shows these very numbers
        table = one_classifier_logic.analyse(data, metrics=list(metrics),
                                             seed=state.seed).table
    return UploadResult("one", f"Read {len(frame)} labelled cases of one classifier "
                               f"({name}): its metrics' posteriors.",
                        {"counts": data.to_frame(), "summary": table}, page="one",
                        query=_one_query(data, metrics, state.seed))


def _one_query(data: Any, metrics: Any, seed: int) -> dict[str, str]:
    """The One-classifier page's URL query for one confusion matrix, its metrics and
    seed (what the page needs to show the Upload page's numbers)."""
    options = {"metrics": ",".join(metrics), **({"seed": str(seed)} if seed != 1 else {})}
    if isinstance(data, bcm.ConfusionMatrix):
        return {**{c: str(v) for c, v in data.to_dict().items()}, **options}
    rows = [",".join(str(v) for v in row) for row in data.counts[0].tolist()]
    return {"kind": "multiclass", "matrix": "; ".join([",".join(map(str, data.labels)), *rows]),
            **options}


def _compare(frame: pd.DataFrame, classifiers: list[str], state: UploadState,
             truth: str) -> UploadResult:
    text = frame[[truth, *classifiers]].rename(columns={truth: "y_true"}).to_csv(index=False)
    cstate = compare_logic.CompareState(design="paired", cases=text.strip(),
                                        positive=state.positive, seed=state.seed)
    try:
        result = compare_logic.run(cstate)
    except InputError as err:
        raise InputError("positive" if err.field == "positive" else "file", err.message) from None
    return UploadResult(
        "compare", f"Read {len(frame)} labelled cases of {len(classifiers)} classifiers "
                   f"({', '.join(classifiers)}) on the same cases: a paired comparison "
                   "and a leaderboard.",
        {"comparison": result.comparison_table, "leaderboard": result.leaderboard_table},
        page="compare", state=cstate, detail=result)


def group_columns(state: UploadState) -> list[str]:
    """The group columns: one name, or several separated by commas (``sex, site``:
    every intersection is a slice).

    >>> group_columns(UploadState(group="sex, site"))
    ['sex', 'site']
    """
    return [g.strip() for g in state.group.split(",") if g.strip()]


def _groups(frame: pd.DataFrame, classifiers: list[str], truth: pd.Series, positive: Any,
            state: UploadState, names: list[str]) -> UploadResult:
    tables, matrices = [], {}
    with field("file"):
        for name in classifiers:
            cm = bcm.ConfusionMatrix.from_predictions(
                truth.to_numpy(), frame[name].to_numpy(), positive=positive,
                groups={g: frame[g].to_numpy() for g in names})
            t = bcm.summary_exact(cm, metrics=list(SUMMARY_METRICS), draws=SUMMARY_DRAWS,
                                  random_seed=state.seed)
            tables.append(pd.concat({name: t}, names=["classifier"]))
            matrices[name] = cm
    n_slices = len(frame[names].drop_duplicates())
    return UploadResult(
        "groups", f"Read {len(frame)} labelled cases in {n_slices} groups of column(s) "
                  f"{', '.join(names)}: each classifier's metrics per group.",
        {"summary": pd.concat(tables)}, sliced=matrices)


def _agreement(frame: pd.DataFrame, classifiers: list[str], truth: pd.Series | None,
               state: UploadState, roles: Columns) -> UploadResult:
    population = frame[roles.population] if roles.population else None
    where = (f"No true-label column ({' or '.join(TRUTH_COLUMNS)}; name yours in the "
             "True-label column field): " if truth is None else "")
    if len(classifiers) < 2:
        raise InputError("file", f"{where}without true labels for every case, the analysis "
                                 "is an agreement table, which needs the predictions of at "
                                 "least two classifiers (one column each); the file has "
                                 f"{', '.join(map(str, frame.columns))}.")
    with field("file"):
        table = bcm.AgreementTable.from_predictions(
            {c: frame[c].to_numpy() for c in classifiers},
            population=None if population is None else population.to_numpy(),
            positive=positive_label(state.positive, pd.concat([frame[c] for c in classifiers]),
                                    where="the labels the classifiers predict"),
            y_true=None if truth is None else truth.to_numpy())
    nstate = nolabels_logic.NoLabelsState(table=agreement_text(table), seed=state.seed)
    built = nolabels_logic.build(nstate)
    how = (f"some cases verified ({roles.truth} where known)" if truth is not None
           else f"no true labels (no column {' or '.join(TRUTH_COLUMNS)})")
    return UploadResult(
        "agreement", f"Read {len(frame)} cases of {len(classifiers)} classifiers with {how}, "
                     f"in {len(table.populations)} population(s): an agreement table for the "
                     "latent-class model.",
        {"agreement": table.to_frame()}, page="nolabels", state=nstate, detail=built)


def _n_labels(preds: pd.DataFrame, truth: pd.Series) -> int:
    values = pd.concat([truth, *(preds[c] for c in preds.columns)])
    return int(values.nunique())


def _items(frame: pd.DataFrame) -> UploadResult:
    """Item-level benchmark results: read (and checked) as the Benchmark-items page reads
    them, each model's mean score shown; that page fits them (the link holds the data)."""
    from bayescm.app import items_logic

    text = frame.to_csv(index=False).strip()
    try:
        results = items_logic.parse_results(text)
    except InputError as err:
        raise InputError("file", err.message) from None
    scores = results.successes_array / results.trials_array
    table = pd.DataFrame({"n_items": results.n_items, "mean": scores.mean(axis=1)},
                         index=pd.Index(results.models, name="model"))
    clusters = "" if results.clusters is None else f" in {results.n_clusters} clusters"
    return UploadResult(
        "items", f"Read item-level benchmark results of {results.n_models} model(s) on "
                 f"{results.n_items} items{clusters}: the Benchmark-items page fits the "
                 "item-level model (bayescm's, CLT and clustered-SE intervals, tied sets).",
        {"models": table}, page="items", query={"results": text})
