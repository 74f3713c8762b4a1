"""`sdk.Client` against the live referee API: every method, and one error type for every failure."""

from __future__ import annotations

import socket

import pytest

from sdk import BotInfo, CardarenaError, Client, GameInfo, Match, Tournament
from tests.live import ADMIN_TOKEN

GAME = "double-carre"


@pytest.fixture()
def client(api):
    """A client of a new account on an emptied database."""
    c = Client(api.live.url)
    c.create_account("alice")
    yield c
    c.close()


def test_create_account_returns_the_token_once_and_the_client_keeps_it(api):
    c = Client(api.live.url)
    account = c.create_account("bob")
    assert account.name == "bob" and account.id and account.token
    assert c.token == account.token
    other = c.create_account("carol")  # a client with a token keeps its own
    assert c.token == account.token and other.token != account.token


def test_register_bot_of_each_kind_shows_the_secret_once(client, api):
    polling = client.register_bot("poller", GAME, kind="polling")
    webhook = client.register_bot("hooked", GAME, kind="webhook", url="http://127.0.0.1:8001/")
    python = Client(api.live.url, token=ADMIN_TOKEN).register_bot(
        "rnd", GAME, kind="python", entrypoint="example_bots.random:RandomBot")
    for bot, kind in ((polling, "polling"), (webhook, "webhook"), (python, "python")):
        assert isinstance(bot, BotInfo) and bot.kind == kind and bot.game == GAME
        assert bot.secret
        assert client.bot(bot.id).secret is None
    assert webhook.url == "http://127.0.0.1:8001/"
    assert "secret" not in repr(polling) and polling.secret not in repr(polling)


def test_bots_lists_them_and_bot_reads_one_with_its_rating(client):
    a = client.register_bot("a", GAME, kind="polling")
    b = client.register_bot("b", "soupe-gertrude", kind="polling")
    assert [x.id for x in client.bots()] == [a.id, b.id]
    assert [x.id for x in client.bots(game=GAME)] == [a.id]
    got = client.bot(a)  # a BotInfo or its id
    assert got.id == a.id and got.name == "a" and got.matches == 0 and got.faults == 0
    assert got.rating is not None and got.rating.sigma > 0
    assert got.raw["id"] == a.id


def test_a_bot_accepting_only_its_owner_is_kept_out_of_other_accounts_matches(client, api):
    mine = client.register_bot("mine", GAME, kind="polling", accepts="owner")
    assert mine.accepts == "owner" and client.bot(mine).accepts == "owner"
    stranger = Client(api.live.url)
    stranger.create_account("mallory")
    theirs = stranger.register_bot("theirs", GAME, kind="polling")
    assert theirs.accepts == "everyone"
    with pytest.raises(CardarenaError) as refused:
        stranger.challenge(GAME, [theirs, mine])
    assert refused.value.status == 403 and refused.value.code == "not_accepting"
    assert client.update_bot(mine, accepts="everyone").accepts == "everyone"
    with pytest.raises(CardarenaError) as short:
        stranger.challenge(GAME, [theirs, mine], move_timeout_ms=100)
    assert short.value.status == 422 and short.value.code == "clock_not_allowed"
    assert stranger.challenge(GAME, [theirs, mine]).id  # the standard clock


def test_retire_bot_marks_it_retired(client):
    bot = client.register_bot("old", GAME, kind="polling")
    assert client.retire_bot(bot.id).retired is True
    assert client.bot(bot.id).retired is True


def test_bots_leaves_out_retired_bots_unless_asked(client):
    kept = client.register_bot("kept", GAME, kind="polling")
    gone = client.register_bot("gone", GAME, kind="polling")
    client.retire_bot(gone)
    assert [x.id for x in client.bots(GAME)] == [kept.id]
    assert [x.id for x in client.bots()] == [kept.id]
    assert [x.id for x in client.bots(GAME, retired=True)] == [kept.id, gone.id]


def test_games_lists_every_registered_game_with_seats_and_options(client):
    import games
    from tests.games.builtin import builtin_names
    from tests.server import toygame

    # the shipped games and the toy game the live server loads (CARDARENA_GAMES: tests/live.py)
    served = {name: games.get(name) for name in builtin_names()} | {toygame.NAME: toygame.GAME}
    listed = client.games()
    assert [g.name for g in listed] == sorted(served)
    assert all(isinstance(g, GameInfo) and 1 <= g.min_seats <= g.max_seats for g in listed)
    assert all("deck" in g.options for g in listed)
    assert all(g.ladder == {"seats": served[g.name].ladder_seats, "move_timeout_ms": 2000,
                            "time_bank_ms": 10000, "max_faults": 3} for g in listed)


def test_challenge_queues_a_match_and_match_reads_it(client):
    a = client.register_bot("a", GAME, kind="polling")
    b = client.register_bot("b", GAME, kind="polling")
    queued = client.challenge(GAME, [a, b.id], seed=7, move_timeout_ms=500, max_faults=2)
    assert isinstance(queued, Match) and queued.status == "queued" and queued.rated is False
    match = client.match(queued.id)
    assert match.seats == [a.id, b.id] and match.game == GAME
    assert match.result is None and not match.over
    assert match.raw["move_timeout_ms"] == 500 and match.raw["max_faults"] == 2
    assert client.challenge(GAME, [a, b]).rated is False  # a challenge is never rated: the ladder's are
    assert client.match(queued.id).kind == "challenge"


def test_create_tournament_then_read_it_and_its_matches(client):
    bots = [client.register_bot(name, GAME, kind="polling") for name in "abc"]
    t = client.create_tournament(GAME, bots, deals=2, duplicate=False, seed=3, max_faults=1)
    assert isinstance(t, Tournament) and t.status == "queued"
    again = client.tournament(t.id)
    assert again.id == t.id and again.game == GAME and again.status == "queued"
    assert again.raw["deals"] == 2 and again.raw["duplicate"] is False and again.raw["max_faults"] == 1
    assert isinstance(client.tournament_matches(t), list)  # none until a worker expands it


def test_a_candidate_makes_a_gauntlet(client):
    bots = [client.register_bot(name, GAME, kind="polling") for name in "abc"]
    t = client.tournament(client.create_tournament(GAME, bots, seed=3, candidate=bots[1]).id)
    assert t.raw["format"] == "gauntlet" and t.raw["candidate"] == bots[1].id


def test_rankings_read_the_ladder_best_first(client, api):
    assert client.rankings(GAME) == []
    weak = client.register_bot("weak", GAME, kind="polling")
    strong = client.register_bot("strong", GAME, kind="polling")
    api.store.save_rating(GAME, weak.id, 20.0, 5.0)  # what the workers' rating step stores
    api.store.save_rating(GAME, strong.id, 30.0, 4.0)
    ladder = client.rankings(GAME)
    assert [(r.rank, r.bot, r.name) for r in ladder] == [(1, strong.id, "strong"), (2, weak.id, "weak")]
    assert ladder[0].rating.mu == 30.0 and ladder[0].rating.ordinal == pytest.approx(30.0 - 3 * 4.0)


def _error(call) -> CardarenaError:
    with pytest.raises(CardarenaError) as caught:
        call()
    return caught.value


def test_each_4xx_is_a_cardarena_error_with_status_code_and_message(client, api):
    bot = client.register_bot("mine", GAME, kind="polling")
    anonymous = Client(api.live.url)
    stranger = Client(api.live.url)
    stranger.create_account("mallory")
    cases = [
        (lambda: anonymous.register_bot("x", GAME, kind="polling"), 401, "unauthorized"),
        (lambda: Client(api.live.url, token="wrong").challenge(GAME, [bot, bot]), 401, "unauthorized"),
        (lambda: stranger.retire_bot(bot.id), 403, "forbidden"),
        (lambda: client.register_bot("p", GAME, kind="python", entrypoint="example_bots.random:RandomBot"),
         403, "forbidden"),
        (lambda: client.bot("b_missing"), 404, "not_found"),
        (lambda: client.match("m_missing"), 404, "not_found"),
        (lambda: client.tournament("t_missing"), 404, "not_found"),
        (lambda: client.tournament_matches("t_missing"), 404, "not_found"),
        (lambda: client.rankings("no-such-game"), 404, "not_found"),
        (lambda: client.retire_bot("b_missing"), 404, "not_found"),
        (lambda: client.register_bot("x", "no-such-game", kind="polling"), 422, "unknown_game"),
        (lambda: client.register_bot("x", GAME, kind="webhook"), 422, "invalid"),
        (lambda: client.challenge(GAME, [bot, "b_missing"]), 422, "unknown_bot"),
        (lambda: client.create_tournament(GAME, [bot, bot]), 422, "duplicate_bot"),
        (lambda: client.challenge(GAME, [bot, bot], options={"deck": ["AS"]}), 422, "invalid_options"),
        (lambda: client.create_account(""), 422, None),
    ]
    for call, status, code in cases:
        error = _error(call)
        assert error.status == status, (error, status)
        if code:
            assert error.code == code, error
        assert error.message and str(status) in str(error)


def test_a_429_carries_retry_after(client):
    bots = [client.register_bot(name, GAME, kind="polling") for name in "ab"]
    for _ in range(3):  # no worker here: they stay unfinished
        client.create_tournament(GAME, bots, seed=1)
    error = _error(lambda: client.create_tournament(GAME, bots, seed=1))
    assert error.status == 429 and error.code == "too_many_tournaments"
    assert error.retry_after == 60


def test_no_server_is_a_cardarena_error_too():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    error = _error(lambda: Client(f"http://127.0.0.1:{port}", timeout=2).games())
    assert error.status is None and error.code == "unreachable"


def test_a_server_given_with_the_api_prefix_works_the_same(api):
    assert Client(api.live.api + "/").games() == Client(api.live.url).games()


def test_wait_tournament_names_each_bot_and_shows_its_faults_and_forfeits(api, worker_pool, capsys):
    """The issue: a forfeiting bot's row had neither name nor faults, so it just looked weak."""
    from tests.live import ADMIN_TOKEN

    admin = Client(api.live.url, token=ADMIN_TOKEN)
    organiser = Client(api.live.url)
    organiser.create_account("organiser")
    sturdy = admin.register_bot("sturdy", GAME, kind="python", entrypoint="example_bots.random:RandomBot")
    crashing = admin.register_bot("crashing", GAME, kind="python", entrypoint="tests.worker.bots:Raises")
    t = admin.create_tournament(GAME, [sturdy, crashing], deals=1, seed=4, max_faults=1)  # house bots: its clock
    done = organiser.wait_tournament(t, timeout=120, poll=0.2)
    rows = {s.bot: s for s in done.standings}
    assert rows[sturdy.id].name == "sturdy" and rows[crashing.id].name == "crashing"
    assert rows[crashing.id].matches == 2 and rows[crashing.id].forfeits == 2 and rows[crashing.id].faults >= 2
    assert rows[sturdy.id].faults == 0 and rows[sturdy.id].forfeits == 0
    table = capsys.readouterr().out
    assert "faults" in table and "forfeits" in table and "crashing (" in table and "sturdy (" in table
    admin.close()
    organiser.close()


def test_every_object_naming_a_thing_has_its_id_and_the_old_names_stay():
    from sdk import GameInfo, Ranking, Standing

    row = Ranking.of({"rank": 1, "bot": "b_1", "rating": {"mu": 25.0, "sigma": 2.0, "ordinal": 19.0},
                      "matches": 4, "wins": 2, "paused": True, "other_matches": 3, "other_wins": 1})
    assert row.id == row.bot == "b_1" and row.paused and (row.other_matches, row.other_wins) == (3, 1)
    standing = Standing.of({"rank": 2, "bot": "b_2", "points": 1.5, "matches": 3})
    assert standing.id == standing.bot == "b_2"
    game = GameInfo.of({"name": "duck-soup", "min_seats": 2, "max_seats": 2})
    assert game.id == game.name == "duck-soup"


def test_challenge_says_a_challenge_is_never_rated():
    doc = Client.challenge.__doc__
    assert "never rated" in doc and "is rated" not in doc


def test_every_returned_dataclass_and_its_fields_are_documented_for_bot_authors():
    """docs/write-a-bot.md "What the client returns" names each dataclass the SDK returns and each
    of its fields (`raw`, the whole answer, once for all)."""
    import dataclasses
    import re
    from pathlib import Path

    import sdk

    page = (Path(__file__).resolve().parents[2] / "docs" / "write-a-bot.md").read_text()
    section = page.split("### What the client returns", 1)[1].split("\n### ", 1)[0]
    assert "`raw`" in section
    returned = [getattr(sdk, name) for name in sdk.__all__ if dataclasses.is_dataclass(getattr(sdk, name))]
    assert len(returned) >= 12
    for cls in returned:
        part = re.search(rf"\*\*`{cls.__name__}`\*\*(.*?)(?=\n\*\*`|\Z)", section, re.S)
        assert part, f"{cls.__name__} is not documented"
        for f in dataclasses.fields(cls):
            if f.name != "raw":
                assert f"`{f.name}`" in part.group(1), f"{cls.__name__}.{f.name} is not documented"


class _Flaky:
    """A real HTTP server on loopback whose `GET /api/v1/matches/m_1` answers, in turn: too late
    for the client, 503, then the match finished; `asked` counts the requests."""

    def __init__(self, late_s: float) -> None:
        import http.server
        import threading

        flaky = self
        self.asked = 0
        self.released = threading.Event()  # the late answer's wait ends, so the server can stop

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                flaky.asked += 1
                if flaky.asked == 1:
                    flaky.released.wait(late_s)
                    return self.answer(200, b'{"id": "m_1", "status": "running"}')
                if flaky.asked == 2:
                    return self.answer(503, b'{"error": {"code": "unavailable", "message": "restarting"}}')
                self.answer(200, b'{"id": "m_1", "status": "finished"}')

            def answer(self, status: int, body: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:  # the client gave up on the late one
                    pass

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


def test_a_wait_asks_again_through_no_answer_and_a_503():
    """`wait_match` outlives a read timeout and a restarting server; another error, or the
    deadline passed, ends it."""
    flaky = _Flaky(late_s=30)
    try:
        client = Client(flaky.url, token="t", timeout=0.5)
        assert client.wait_match("m_1", timeout=60, poll=0.01).status == "finished"
        assert flaky.asked == 3
    finally:
        flaky.close()
    with pytest.raises(CardarenaError) as raised:  # nobody answers, and the deadline passes
        Client(flaky.url, token="t", timeout=0.5).wait_match("m_1", timeout=0.2, poll=0.01)
    assert raised.value.status is None and raised.value.code == "unreachable"


def test_a_wait_stops_at_an_error_that_asking_again_cannot_cure(client):
    with pytest.raises(CardarenaError) as raised:
        client.wait_match("m_no_such_match", timeout=60, poll=0.01)
    assert raised.value.status == 404
