"""Web page fixtures: a test client on a fresh database, and a real Chromium.

The browser tests drive Debian's Chromium (`/usr/bin/chromium`) through
Playwright: Playwright's own browser download does not work here. Without
that binary, or without the `playwright` package, the browser tests *fail*
saying what to install — they never pass silently. Screenshots go to
`test-output/web/` at the repository root (git-ignored).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.live import reset_db

CHROMIUM = os.environ.get("CARDARENA_CHROMIUM", "/usr/bin/chromium")
SHOTS = Path(__file__).resolve().parents[2] / "test-output" / "web"


@pytest.fixture()
def store(app, redis_url):
    """The app's store over a freshly emptied database."""
    reset_db(redis_url)
    return app.extensions["cardarena.store"]


@pytest.fixture()
def client(app, store):
    return app.test_client()


@pytest.fixture(scope="session")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the browser tests need the playwright package: pip install -e '.[test]'")
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"the browser tests drive Debian's Chromium at {CHROMIUM}, which is missing: "
                    "install it with `apt-get install -y chromium` (CI's .ci/run does); "
                    "Playwright's own browser download does not work here")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
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
    """shot(page, name): a full-page screenshot in test-output/web/<name>.png."""
    SHOTS.mkdir(parents=True, exist_ok=True)

    def take(page, name: str) -> Path:
        path = SHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take
