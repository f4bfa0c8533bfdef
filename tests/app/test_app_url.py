"""A page's state in its URL, through the query strings a browser really sends:
cleared fields, links too long to work, bad values, and one reader for every link."""

from __future__ import annotations

import random
import string
import types
import urllib.parse

import numpy as np
import pandas as pd
import pytest

from bayescm.app import compare_logic, nolabels_logic, state
from bayescm.app import upload_logic as ul
from bayescm.app.pages_common import InputError


def _location(search: str = "") -> types.SimpleNamespace:
    """What a page reads and writes: ``pn.state.location``'s ``search``."""
    return types.SimpleNamespace(search=search)


def _one_state() -> object:
    from bayescm.app.pages.one_classifier import State

    return State()


@pytest.mark.parametrize(("make", "name", "cleared"), [
    (lambda: ul.UploadState().params(), "group", ""),            # Upload: no group column
    (lambda: compare_logic.CompareState().params(), "counts", ""),
    (_one_state, "metrics", []),                                  # One: no metric chosen
])
def test_a_field_cleared_to_empty_comes_back_empty_from_its_link(make, name, cleared):
    source, written = make(), _location()
    state.bind(source, written)
    assert getattr(source, name) != cleared  # a default that is not empty
    setattr(source, name, cleared)
    assert f"{name}=" in written.search.lstrip("?").split("&")  # urlencode writes it...
    target = make()
    problems = []
    state.bind(target, _location(written.search), on_error=problems.extend)
    assert problems == [] and getattr(target, name) == cleared  # ...parse_qs keeps it


def test_upload_link_without_a_group_column_reads_group_as_a_classifier():
    frame = pd.DataFrame({"y_true": [1, 0, 1, 0, 1, 1], "A": [1, 0, 0, 0, 1, 1],
                          "group": [0, 0, 1, 1, 0, 1]})
    query = state.link_query(ul.UploadState(group="").to_query())
    assert query == "group="
    cleared = ul.UploadState.from_query(state.parse(query))
    assert cleared.group == "" and ul.analyse(frame, cleared).kind == "compare"
    assert ul.analyse(frame, ul.UploadState()).kind == "groups"


def test_link_query_keeps_to_the_limit():
    fits = {"cases": "x" * (state.MAX_QUERY - len("cases="))}
    assert len(state.link_query(fits)) == state.MAX_QUERY
    assert state.link_query({"cases": fits["cases"] + "x"}) is None
    # the length counted is the escaped one the browser sends: "\n" is 3 characters
    assert state.link_query({"cases": "\n" * (state.MAX_QUERY // 3)}) is None


def test_the_longest_link_fits_tornados_header_limit_twice():
    """The query travels in the page's GET and, inside Bokeh's session token, in the
    websocket's ``Sec-WebSocket-Protocol`` header: with the longest query (random
    letters: what zlib cannot shrink) and a ``Referer`` as long, both fit in the request
    headers Tornado accepts by default, with 16 KB to spare."""
    from bokeh.util.token import generate_jwt_token
    from tornado.http1connection import HTTP1ConnectionParameters
    from tornado.httputil import parse_qs_bytes

    limit = HTTP1ConnectionParameters().max_header_size
    rng = random.Random(1)
    letters = "".join(rng.choice(string.ascii_letters) for _ in range(state.MAX_QUERY))
    query = state.link_query({"cases": letters[:state.MAX_QUERY - len("cases=")]})
    assert query is not None and len(query) == state.MAX_QUERY
    address = f"http://127.0.0.1:5006/compare?{query}"
    headers = {"Host": "127.0.0.1:5006", "User-Agent": "Mozilla/5.0 " + "x" * 200,
               "Accept": "text/html", "Accept-Language": "en-US", "Referer": address}
    lines = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    get = f"GET /compare?{query} HTTP/1.1\r\n{lines}\r\n"
    token = generate_jwt_token(
        "s" * 44, signed=False, extra_payload={
            "headers": headers, "cookies": {},
            "arguments": parse_qs_bytes(query, keep_blank_values=True)})
    upgrade = f"GET /compare/ws HTTP/1.1\r\n{lines}Sec-WebSocket-Protocol: bokeh, {token}\r\n\r\n"
    spare = 16 * 1024  # for cookies (4 KB each in browsers) and headers not written here
    assert len(get) + spare < limit and len(upgrade) + spare < limit, (len(get), len(upgrade))


@pytest.fixture
def served(monkeypatch):
    """Pages built as in a served session whose address bar is the returned location."""
    location = _location()
    monkeypatch.setattr(state, "_session_location", lambda: location)
    return location


def _cases(n: int) -> str:
    rng = np.random.default_rng(2)
    rows = rng.integers(0, 2, size=(n, 3))
    return "y_true, A, B\n" + "\n".join(", ".join(map(str, r)) for r in rows)


def test_a_state_too_large_for_a_link_is_not_written_and_the_page_says_so(served):
    from bayescm.app.pages.compare import Compare

    page = Compare()
    page.view()
    page.update()
    page.state.design = "paired"
    assert served.search == "?design=paired" and not page.notes["url"].text
    big = _cases(1200)  # "1,+0,+1%0A": 10 characters a case, 12,000 in all
    assert len(big) <= page.w["cases"].max_length  # the text area takes it all
    page.state.cases = big
    n = len(urllib.parse.urlencode({"design": "paired", "cases": big}, safe=",;"))
    assert n > state.MAX_QUERY
    assert served.search == ""  # the bare address rather than a link that fails
    assert page.notes["url"].text == state.TOO_LONG.format(n=n, limit=state.MAX_QUERY)
    assert page.notes["url"].__panel__().visible
    assert page.result is not None  # the page still computes: only the link is missing
    # other edits keep the note while the data stay too large
    page.state.margin = 0.01
    assert served.search == "" and page.notes["url"].text.startswith("The data are too large")
    small = _cases(100)
    page.state.cases = small
    assert not page.notes["url"].text and not page.notes["url"].__panel__().visible
    again = Compare()  # the link written now restores the page
    assert again.state.cases == small and again.state.margin == 0.01
    assert again.state.design == "paired" and not again.notes["url"].text


def test_a_bad_value_in_a_link_shows_the_url_note_and_the_rest_applies(served):
    from bayescm.app.pages.compare import Compare

    served.search = "?" + urllib.parse.urlencode({"margin": "oops", "seed": "2",
                                                   "metric": "acc", "hdi_prob": "nan"})
    page = Compare()
    note = page.notes["url"].text
    assert "margin=oops was not used" in note and "hdi_prob=nan was not used" in note
    assert (page.state.margin, page.state.hdi_prob) == (0.0, 0.95)
    assert (page.state.seed, page.state.metric) == (2, "acc")


def test_page_state_links_are_read_by_the_code_that_wrote_them():
    st = nolabels_logic.NoLabelsState(dependence="A~B", draws=500, hdi_prob=0.9, fitted=True)
    assert st.to_query() == state.changed(st.params())
    assert st.to_query() == {"dependence": "A~B", "draws": "500", "hdi_prob": "0.9",
                             "fitted": "1"}
    assert nolabels_logic.NoLabelsState.from_query(st.to_query()) == st
    # a value the page would refuse is refused here too (it was read as False)
    with pytest.raises(InputError) as err:
        nolabels_logic.NoLabelsState.from_query({"fitted": "maybe", "draws": "500"})
    assert err.value.field == "url"
    params = nolabels_logic.NoLabelsState().params()
    assert err.value.message == " ".join(state.restore(params, {"fitted": "maybe"}))
    # Upload's link to the Compare page, as the browser sends it back, restores its state
    cases = _cases(60)
    frame = ul.read_csv(cases.replace(" ", ""))
    res = ul.analyse(frame, ul.UploadState(seed=3))
    assert res.page == "compare"
    link = state.link_query(res.query)
    compare = compare_logic.CompareState().params()
    assert state.restore(compare, state.parse(link)) == []
    assert compare_logic.CompareState.from_params(compare) == res.state
