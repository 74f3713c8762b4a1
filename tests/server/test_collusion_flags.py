"""The admin sees the pairs of accounts the collusion test flagged (docs/api.md, the ladder)."""

from __future__ import annotations

from tests.live import ADMIN_TOKEN

GAME = "duck-soup"


def test_the_flagged_pairs_are_the_admins_to_see(api):
    token = api.account("someone")
    a, b = api.bot(token, "a", GAME)["id"], api.bot(api.account("other"), "b", GAME)["id"]
    api.store.save_rating(GAME, a, 30.0, 2.0)
    api.store.save_rating(GAME, b, 20.0, 2.0)
    test = {"deals": 12, "score": 12.0, "expected": 2.5, "z": 6.4}
    api.store.save_refit(GAME, {b: (21.0, 2.0)}, {"acct_x|acct_y": test})
    assert api.get(f"/games/{GAME}/collusion").status_code == 401
    assert api.get(f"/games/{GAME}/collusion", token=token).status_code == 403
    assert api.get("/games/no-such-game/collusion", token=ADMIN_TOKEN).status_code == 404
    flags = api.ok(api.get(f"/games/{GAME}/collusion", token=ADMIN_TOKEN), 200)["flags"]
    assert [(f["accounts"], f["deals"], f["z"]) for f in flags] == [(["acct_x", "acct_y"], 12, 6.4)]
    # the refit: a bot left with no rated deal leaves the ladder, the other has its fitted rating
    rows = api.ok(api.get(f"/games/{GAME}/rankings"), 200)["rankings"]
    assert [(r["bot"], r["rating"]["mu"]) for r in rows] == [(b, 21.0)]
