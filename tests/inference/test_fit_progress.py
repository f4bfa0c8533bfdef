"""``fit(..., progress=)``: draws reported while sampling on every engine, then stages.

The reports must count what the engines do (every draw of every chain, tuning
included), arrive in order, end at the total, and change nothing in the fit.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayescm as bcm
from bayescm.inference import engines
from bayescm.inference.fit import FIT_STAGES, FitProgress

TABLE = {"site1": {"++": 89, "+-": 43, "-+": 55, "--": 413},
         "site2": {"++": 260, "+-": 76, "-+": 52, "--": 212}}


def _hui_walter():
    tab = bcm.AgreementTable.from_counts(TABLE)
    return bcm.models.hui_walter(tab)


def _check_draws(reports: list[tuple[int, int]], total: int) -> None:
    done = [d for d, _ in reports]
    assert {t for _, t in reports} == {total}
    assert done == sorted(done) and 0 <= done[0] and done[-1] == total


# short chains
@pytest.mark.filterwarnings("ignore::bayescm.inference.convergence.ConvergenceWarning")
def test_kernel_engine_reports_draws_in_order_and_changes_nothing(monkeypatch):
    # a report every 5 ms: a 2 x (500 + 500) draw fit (tens of ms) gives several
    monkeypatch.setattr(engines, "PROGRESS_SECONDS", 0.005)
    seen: list[FitProgress] = []
    idata = bcm.fit(_hui_walter(), draws=500, tune=500, chains=2, random_seed=3,
                    progress=seen.append)
    plain = bcm.fit(_hui_walter(), draws=500, tune=500, chains=2, random_seed=3)
    assert idata.attrs["engine"] == "bayescm-kernel"
    np.testing.assert_array_equal(idata.posterior["sensitivity"], plain.posterior["sensitivity"])
    sampling = [(p.done, p.total) for p in seen if p.stage == "sampling"]
    _check_draws(sampling, 2 * (500 + 500))
    # the stages after sampling, each once, in fit's order
    later = [p.stage for p in seen if p.stage != "sampling"]
    assert later == [s for s in FIT_STAGES if s != "sampling"]
    assert seen[-1] == FitProgress("convergence", 0, 1)


def test_nutpie_background_sampler_counts_its_draws(monkeypatch):
    """The counts read from nutpie's trace so far are the draws it has made: with a
    report every millisecond some land mid-way, and none exceeds the total.  (Long
    chains: one ``inspect()`` of the trace can take longer than 8,000 draws of this
    kernel on a loaded machine.)"""
    monkeypatch.setattr(engines, "PROGRESS_SECONDS", 0.001)
    seen: list[FitProgress] = []
    bcm.fit(_hui_walter(), draws=40_000, tune=1000, chains=2, random_seed=4,
            progress=seen.append, predictive=False, prior=False, metrics=[])
    sampling = [(p.done, p.total) for p in seen if p.stage == "sampling"]
    _check_draws(sampling, 2 * 41_000)
    assert any(0 < d < 82_000 for d, _ in sampling), sampling


def test_pymc_engine_reports_every_draw_of_every_chain(monkeypatch):
    # with no throttle the count is reported after each of PyMC's callbacks: 1, 2, ...
    monkeypatch.setattr(engines, "PROGRESS_SECONDS", 0.0)
    seen: list[FitProgress] = []
    cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bcm.fit(bcm.models.three_beta(cm), draws=60, tune=40, chains=1, engine="pymc",
                random_seed=5, progress=seen.append)
    sampling = [p.done for p in seen if p.stage == "sampling"]
    assert sampling[:-1] == list(range(1, 101)) and sampling[-1] == 100


def test_exact_sampler_reports_its_draws_at_once():
    seen: list[FitProgress] = []
    cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=100, chains=2,
            random_seed=1, progress=seen.append)
    assert seen[0] == FitProgress("sampling", 200, 200)
    assert [p.stage for p in seen] == list(FIT_STAGES)


def test_an_error_in_the_progress_function_stops_the_fit(monkeypatch):
    """A progress function that raises ends the fit with its error (nutpie's sampler
    is cancelled, not left running)."""
    monkeypatch.setattr(engines, "PROGRESS_SECONDS", 0.001)

    def fail(p: FitProgress) -> None:
        if p.stage == "sampling" and p.done < p.total:
            raise ValueError("stop")

    with pytest.raises(ValueError, match="stop"):
        bcm.fit(_hui_walter(), draws=20000, tune=1000, chains=2, random_seed=6,
                progress=fail)


@pytest.mark.parametrize("progress", [False, True, "bar"])
def test_progress_that_is_no_function_is_refused_before_sampling(progress):
    """``progress=False`` (read as the progress bar's switch) once failed inside the
    sampler with "'bool' object is not callable"; it is refused before anything runs."""
    with pytest.raises(TypeError, match="progressbar=True"):
        bcm.fit(_hui_walter(), draws=100, tune=100, chains=1, random_seed=1,
                progress=progress)
