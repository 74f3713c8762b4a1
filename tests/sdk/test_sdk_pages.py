"""`Client` reads the API's paginated lists whole: it follows `next_cursor` (issue 13)."""

from __future__ import annotations

from sdk import Client


def test_client_lists_every_bot_past_one_page_of_100(api):
    made = []
    for owner in ("many", "more"):  # an account has at most 100 active bots: two make 130
        client = Client(api.live.url)
        client.create_account(owner)
        made += [client.register_bot(f"{owner}{i}", "double", kind="polling").id for i in range(65)]
    assert [b.id for b in client.bots("double")] == made
    assert len(api.ok(api.get("/bots"), 200)["bots"]) == 100  # one page of the raw list
