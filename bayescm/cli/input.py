"""What ``bayescm summarize`` reads: the confusion matrix its options describe.

Binary cells (``--tp --fn --fp --tn``), a K-class matrix written inline (``--matrix``),
the K-class matrices of classifiers' predictions in a CSV (``--csv``), or one
classifier's predictions in a CSV sliced by groups and time windows (``--csv`` with
``--groups`` / ``--time --window``, read by :mod:`bayescm.cli.slices`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bayescm.cli import slices as cli_slices
from bayescm.data.counts import CELLS
from bayescm.data.text import parse_matrix

__all__ = ["summarize_input"]


def summarize_input(args: argparse.Namespace) -> Any:
    """The confusion matrix the options describe: binary cells, --matrix or --csv."""
    import bayescm as bcm

    cells = {c: getattr(args, c) for c in CELLS}
    given = [c for c, v in cells.items() if v is not None]
    sources = [f"--{c}" for c in given[:1]] + [f"--{x}" for x in ("matrix", "csv")
                                               if getattr(args, x) is not None]
    if cli_slices.wants_slices(args) and sources != ["--csv"]:
        raise ValueError("--groups, --time and --window slice the predictions of --csv FILE "
                         "(one classifier's); give --csv.")
    if len(sources) != 1:
        raise ValueError("Give one confusion matrix: --tp --fn --fp --tn (binary), --matrix "
                         "'labels; row; ...' or --csv FILE (K classes)"
                         + (f"; got {' and '.join(sources)}." if sources else "."))
    if given:
        missing = [f"--{c}" for c in CELLS if cells[c] is None]
        if missing:
            raise ValueError(f"A binary matrix needs all four cells; missing {missing}.")
        return bcm.ConfusionMatrix(**cells)
    if args.matrix is not None:
        labels, rows = parse_matrix(args.matrix)
        return bcm.MulticlassConfusionMatrix(rows, labels=labels)
    if cli_slices.wants_slices(args):
        return cli_slices.read_sliced_csv(args.csv, truth=args.truth_column,
                                          classifiers=args.classifiers, groups=args.groups,
                                          time=args.time, window=args.window,
                                          positive=args.positive)
    return _csv_matrices(args.csv, truth=args.truth_column, classifiers=args.classifiers,
                         labels=args.labels)


def _csv_matrices(path: Path, *, truth: str, classifiers: str | None, labels: str | None
                  ) -> Any:
    """The K-class matrices of a CSV of predictions (labels read as text)."""
    import bayescm as bcm

    # labels as written: pandas would read 0/1 as int, and as float in a column with a blank
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    cols = classifiers.split(",") if classifiers else [c for c in frame.columns if c != truth]
    missing = [c for c in [truth, *cols] if c not in frame.columns]
    if missing:
        raise ValueError(f"Columns {missing} are not in {path} ({list(frame.columns)}); the "
                         "true labels are --truth-column (default y_true).")
    if not cols:
        raise ValueError(f"{path} has no column of predictions besides {truth!r}.")
    for col in [truth, *cols]:
        empty = np.flatnonzero(frame[col].str.strip() == "")
        if empty.size:
            raise ValueError(f"Column {col!r} of {path} has no label in row {empty[0] + 2} "
                             f"(and {empty.size - 1} more); every case needs its labels.")
    order = labels.split(",") if labels else _label_order(frame[[truth, *cols]])
    return bcm.MulticlassConfusionMatrix.from_predictions(
        frame[truth].to_numpy(), {c: frame[c].to_numpy() for c in cols}, labels=order)


def _label_order(frame: pd.DataFrame) -> list[str]:
    """Every label in the frame, numerically ordered when all are integers."""
    seen = sorted(set(frame.to_numpy().ravel()))
    try:
        return sorted(seen, key=int)
    except ValueError:
        return seen
