"""Hui–Walter (issue 25): many classifiers are refused before their 2^T patterns are
laid out, priors mostly outside Se + Sp > 1 are cut with a plain-words warning, and
the identifiability warning is said once per build, at the reader's own line."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayescm as bcm
from bayescm.models.hui_walter import IdentifiabilityWarning, PriorTruncationWarning
from bayescm.models.hui_walter.probabilities import MAX_DESIGN, check_size
from tests.bounded import refused_fast

TAB = {"site1": {"++": 89, "+-": 43, "-+": 55, "--": 413},
       "site2": {"++": 260, "+-": 76, "-+": 52, "--": 212}}


def _table(t: int) -> bcm.AgreementTable:
    """A complete table of ``t`` classifiers (every pattern seen once)."""
    return bcm.AgreementTable(np.ones((1, 2**t), dtype=int),
                              classifiers=[f"c{i}" for i in range(t)])


def test_sixteen_classifiers_are_refused_at_once_with_what_to_use_instead():
    """Before the bound: 32 GiB for each of the design's two 65,536 x 65,536 matrices
    (a raw MemoryError after 8 s)."""
    table = _table(16)
    # bayescm's one size error (a ValueError), the same class the fit's bounds raise
    err = refused_fast(lambda: bcm.models.hui_walter(table), bcm.SizeError,
                       match="16 classifiers")
    assert "dawid_skene" in str(err) and "32.0 GiB" in str(err)


def test_the_bound_admits_eleven_classifiers_and_refuses_twelve():
    names = [f"c{i}" for i in range(12)]
    check_size(names[:11], ["x"] * 2**11)  # 4,194,304 entries: the most admitted
    assert 2**11 * 2**11 == MAX_DESIGN
    with pytest.raises(ValueError, match="12 classifiers"):
        check_size(names, ["x"] * 2**12)
    # cells with missing results count too
    with pytest.raises(ValueError, match="11 classifiers"):
        check_size(names[:11], ["x"] * (2**11 + 1))


@pytest.mark.parametrize(("se", "sp", "cut"), [
    ("beta:2,8", "beta:2,8", "99.83%"),  # error rates given for the rates
    ("beta:1,3", "beta:1,3", "95.00%"),
    ("beta:1,1", "beta:1,2", "66.67%"),
])
def test_priors_mostly_outside_se_plus_sp_above_one_are_cut_with_a_warning(se, sp, cut):
    tab = bcm.AgreementTable.from_counts(TAB)
    with pytest.warns(PriorTruncationWarning) as record:
        bcm.models.hui_walter(tab, priors={"sensitivity": {"A": se}, "specificity": {"A": sp}})
    assert len(record) == 1
    text = str(record[0].message)
    assert f"put {cut} of their mass where Se + Sp < 1" in text and "'A'" in text
    assert record[0].filename == __file__  # the reader's own line


@pytest.mark.parametrize("priors", [
    None,                                                   # Beta(1, 1): exactly half kept
    {"sensitivity": "beta:0.5,0.5", "specificity": "beta:0.5,0.5"},  # Jeffreys
    {"sensitivity": "beta:3,3", "specificity": "beta:3,3"},
    {"sensitivity": "beta:20,4", "specificity": "beta:2,1"},
])
def test_priors_that_keep_half_or_more_are_cut_silently(priors):
    tab = bcm.AgreementTable.from_counts(TAB)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PriorTruncationWarning)
        bcm.models.hui_walter(tab, priors=priors)


@pytest.mark.filterwarnings("ignore::bayescm.ConvergenceWarning")
def test_the_identifiability_warning_is_said_once_per_build_at_the_readers_line(tmp_path):
    tab = bcm.AgreementTable.from_counts({"++": 40, "+-": 3, "-+": 7, "--": 100})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = bcm.models.hui_walter(tab)
        idata = bcm.fit(model, draws=60, tune=60, chains=2, random_seed=1)
    said = [w for w in caught if issubclass(w.category, IdentifiabilityWarning)]
    assert len(said) == 1 and said[0].filename == __file__  # the build says it, fit not
    path = bcm.save(idata, tmp_path / "fit.nc")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bcm.rebuild(bcm.load(path))  # a rebuild is a build: once, here (not in bayescm)
    said = [w for w in caught if issubclass(w.category, IdentifiabilityWarning)]
    assert len(said) == 1 and said[0].filename == __file__
