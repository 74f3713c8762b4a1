"""`Client` reads the API's paginated lists whole: it follows `next_cursor` (issue 13)."""

from __future__ import annotations

from sdk import Client


def test_client_lists_every_bot_past_one_page_of_100(api):
    client = Client(api.live.url)
    client.create_account("many")
    made = [client.register_bot(f"bot{i}", "double", kind="polling").id for i in range(130)]
    assert [b.id for b in client.bots("double")] == made
    assert len(api.ok(api.get("/bots"), 200)["bots"]) == 100  # one page of the raw list
