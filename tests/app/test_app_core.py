"""The web app's framework, without a browser: pages, URL state, error notes, downloads,
``bcm.app()`` and ``bayescm app``."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import bayescm as bcm
from bayescm.app import errors, registry, state
from bayescm.app.downloads import (
    NOTHING,
    csv_download,
    figure_downloads,
    netcdf_download,
    new_figure,
    refresh_downloads,
)
from bayescm.app.server import routes, wait_listening

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_pages_are_discovered_and_the_first_is_also_the_root():
    pages = registry.pages()
    assert pages[0].slug == "one" and pages[0].title == "One classifier"
    assert [p.order for p in pages] == sorted(p.order for p in pages)
    paths = routes()
    assert next(iter(paths)) == "/" and {p.slug for p in pages} <= set(paths)
    with pytest.raises(ValueError, match="slug"):
        registry.Page(slug="Two Words", title="x", build=lambda: None)
    with pytest.raises(KeyError, match="No page 'nope'"):
        registry.page("nope")


def test_url_state_round_trips_every_kind_of_parameter():
    from bayescm.app.pages.one_classifier import State

    changed = {"kind": "multiclass", "tp": 40, "hdi": 0.9, "metrics": ["tnr", "f1"],
               "matrix": "a,b; 5,1; 2,7", "prior_tpr": "elicit:0.9,0.8,0.95"}
    source = State(**changed)
    # through the query string the page writes (urlencode) and reads (parse_qs)
    link = state.link_query(state.changed(source))
    assert "metrics=tnr,f1" in link.split("&") and "tp=40" in link.split("&")
    query = state.parse(link)
    assert set(query) == set(changed)
    target = State()
    assert state.restore(target, query) == []
    assert {k: getattr(target, k) for k in changed} == changed
    # a hand-edited link: the bad value is reported by name and the rest still applies
    problems = state.restore(target, {"hdi": "x", "tp": "4.5", "fn": "3"}, ["hdi", "tp", "fn"])
    assert len(problems) == 2 and "hdi=x" in problems[0] and "tp=4.5" in problems[1]
    assert target.fn == 3 and target.hdi == 0.9


def test_error_note_shows_the_library_message_and_never_a_traceback(caplog):
    note = errors.ErrorNote("matrix")
    with pytest.raises(bcm.CountsError) as err:
        bcm.ConfusionMatrix(tp=1.5, fn=0, fp=2, tn=6)
    assert note.run(lambda: bcm.ConfusionMatrix(tp=1.5, fn=0, fp=2, tn=6)) is None
    assert note.text == str(err.value) and note.__panel__().visible
    assert 'data-testid="error-matrix"' in note.__panel__().object
    cm = note.run(lambda: bcm.ConfusionMatrix(tp=1, fn=0, fp=2, tn=6))
    assert cm.n[0] == 9 and note.text == "" and not note.__panel__().visible
    # a bug is one line (its type and message) for the reader, a traceback in the log
    assert note.run(_boom) is None
    assert note.text.startswith("Unexpected error (RuntimeError: boom)")
    assert "Traceback" not in note.text and "boom" in caplog.text


def _boom():
    raise RuntimeError("boom")


def test_downloads_serve_the_results(tmp_path):
    frame = pd.DataFrame({"metric": ["tpr"], "mean": [0.9]}).set_index("metric")
    assert csv_download(lambda: frame, "s.csv").callback().getvalue() == frame.to_csv()
    # nothing to download: the button is disabled, and a click racing an edit gets a
    # file that says so under a name that says so (never an empty s.csv)
    result = None
    button = csv_download(lambda: result, "s.csv")
    refresh_downloads([button])
    assert button.disabled and "no result" in button.description
    assert (button.callback().getvalue(), button.filename) == (NOTHING, "nothing-to-download.txt")
    result = frame
    refresh_downloads([button])
    assert not button.disabled
    assert (button.callback().getvalue(), button.filename) == (frame.to_csv(), "s.csv")
    fig, ax = new_figure()
    ax.plot([0, 1], [0, 1])
    png, svg = (b.callback().getvalue() for b in figure_downloads(lambda: fig, "plot"))
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and b"<svg" in svg[:500]
    cm = bcm.ConfusionMatrix(tp=26, fn=0, fp=2, tn=6)
    idata = bcm.fit(bcm.models.three_beta(cm), sampler="exact", draws=50, random_seed=1)
    data = netcdf_download(lambda: idata, "fit.nc").callback().getvalue()
    (tmp_path / "fit.nc").write_bytes(data)
    back = bcm.load(tmp_path / "fit.nc")
    np.testing.assert_array_equal(back.posterior["tnr"].values, idata.posterior["tnr"].values)


def test_bcm_app_builds_the_pages_for_jupyter(monkeypatch):
    import dataclasses

    import panel as pn

    from bayescm.app import server

    built = []

    def counted(page):
        def build():
            built.append(page.slug)
            return page.build()
        return dataclasses.replace(page, build=build)

    real = registry.pages()
    monkeypatch.setattr(server, "pages", lambda: [counted(p) for p in real])
    tabs = bcm.app()
    assert isinstance(tabs, pn.Tabs)
    assert [t for t in tabs._names] == [p.title for p in real]
    assert built == []  # nothing is built before it is shown
    tabs.get_root()  # shown: the first tab only
    assert built == [real[0].slug]
    tabs.active = 2
    assert built == [real[0].slug, real[2].slug]
    one = bcm.app("one")
    html = "".join(str(getattr(o, "object", "")) for o in one.select(pn.pane.HTML))
    assert 'data-testid="tnr-hdi-lower"' in html  # the cocaine example, computed


def test_bayescm_app_prints_its_address_and_serves_until_stopped():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "bayescm.cli", "app", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert line.startswith("bayescm app: serving on http://127.0.0.1:"), line
        port = int(line.split("127.0.0.1:")[1].split("/")[0])
        assert wait_listening(port, timeout=5) < 5  # it listens when it says so
    finally:
        proc.terminate()  # SIGTERM stops it as Ctrl+C does: a clean exit
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "Traceback" not in err


def test_bayescm_app_without_panel_says_how_to_install_it(monkeypatch, capsys):
    import importlib.util

    from bayescm import cli

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "panel" else real(name, *a))
    assert cli.main(["app"]) == 2
    assert "pip install 'bayescm[app]'" in capsys.readouterr().err

