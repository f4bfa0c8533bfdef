"""What ``bayescm summarize`` and ``bayescm unlabeled`` read: the data their options describe.

Binary cells (``--tp --fn --fp --tn``), a K-class matrix written inline (``--matrix``),
or a CSV of predictions (``--csv``), one row per case.  A CSV's columns are read by the
rule the app's Upload page uses (:func:`bayescm.data.slices.prediction_columns`): the
true labels in ``--truth`` (alias ``--truth-column``; default the first of ``y_true``,
``truth`` present), a ``group`` column (or ``--groups COL ...``) slices the cases, a
``population`` column (or ``--population-column``) separates populations of unlabelled
data, and every other column (or ``--classifiers``) holds one classifier's predictions.

``summarize --csv`` reads labels with at most two values as binary confusion matrices
(``three_beta``; the positive label is ``--positive``, else 1 or True), more than two
(or ``--labels``) as K-class ones, and groups and time windows as slices
(:mod:`bayescm.cli.slices`; several classifiers: the classifier is one more slicing
level).  ``unlabeled --csv`` builds the agreement table, a known true label making its
case verified, an empty cell a missing result.  Either says on stderr which column it
took as what.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bayescm.cli import slices as cli_slices
from bayescm.data.counts import CELLS
from bayescm.data.slices import Columns, prediction_columns
from bayescm.data.text import parse_matrix

__all__ = ["read_csv", "read_table", "summarize_input", "unlabeled_csv"]

NOT_USED = {
    "population": "populations separate unlabelled data: bayescm unlabeled",
    "group": "the agreement table is per population; slice labelled cases with "
             "bayescm summarize",
}


def summarize_input(args: argparse.Namespace) -> Any:
    """The confusion matrix the options describe: binary cells, --matrix or --csv."""
    import bayescm as bcm

    cells = {c: getattr(args, c) for c in CELLS}
    given = [c for c, v in cells.items() if v is not None]
    sources = [f"--{c}" for c in given[:1]] + [f"--{x}" for x in ("matrix", "csv")
                                               if getattr(args, x) is not None]
    if cli_slices.wants_slices(args) and sources != ["--csv"]:
        raise ValueError("--groups, --time and --window slice the predictions of --csv FILE; "
                         "give --csv.")
    if len(sources) != 1:
        raise ValueError("Give one confusion matrix: --tp --fn --fp --tn (binary), --matrix "
                         "'labels; row; ...' or --csv FILE (predictions)"
                         + (f"; got {' and '.join(sources)}." if sources else "."))
    if given:
        missing = [f"--{c}" for c in CELLS if cells[c] is None]
        if missing:
            raise ValueError(f"A binary matrix needs all four cells; missing {missing}.")
        return bcm.ConfusionMatrix(**cells)
    if args.matrix is not None:
        labels, rows = parse_matrix(args.matrix)
        return bcm.MulticlassConfusionMatrix(rows, labels=labels)
    return _csv_matrices(args)


def read_csv(path: Path) -> pd.DataFrame:
    """The CSV with every cell as written (pandas would read 0/1 as int, and as float in a
    column with a blank); an empty file or one without cases is an error naming it."""
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path} is empty: a CSV of predictions has a header line naming "
                         "its columns, then one row per case.") from None
    except pd.errors.ParserError as err:
        raise ValueError(f"Cannot read {path} as CSV ({str(err).strip()[:160]}).") from None
    if frame.empty:
        raise ValueError(f"{path} has no cases: one row per case below the header line "
                         f"({', '.join(frame.columns)}).")
    return frame


def read_table(path: Path, rows: str) -> pd.DataFrame:
    """The CSV with pandas' types (numbers as numbers); an empty or unreadable file, or
    one without rows, is an error naming it and what its ``rows`` should be."""
    try:
        frame = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path} is empty: give a header line naming the columns, then "
                         f"{rows}.") from None
    except pd.errors.ParserError as err:
        raise ValueError(f"Cannot read {path} as CSV ({str(err).strip()[:160]}).") from None
    if frame.empty:
        raise ValueError(f"{path} has no rows: give {rows}.")
    return frame


def _split(text: str | None) -> list[str] | None:
    return None if text is None else [c.strip() for c in text.split(",") if c.strip()]


def _check_blanks(frame: pd.DataFrame, path: Path, cols: list[str], groups: list[str]) -> None:
    for col in cols:
        blank = np.flatnonzero(frame[col].str.strip() == "")
        if blank.size:
            what = ("fill it with an explicit level (e.g. 'missing') or drop those rows"
                    if col in groups else "every case needs its labels")
            raise ValueError(f"Column {col!r} of {path} has no label in row {blank[0] + 2} "
                             f"(and {blank.size - 1} more); {what}.")


def _say(path: Path, roles: Columns, how: str, unused: dict[str, str]) -> None:
    """The line on stderr: which column was taken as what, and what follows."""
    notes = "".join(f"; column {c!r} not used ({why})" for c, why in unused.items())
    print(f"bayescm: read {path}: {roles.describe(list(unused))}{notes}; {how}",
          file=sys.stderr)


def _csv_matrices(args: argparse.Namespace) -> Any:
    """Binary, K-class or sliced matrices of a CSV of predictions (module notes)."""
    import bayescm as bcm

    path = args.csv
    frame = read_csv(path)
    time = args.time
    roles = prediction_columns(frame.columns, truth=args.truth_column, groups=args.groups,
                               population=args.population_column,
                               classifiers=_split(args.classifiers),
                               reserved=[time] if time else [])
    if roles.truth is None:
        raise ValueError(f"{path} has no column of true labels (looked for y_true and truth; "
                         f"its columns are {list(frame.columns)}): name it with --truth COL, "
                         "or summarise unlabelled predictions with bayescm unlabeled --csv.")
    cols = list(roles.classifiers)
    if not cols:
        raise ValueError(f"{path} has no column of predictions besides the true labels "
                         f"{roles.truth!r}, groups and population ({list(frame.columns)}).")
    groups = list(roles.groups)
    _check_blanks(frame, path, [roles.truth, *cols, *groups], groups)
    labels = set(frame[roles.truth]) | {v for c in cols for v in frame[c]}
    unused = {roles.population: NOT_USED["population"]} if roles.population else {}
    sliced = bool(groups) or time is not None or args.window is not None
    if sliced and args.labels is not None:
        raise ValueError("--labels orders the classes of K-class matrices; slices are binary "
                         "confusion matrices (--positive picks the positive label).")
    if args.labels is None and (sliced or len(labels) <= 2):
        if len(labels) > 2:
            raise ValueError(f"Slices are binary confusion matrices, but the labels of {path} "
                             f"take {len(labels)} values {sorted(labels)[:10]}.")
        try:
            positive = cli_slices.positive_label(labels, args.positive)
        except ValueError as err:
            raise ValueError(f"{str(err).rstrip('.')} (or --labels {','.join(sorted(labels))} "
                             "for the K-class model).") from None
        if sliced:
            data = cli_slices.sliced_matrix(frame, path, roles, time=time, window=args.window,
                                            positive=positive)
            how = f"positive label {positive!r}: binary confusion matrices per slice"
        else:
            data = bcm.ConfusionMatrix.from_predictions(
                frame[roles.truth].to_numpy(), {c: frame[c].to_numpy() for c in cols},
                positive=positive)
            how = f"positive label {positive!r}: binary confusion matrices"
        _say(path, roles, how, unused)
        return data
    if args.positive is not None:
        raise ValueError(f"--positive picks one of two labels (binary matrices), but {path} "
                         f"has {len(labels)} labels, read as K-class matrices; drop it.")
    order = _split(args.labels) or _label_order(labels)
    data = bcm.MulticlassConfusionMatrix.from_predictions(
        frame[roles.truth].to_numpy(), {c: frame[c].to_numpy() for c in cols}, labels=order)
    _say(path, roles, f"labels {', '.join(map(str, data.labels))}: K-class confusion matrices "
                      f"(K = {data.n_classes})", unused)
    return data


def _label_order(labels: set[str]) -> list[str]:
    """Every label, numerically ordered when all are integers."""
    seen = sorted(labels)
    try:
        return sorted(seen, key=int)
    except ValueError:
        return seen


def unlabeled_csv(args: argparse.Namespace) -> Any:
    """The agreement table of a CSV of predictions (``bayescm unlabeled --csv``)."""
    import bayescm as bcm

    path = args.csv
    frame = read_csv(path)
    roles = prediction_columns(frame.columns, truth=args.truth_column,
                               population=args.population_column,
                               classifiers=_split(args.classifiers))
    cols = list(roles.classifiers)
    if len(cols) < 2 and not args.prior:  # as the Upload page: T = 1 needs stated priors
        raise ValueError(
            f"{path} has {len(cols)} column(s) of predictions {cols} besides the true labels "
            "and population: without labels, the agreement table of one classifier says "
            "nothing about it unless priors do; give two or more classifiers' columns, or "
            "informative --prior sensitivity=... and --prior specificity=....")
    if roles.population:
        _check_blanks(frame, path, [roles.population], [roles.population])

    def values(col: str) -> np.ndarray:  # an empty cell: a missing result or label
        return frame[col].where(frame[col].str.strip() != "", None).to_numpy(dtype=object)

    labels = {v for c in [*cols, *filter(None, [roles.truth])] for v in frame[c] if v.strip()}
    positive = cli_slices.positive_label(labels, args.positive)
    table = bcm.AgreementTable.from_predictions(
        {c: values(c) for c in cols}, positive=positive,
        population=None if roles.population is None else frame[roles.population].to_numpy(),
        y_true=None if roles.truth is None else values(roles.truth))
    how = (f"positive label {positive!r}: the agreement table"
           + (", cases with a true label verified" if roles.truth else ""))
    _say(path, roles, how, {g: NOT_USED["group"] for g in roles.groups})
    return table
