"""Web page fixtures: a test client on a fresh database, and a real Chromium.

The browser tests drive Debian's Chromium (`/usr/bin/chromium`, or
`CARDARENA_CHROMIUM`) through Playwright: Playwright's own browser download
does not work here. Without that binary or the `playwright` package they
*skip*, with a one-line reason saying how to run them, so the README's test
command passes on a fresh machine with nothing but Python; under CI
(`CI=true`) a missing browser *fails* them instead, so CI (which installs
Chromium in `.ci/run`) can never pass them by skipping. Screenshots of the pages
they visit are taken only on demand: `CARDARENA_SCREENS=test-output/web pytest tests/web`
(any folder; test-output/ is git-ignored).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.live import reset_db

CHROMIUM = os.environ.get("CARDARENA_CHROMIUM", "/usr/bin/chromium")
#: the folder the browser tests save their screenshots in; unset, they take none
SCREENS_ENV = "CARDARENA_SCREENS"


def screenshot(page, name: str, selector: str | None = None) -> None:
    """<name>.png in the folder `CARDARENA_SCREENS` names: the whole page, or the element
    `selector` finds. Nothing when it is unset: no test reads a screenshot (they are for a
    person to look at), and rendering a whole page to an image is much of Chromium's work
    in a test run."""
    folder = os.environ.get(SCREENS_ENV)
    if not folder:
        return
    path = Path(folder) / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    if selector is None:
        page.screenshot(path=str(path), full_page=True)
    else:
        page.locator(selector).screenshot(path=str(path))


@pytest.fixture()
def store(app, redis_url):
    """The app's store over a freshly emptied database."""
    reset_db(redis_url)
    return app.extensions["cardarena.store"]


@pytest.fixture()
def client(app, store):
    return app.test_client()


def browser_missing(env: Mapping[str, str], chromium_exists: bool, playwright_installed: bool
                    ) -> tuple[str, str] | None:
    """None when the browser tests can run; else ("skip" or "fail", the one-line reason).

    A missing browser skips them on a developer's machine but fails them under CI
    (`CI` set to true, as CI services do), where it can only mean a broken set-up.
    """
    chromium = env.get("CARDARENA_CHROMIUM", "/usr/bin/chromium")
    if not playwright_installed:
        reason = "the browser tests need the playwright package: pip install -e '.[test]'"
    elif not chromium_exists:
        reason = (f"the browser tests drive Chromium at {chromium}, which is missing: "
                  "run them after `apt-get install -y chromium` (or set CARDARENA_CHROMIUM)")
    else:
        return None
    under_ci = env.get("CI", "").strip().lower() in ("1", "true", "yes")
    return ("fail" if under_ci else "skip"), reason


def pytest_runtest_setup(item):
    """Skip (or, under CI, fail) a browser test before its other fixtures start a
    server or a worker pool for nothing."""
    if "browser" not in item.fixturenames:
        return
    missing = browser_missing(os.environ, os.path.exists(CHROMIUM),
                              importlib.util.find_spec("playwright") is not None)
    if missing is not None:
        verdict, reason = missing
        if verdict == "fail":
            pytest.fail(f"{reason} (CI=true: CI must run the browser tests)", pytrace=False)
        pytest.skip(reason)


#: the Chromium features the browser tests run without. Chromium keeps only the last
#: --disable-features switch it is given, so this is the list Playwright's launcher passes
#: (playwright 1.65) and, besides, the omnibox popups: pages Chromium renders in a process
#: of their own for every window, that is for every context a test opens, though no test
#: types in an address bar.
DISABLED_FEATURES = (
    "AvoidUnnecessaryBeforeUnloadCheckSync", "DestroyProfileOnBrowserClose", "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable", "LensOverlay", "MediaRouter", "PaintHolding",
    "ThirdPartyStoragePartitioning", "AvoidCorsURLLoaderRestartOnRedirect", "TcpPortRandomizationWin",
    "OptimizationHints", "NetworkTimeServiceQuerying", "AimEnabled", "PreconnectToSearch",
    "msForceBrowserSignIn", "msEdgeUpdateLaunchServicesPreferredVersion",
    "WebUIOmniboxPopup", "WebUIOmniboxAimPopup",
)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                              args=[f"--disable-features={','.join(DISABLED_FEATURES)}"])
        yield chromium
        chromium.close()


@pytest.fixture()
def page(browser):
    """A fresh page; any JavaScript dialog (alert…) is recorded in `page.dialogs` and dismissed."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.dialogs = []

    def on_dialog(dialog):
        page.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.set_default_timeout(10_000)
    yield page
    context.close()


@pytest.fixture()
def shot():
    """shot(page, name): `screenshot` of the whole page, when screenshots are asked for."""
    return screenshot
