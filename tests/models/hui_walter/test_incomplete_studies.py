"""Incomplete latent-class data over repeated simulated studies.

The designs and fits are those of ``benchmarks/bench_incomplete.py``, imported from
there so that the benchmark's printed figures and these assertions are about the same
thing:

* missing results: three classifiers, two populations, 30 % of the results removed
  completely at random; the 90 % intervals must cover the truth at the nominal rate
  and be wider than the complete data's;
* partial verification (Begg & Greenes, "Assessment of diagnostic tests when disease
  verification is subject to selection bias", 1983): every case a classifier calls
  positive is verified and 10 % of the others; the joint model of verified and
  unverified cases recovers Se and Sp, the naive analysis of the verified cases
  alone does not.

Tolerances: a coverage rate over S studies has binomial standard error
sqrt(0.9 * 0.1 / S) (0.047 at S = 40) when the intervals are calibrated; a test fails
below 0.9 - 3 such errors.  The intervals of one study's parameters are correlated,
so the studies, not the intervals, are the independent units.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from tests.conftest import load_script


@functools.cache
def bench():
    """The benchmark script as a module (benchmarks/ is not a package)."""
    return load_script("benchmarks/bench_incomplete.py", "bench_incomplete")


def test_one_partially_verified_study_joint_recovers_what_the_naive_analysis_misses():
    # one study of 2,000 cases (a fixed seed): the joint model's 90 % interval of each
    # Se and Sp holds the truth; the naive 90 % interval of each Sp excludes it
    # (the naive Sp is biased down by the unverified true negatives: about 0.6-0.8
    # for truths 0.90 / 0.95, many posterior sds away)
    out = bench().verification_study(11)
    truth = bench().TRUTH_VERIFIED
    for key in ("se", "sp"):
        joint = out["joint"][key]
        assert joint["covered"].all(), (key, joint)
    assert not out["naive"]["sp"]["covered"].any()
    assert (out["naive"]["sp"]["mean"] < truth["sp"] - 0.1).all()
    assert (out["naive"]["se"]["mean"] > truth["se"]).all()


@pytest.mark.slow
def test_missing_results_cover_at_the_nominal_rate_and_widen():
    studies = 40
    runs = [bench().missing_study(s) for s in range(studies)]
    floor = 0.9 - 3 * np.sqrt(0.09 / studies)
    for key in ("se", "sp", "prev"):
        cov = np.array([r["covered"][key] for r in runs]).mean(axis=0)
        assert (cov >= floor).all(), (key, cov)
        # every parameter's posterior sd is larger with 30 % of the results missing
        ratio = np.array([r["ratio"][key] for r in runs])
        assert (ratio.mean(axis=0) > 1.1).all(), (key, ratio.mean(axis=0))
    pooled = np.mean([np.concatenate([r["covered"][k] for k in ("se", "sp", "prev")])
                      for r in runs])
    assert pooled <= 0.9 + 3 * np.sqrt(0.09 / studies)  # not vacuously wide either


@pytest.mark.slow
def test_verification_bias_corrected_over_repeated_studies():
    studies = 40
    runs = [bench().verification_study(100 + s) for s in range(studies)]
    floor = 0.9 - 3 * np.sqrt(0.09 / studies)
    truth = bench().TRUTH_VERIFIED
    for key in ("se", "sp"):
        joint = np.array([r["joint"][key]["covered"] for r in runs]).mean(axis=0)
        naive = np.array([r["naive"][key]["covered"] for r in runs]).mean(axis=0)
        assert (joint >= floor).all(), (key, joint)
        means = np.array([r["joint"][key]["mean"] for r in runs])
        # the joint means scatter around the truth: |average - truth| < 3 standard errors
        err = np.abs(means.mean(axis=0) - truth[key])
        assert (err < 3 * means.std(axis=0, ddof=1) / np.sqrt(studies)).all(), (key, err)
        if key == "sp":
            assert (naive < 0.2).all(), naive
