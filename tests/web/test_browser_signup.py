"""A person makes an account on the sign-in page of a platform whose sign-up is by invite
only (`CARDARENA_SIGNUP=invite`): the page asks for the invite, and its code lets them in."""

from __future__ import annotations

import pytest

from server import create_app
from tests.live import ADMIN_TOKEN, serve_in_thread


@pytest.mark.slow
def test_the_sign_in_page_takes_an_invite_when_sign_up_is_by_invite_only(page, redis_url):
    app = create_app({"REDIS_URL": redis_url, "ADMIN_TOKEN": ADMIN_TOKEN, "RATELIMIT_ENABLED": False,
                      "SIGNUP": "invite"})
    _, code = app.extensions["cardarena.store"].create_invite("for ann")
    server = serve_in_thread(app, threads=4)
    try:
        page.goto(f"{server.url}/signin")
        assert page.is_visible("#invite-only")
        page.fill("#account-name", "ann")
        page.fill("#account-invite", "cai_not-an-invite")
        page.click("#account-form button[type=submit]")
        page.wait_for_function("() => document.getElementById('account-error').textContent.length > 0")
        assert "invite" in page.inner_text("#account-error")
        page.fill("#account-invite", code)
        page.click("#account-form button[type=submit]")
        page.wait_for_selector("#new-token:not([hidden])")
        assert page.inner_text("#new-token-text").startswith("cat_")
        page.click("#signin-new")
        page.wait_for_selector("#signed-in")
        assert page.inner_text("#signed-in") == "ann"
    finally:
        server.close()
