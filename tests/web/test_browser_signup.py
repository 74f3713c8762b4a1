"""A person makes an account on the sign-in page of a platform whose sign-up is by invite
only (`CARDARENA_SIGNUP=invite`): the page asks for the invite, and its code lets them in."""

from __future__ import annotations

import pytest

from tests.live import served_api


@pytest.mark.slow
def test_the_sign_in_page_takes_an_invite_when_sign_up_is_by_invite_only(page, redis_url):
    settings = {"CARDARENA_RATE_LIMITS": "off", "CARDARENA_SIGNUP": "invite"}
    with served_api(redis_url, settings, name="invite") as server:
        _, code = server.store.create_invite("for ann")
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
