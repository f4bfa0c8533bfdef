"""What bayescm is given: validated, immutable, labelled counts.

* :mod:`bayescm.data.counts` -- checking counts and case labels (:class:`CountsError`);
* :mod:`bayescm.data.confusion` -- :class:`ConfusionMatrix`, one or many binary matrices;
* :mod:`bayescm.data.slices` -- one classifier's cases counted by group and time window;
* :mod:`bayescm.data.multiclass` -- :class:`MulticlassConfusionMatrix` (K×K tables,
  helpers in :mod:`bayescm.data.multiclass_tables`);
* :mod:`bayescm.data.agreement` -- :class:`AgreementTable`, the outcome patterns of
  classifiers on unlabelled cases (cells in :mod:`bayescm.data.agreement_cells`);
* :mod:`bayescm.data.items` -- :class:`ItemResults`, benchmark results item by item
  (frames in :mod:`bayescm.data.items_frames`);
* :mod:`bayescm.data.fold_results` -- :class:`FoldResults`, per-fold confusion matrices
  of algorithms on data sets (frames in :mod:`bayescm.data.fold_frames`);
* :mod:`bayescm.data.datasets` -- the example data shipped with bayescm.

Everything above the data layer (priors, models, inference, analysis) takes these
objects; nothing here imports those layers.

Examples
--------
>>> from bayescm.data import ConfusionMatrix
>>> ConfusionMatrix(tp=26, fn=0, fp=2, tn=6).classifiers
('cm',)
"""

from bayescm.data.agreement import AgreementTable
from bayescm.data.confusion import UNIT_DIMS, ConfusionMatrix, unit_of
from bayescm.data.counts import (
    CELLS,
    MAX_COUNT,
    CountsError,
    check_labels,
    is_boolean,
    resolve_positive,
    unit_names,
    validate_counts,
)
from bayescm.data.fold_results import FoldResults
from bayescm.data.items import ItemResults
from bayescm.data.multiclass import MulticlassConfusionMatrix
from bayescm.data.ratings import RatingsTable

__all__ = [
    "CELLS",
    "MAX_COUNT",
    "UNIT_DIMS",
    "AgreementTable",
    "ConfusionMatrix",
    "CountsError",
    "FoldResults",
    "ItemResults",
    "MulticlassConfusionMatrix",
    "RatingsTable",
    "check_labels",
    "is_boolean",
    "resolve_positive",
    "unit_names",
    "unit_of",
    "validate_counts",
]
