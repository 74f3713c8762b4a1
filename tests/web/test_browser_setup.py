"""Whether the browser tests run, skip or fail is decided from the environment alone; the
browser they run opens no page of its own beside theirs."""

from __future__ import annotations

import pytest

from tests.web.conftest import browser_missing


def test_with_chromium_and_playwright_the_browser_tests_run():
    assert browser_missing({}, chromium_exists=True, playwright_installed=True) is None
    assert browser_missing({"CI": "true"}, chromium_exists=True, playwright_installed=True) is None


def test_a_machine_without_chromium_skips_them_saying_how_to_run_them():
    verdict, reason = browser_missing({}, chromium_exists=False, playwright_installed=True)
    assert verdict == "skip"
    assert "apt-get install -y chromium" in reason and "/usr/bin/chromium" in reason
    assert "\n" not in reason


def test_the_reason_names_the_configured_chromium():
    _, reason = browser_missing({"CARDARENA_CHROMIUM": "/opt/chrome"}, chromium_exists=False,
                                playwright_installed=True)
    assert "/opt/chrome" in reason


def test_without_playwright_they_skip_saying_what_to_install():
    verdict, reason = browser_missing({}, chromium_exists=True, playwright_installed=False)
    assert verdict == "skip" and "pip install -e '.[test]'" in reason


@pytest.mark.parametrize("ci", ["true", "True", "1", "yes"])
def test_under_ci_a_missing_browser_is_a_failure(ci):
    assert browser_missing({"CI": ci}, chromium_exists=False, playwright_installed=True)[0] == "fail"
    assert browser_missing({"CI": ci}, chromium_exists=True, playwright_installed=False)[0] == "fail"


@pytest.mark.parametrize("ci", ["", "false", "0"])
def test_ci_unset_or_false_still_skips(ci):
    assert browser_missing({"CI": ci}, chromium_exists=False, playwright_installed=True)[0] == "skip"


def test_a_context_opens_no_page_of_the_browsers_own(browser):
    """Chromium's own pages for a window (the omnibox popup) would cost each test's context a
    renderer process: the browser fixture turns them off."""
    context = browser.new_context()
    try:
        context.new_page().goto("data:text/html,<p>a page</p>")
        session = browser.new_browser_cdp_session()
        targets = session.send("Target.getTargets", {"filter": [{}]})["targetInfos"]  # every kind
        session.detach()
    finally:
        context.close()
    assert [t["url"] for t in targets if t["type"] == "browser_ui"] == []
    assert [t["url"] for t in targets if t["type"] == "page"] == ["data:text/html,<p>a page</p>"]
