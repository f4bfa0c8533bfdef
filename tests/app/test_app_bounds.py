"""No link can stall the web server (issue 25): the pages apply the library's bounds to
the state a URL gives them -- each refused value gets its field's message, at once and
without allocating, and no fit starts -- never show a traceback, and ``bayescm app``
on a taken port fails with a plain message.  (Through the server, in Chromium:
``test_app_bounds_browser.py``.)

Measured before: the One-classifier page opened with a 100 x 100 matrix in its URL took
13 s and 3.7 GB of the server (12 min and 6.3 GB on a loaded 2-core machine);
``/nolabels?fitted=1&tune=100000000`` held the only sampler slot and grew without bound.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import socket
import subprocess
import sys
import types
import urllib.parse

import numpy as np
import pytest

from bayescm.app import fitjob, nolabels_logic, one_classifier_logic, server, state
from bayescm.app.pages_common import InputError
from tests.bounded import refused_fast

ROOT = pathlib.Path(__file__).resolve().parents[2]


def big_matrix(k: int = 100) -> str:
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 20, (k, k)) + 100 * np.eye(k, dtype=int)
    return "; ".join(",".join(map(str, row)) for row in counts)


@pytest.fixture
def served(monkeypatch):
    """Pages built as a served session opened at ``served.search`` builds them."""
    location = types.SimpleNamespace(search="")
    monkeypatch.setattr(state, "_session_location", lambda: location)
    return location


@pytest.fixture
def no_fit_starts(monkeypatch):
    started = []
    monkeypatch.setattr(fitjob.FitJob, "start", lambda self: started.append(self) or self)
    return started


def _opened(location, page_class, query: dict, *steps: str):
    location.search = "?" + urllib.parse.urlencode(query, safe=",;")
    page = page_class()
    for step in steps:
        getattr(page, step)()
    return page


def test_a_hundred_class_matrix_in_the_one_classifier_link_gets_the_matrix_message(served):
    from bayescm.app.pages.one_classifier import OneClassifier

    query = {"kind": "multiclass", "matrix": big_matrix()}

    def opened():
        page = _opened(served, OneClassifier, query)
        assert page.analysis is None and page.state.matrix == query["matrix"]
        raise InputError("matrix", page.notes["matrix"].text)

    err = refused_fast(opened, InputError)
    assert err.message.startswith("The matrix has 100 classes; this page analyses at most 20")
    assert "bcm.summary_exact" in err.message
    assert one_classifier_logic.MAX_CLASSES == 20


@pytest.mark.parametrize(("query", "field", "says"), [
    ({"fitted": "1", "tune": "100000000"}, "tune", "400,004,000 steps"),
    ({"fitted": "1", "chains": "250000"}, "chains", "250,000 chains"),
    ({"fitted": "1", "chains": "250000", "draws": "4"}, "chains", "250,000 chains"),
    ({"fitted": "1", "chains": "17"}, "chains", "more than the 16"),
    ({"fitted": "1", "draws": "10000000"}, "draws", "10,000,000 draws"),
    ({"fitted": "1", "draws": "10" * 20}, "draws", "memory"),
    ({"fitted": "1", "seed": "-1"}, "seed", "seed must be an integer in [0, 2^32)"),
])
def test_no_labels_links_with_unbounded_sampler_options_start_nothing(
        served, no_fit_starts, query, field, says):
    from bayescm.app.pages.nolabels import NoLabels

    def opened():
        page = _opened(served, NoLabels, query, "view", "edited")
        assert page.built is None and not page.runner.ready
        page.runner.start()  # what a link to a fitted page does when it opens
        raise InputError(field, page.notes[field].text)

    err = refused_fast(opened, InputError)
    assert says in err.message, err.message
    assert no_fit_starts == []


def test_a_fit_within_the_bounds_is_still_allowed(served, no_fit_starts):
    from bayescm.app.pages.nolabels import NoLabels

    page = _opened(served, NoLabels, {"draws": "500", "chains": "2"}, "view", "edited")
    assert page.built is not None and page.runner.ready
    assert fitjob.check_sampler(nolabels_logic.NoLabelsState(draws=500, chains=2)) is None


def test_the_fits_memory_estimate_is_checked_before_it_starts():
    built = nolabels_logic.build(nolabels_logic.NoLabelsState())
    big = nolabels_logic.NoLabelsState(draws=200_000, tune=1000, chains=4)
    with pytest.raises(InputError) as err:
        fitjob.check_memory(built.model, big)
    assert err.value.field == "draws" and "one fit may hold on this server" in err.value.message


def test_the_no_labels_page_takes_at_most_eight_classifiers():
    header = ", ".join("".join(p) for p in np.array(np.meshgrid(*[["+", "-"]] * 9)).reshape(
        9, -1).T)
    table = header + "\n" + ", ".join(["1"] * 2**9)
    with pytest.raises(InputError) as err:
        nolabels_logic.build(nolabels_logic.NoLabelsState(table=table))
    assert err.value.field == "table" and "at most 8" in err.value.message


def test_a_compare_link_with_an_unknown_design_gets_the_designs_message(served):
    from bayescm.app.pages.compare import Compare

    page = _opened(served, Compare, {"design": "foo"}, "view", "update")
    assert page.notes["url"].text == ("The link's value design=foo was not used: design must "
                                      "be one of independent, paired; got foo.")
    assert page.state.design == "independent" and page.result is not None
    page.w["design"].get_root()  # the buttons render (they raised on 'foo')


def test_a_page_that_cannot_be_built_shows_one_plain_line(monkeypatch):
    from bayescm.app.errors import is_user_error
    from bayescm.app.registry import page

    shown = server.failed(page("compare"), RuntimeError("boom at /work/x.py"))
    text = shown.objects[0].object
    assert 'data-testid="page-error"' in text and "Unexpected error (RuntimeError)" in text
    assert "Traceback" not in text and "/work/" not in text and 'href="./compare"' in text
    assert not is_user_error(RuntimeError())
    said = server.failed(page("one"), ValueError("seed must be an integer")).objects[0].object
    assert "seed must be an integer" in said  # the library's message for the reader's error


def test_serving_on_a_taken_port_raises_a_plain_error():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(server.PortInUse, match=f"127.0.0.1:{port}: the port is taken"):
            server.serve(port=port, threaded=True)


def test_bayescm_app_on_a_taken_port_exits_non_zero_with_a_plain_message():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "bayescm.cli", "app", "--port", str(port)],
                              capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 1
    assert "serving on" not in proc.stdout
    assert proc.stderr.strip() == (
        f"bayescm app: error: Cannot serve the app on 127.0.0.1:{port}: the port is taken "
        "(another program, or another bayescm app, listens there). Choose another port "
        "(--port), or --port 0 for a free one.")


def test_restore_refuses_a_value_outside_a_fields_choices():
    import param

    class S(param.Parameterized):
        design = param.String("independent")
        kind = param.Selector(default="binary", objects=["binary", "multiclass"])

    s = S()
    problems = state.restore(s, {"design": "foo", "kind": "x" * 500},
                             choices={"design": ("independent", "paired")})
    assert problems[0].endswith("design must be one of independent, paired; got foo.")
    assert "kind=" + "x" * 80 + "... (500 characters)" in problems[1]
    assert (s.design, s.kind) == ("independent", "binary")
    assert state.restore(s, {"design": "paired"}, choices={"design": ("paired",)}) == []
    assert s.design == "paired"


def test_check_sampler_names_the_field_over_its_bound():
    state_of = dataclasses.make_dataclass("S", [("draws", int), ("tune", int), ("chains", int),
                                                ("seed", int)])
    cases = [(state_of(1000, 10**8, 4, 1), "tune"), (state_of(1000, 1000, 250_000, 1), "chains"),
             (state_of(10**6, 1000, 4, 1), "draws"), (state_of(1000, 1000, 4, -1), "seed")]
    for s, name in cases:
        with pytest.raises(InputError) as err:
            fitjob.check_sampler(s)
        assert err.value.field == name
