"""Whether the browser tests run, skip or fail is decided from the environment alone."""

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
