"""The Upload page in real headless Chromium (issue 25): an empty file gets a message
(the browser sends it as a file name without a value, and the page used to show
nothing), and a ``truth`` column is read as the true labels, not as a classifier."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from bayescm.app import upload_logic as ul

pytestmark = pytest.mark.engine("chromium")


def test_an_empty_file_gets_a_message_then_a_good_file_its_analysis(open_page, tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    page = open_page("upload")
    upload = page.locator(".bcm-file input[type=file]")
    upload.set_input_files(str(empty))
    expect(page.get_by_test_id("error-file")).to_have_text(ul.EMPTY)
    good = tmp_path / "cases.csv"
    good.write_text("truth,A,B,C\n1,1,1,0\n0,0,1,0\n1,1,0,1\n0,0,0,0\n1,0,1,1\n")
    upload.set_input_files(str(good))
    kind = page.get_by_test_id("upload-kind")
    expect(kind).to_have_attribute("data-kind", "compare")  # labelled: A, B, C compared
    expect(kind).to_contain_text("3 classifiers (A, B, C)")
