"""The match export format, read and written here only (docs/api.md §5, "Records and replays").

A match is one JSON document, the same whether the platform exported it
(`GET /matches/{id}/export`) or `cardarena play --export` wrote it, so one
set of tools reads both:

    {"format": "cardarena-match", "version": 1, "id", "game", "options", "seed",
     "seats": [{"seat", "bot"}, …], "log", "result", "decks",
     "move_timeout_ms", "time_bank_ms", "max_faults"[, "seat_clocks"][, "debug"]}

`seat_clocks`, present only in a match where some seat had a clock of its own
(a person at the table, docs/api.md §6), lists each seat's
`{"move_timeout_ms", "time_bank_ms"}` or null for the match's. `debug`, present only for a reader allowed to see some, lists the bots' debug
notes `{"turn", "seat", "text"}` (docs/api.md §6). The three before it are
the match's rules of time and faults, which a replay needs to rebuild each decision's `deadline_ms`, `clock` and forfeits exactly; a
document without them is read with the platform's defaults, and one without
`time_bank_ms` as from before the time bank (decisions without a clock). A
tournament, or a run of local matches, is JSON Lines: one document a line.

`read` takes a file, a match or tournament URL of a platform, or a document
already loaded, and returns one checked document; anything else is an
`ExportError` saying what is wrong. Whether its log replays is checked by
the replay itself (`sdk.replay`), which knows the turns.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, cast

import games
from sdk.clock import DEFAULT_TIME, check_seat_clocks

FORMAT = "cardarena-match"
VERSION = 1
#: the platform's defaults for a document that does not say (docs/api.md §3)
#: fields every document has (docs/api.md §5), and the rules of time and faults it may add
FIELDS = ("format", "version", "id", "game", "options", "seed", "seats", "log", "result", "decks")
RULES = ("move_timeout_ms", "time_bank_ms", "max_faults")
#: how long a platform may take to start answering, and between two chunks of its answer
HTTP_TIMEOUT = (10, 120)
#: a match or tournament on a platform: its page, its API resource or its export
_URL = re.compile(r"^(?P<base>https?://.+?)(?:/api/v1)?/(?P<kind>matches|tournaments)/(?P<id>[^/?#]+)"
                  r"(?:/[^?#]*)?(?:[?#].*)?$")


_ONE = {"matches": "match", "tournaments": "tournament"}


class ExportError(ValueError):
    """A source that is not a readable match export, and why."""


# -- writing -----------------------------------------------------------------

def document(id: str, game: str, seats: list[str], seed: int, options: dict, log: list[dict],
             result: dict | None, move_timeout_ms: int, time_bank_ms: int, max_faults: int,
             versions: list[int] | None = None, debug: list[dict] | None = None,
             seat_clocks: list[dict | None] | None = None) -> dict:
    """A match as its export document; `seats[i]` names the bot in seat i (and, on the
    platform, `versions[i]` the version of it that played). `debug`: the bots' debug notes
    `{"turn", "seat", "text"}` the reader may see (local play: all; the platform: its owner's
    seats'), kept out of the log, which stays as the platform's public one."""
    shown = [{"seat": i, "bot": bot} for i, bot in enumerate(seats)]
    if versions is not None:
        shown = [{**seat, "version": v} for seat, v in zip(shown, versions, strict=True)]
    return {"format": FORMAT, "version": VERSION, "id": id, "game": game, "options": options,
            "seed": seed, "seats": shown,
            "log": log, "result": result,
            "decks": result.get("decks") if isinstance(result, dict) else None,
            "move_timeout_ms": move_timeout_ms, "time_bank_ms": time_bank_ms, "max_faults": max_faults,
            **({"seat_clocks": seat_clocks} if seat_clocks else {}), **({"debug": debug} if debug else {})}


def dumps(doc: dict) -> str:
    """One document as one line of JSON Lines (no newline)."""
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


class Writer:
    """Writes documents as they come: to one JSON Lines file, or one `<id>.json` each in a folder.

    `target` is a folder if it exists as one or ends with a slash, else a file.
    """

    def __init__(self, target: str | os.PathLike) -> None:
        text = os.fspath(target)
        self.folder = Path(text) if text.endswith(("/", os.sep)) or os.path.isdir(text) else None
        self.count = 0
        self._file: IO[str] | None = None
        try:
            if self.folder is not None:
                self.folder.mkdir(parents=True, exist_ok=True)
            else:
                self._file = open(text, "w", encoding="utf-8")  # noqa: SIM115 (closed by close())
        except OSError as exc:
            raise ExportError(f"cannot write {text}: {exc.strerror or exc}") from None

    def add(self, doc: dict) -> None:
        if self._file is not None:
            self._file.write(dumps(doc) + "\n")
        else:
            assert self.folder is not None
            name = re.sub(r"[^\w.-]", "_", str(doc["id"])) + ".json"
            (self.folder / name).write_text(dumps(doc) + "\n", encoding="utf-8")
        self.count += 1

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- reading -----------------------------------------------------------------

def read(source: str | os.PathLike | dict, match: str | None = None) -> dict:
    """One checked document from `source`: a match or tournament URL, a file (one JSON
    document, or JSON Lines), or a document already loaded.

    `match` picks a match by id where the source holds several (a tournament);
    it may be left out where it holds one.
    """
    if isinstance(source, dict):
        return pick([source], match, "the document")
    text = os.fspath(source)
    if _URL.match(text):
        return _fetch(text, match)
    if re.match(r"^[a-z]+://", text):
        raise ExportError(f"{text}: not a match or tournament address (…/matches/<id> or …/tournaments/<id>)")
    try:
        with open(text, encoding="utf-8") as f:
            return pick(_documents(f, text), match, text)
    except OSError as exc:
        raise ExportError(f"cannot read {text}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ExportError(f"{text} is not a match export: not UTF-8 text") from None


def pick(documents: Iterable[dict], match: str | None, where: str) -> dict:
    """The document of match `match` (or the only one) among `documents`, checked."""
    seen: list[str] = []
    found = None
    for doc in documents:
        doc_id = str(doc.get("id")) if isinstance(doc, dict) else "?"
        if match is not None and doc_id == match:
            return check(doc, where)
        if match is None and found is not None:
            raise ExportError(f"{where} holds several matches ({seen[0]}, {doc_id}, …): "
                              "say which one (--match ID)")
        found = doc
        seen.append(doc_id)
    if match is not None:
        listed = ", ".join(seen[:5]) + (", …" if len(seen) > 5 else "")
        raise ExportError(f"{where} holds no match {match!r}" + (f" (it holds {listed})" if seen else ""))
    if found is None:
        raise ExportError(f"{where} holds no match")
    return check(found, where)


def check(doc: Any, where: str = "the document") -> dict:
    """`doc` if it is a version-1 match document (shapes only; the replay checks the log)."""
    if not isinstance(doc, dict):
        raise ExportError(f"{where} is not a match export: a JSON object is expected")
    if doc.get("format") != FORMAT:
        raise ExportError(f"{where} is not a match export: its format is {doc.get('format')!r}, "
                          f"not {FORMAT!r}")
    if doc.get("version") != VERSION:
        raise ExportError(f"{where} is version {doc.get('version')!r} of {FORMAT}; this SDK reads "
                          f"version {VERSION} (a newer cardarena-sdk may read it)")
    missing = [name for name in FIELDS if name not in doc]
    if missing:
        raise ExportError(f"{where} lacks {', '.join(missing)}")
    name = f"{where} (match {doc['id']!r})"
    shapes: dict[str, type | tuple[type, ...]] = {"id": str, "game": str, "options": dict, "seed": int, "seats": list, "log": list,
              "result": (dict, type(None)), "decks": (list, type(None))}
    for field_name, kind in shapes.items():
        if not isinstance(doc[field_name], kind) or isinstance(doc[field_name], bool):
            raise ExportError(f"{name}: {field_name!r} has the wrong type ({type(doc[field_name]).__name__})")
    for rule in RULES:
        value = doc.get(rule)
        if value is not None and (type(value) is not int or value < 0):
            raise ExportError(f"{name}: {rule!r} must be a whole number of at least 0, not {value!r}")
    try:
        check_seat_clocks(doc.get("seat_clocks"), len(doc["seats"]))
    except ValueError as exc:
        raise ExportError(f"{name}: {exc}") from None
    try:
        game = games.get(doc["game"])
    except games.UnknownGame:
        raise ExportError(f"{name}: unknown game {doc['game']!r}; this SDK knows "
                          f"{', '.join(games.names())}") from None
    if not game.min_seats <= len(doc["seats"]) <= game.max_seats:
        raise ExportError(f"{name}: {len(doc['seats'])} seats; {doc['game']} is played by "
                          f"{game.min_seats} to {game.max_seats}")
    for i, entry in enumerate(doc["log"]):
        if not isinstance(entry, dict) or not isinstance(entry.get("action"), dict):
            raise ExportError(f"{name}: log entry {i} is not a log entry (an object with an action)")
    return doc


def bots(doc: dict) -> list[str]:
    """Who sat where: the bot of each seat, as the document names it."""
    return [str(s.get("bot")) if isinstance(s, dict) else str(s) for s in doc["seats"]]


def rules(doc: dict) -> tuple[int, int | None, int]:
    """`(move_timeout_ms, time_bank_ms, max_faults)`; the bank is None for a match from
    before the time bank."""
    return (doc.get("move_timeout_ms") or DEFAULT_TIME.move_timeout_ms, doc.get("time_bank_ms"),
            doc.get("max_faults") or DEFAULT_TIME.max_faults)


def seat_clocks(doc: dict) -> list[dict | None] | None:
    """Each seat's own clock (`{"move_timeout_ms", "time_bank_ms"}`, or None for the match's),
    or None when every seat played on the match's clock."""
    return doc.get("seat_clocks") or None


def _documents(lines: Iterable[str], where: str) -> Iterator[dict]:
    """The documents of a file or an answer: one JSON document (which may span lines), or
    JSON Lines, read a line at a time so a large tournament never sits whole in memory."""
    lines = iter(lines)
    first = next((line for line in lines if line.strip()), None)
    if first is None:
        return
    try:
        doc = json.loads(first)
    except (ValueError, RecursionError):  # the first line of a document written over many lines
        text = first + "".join(lines)
        try:
            yield json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise ExportError(f"{where} is not a match export: not JSON ({_reason(exc)})") from None
        return
    yield doc
    for number, line in enumerate(lines, start=2):
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise ExportError(f"{where}, line {number}: not JSON ({_reason(exc)})") from None


def _reason(exc: BaseException) -> str:
    return "nested too deeply" if isinstance(exc, RecursionError) else str(exc)


def _fetch(url: str, match: str | None) -> dict:
    """The export of the match or tournament at `url` (its page, its API resource or its export)."""
    import requests

    found = _URL.match(url)
    assert found is not None
    base, kind, ident = found["base"].rstrip("/"), found["kind"], found["id"]
    export = f"{base}/api/v1/{kind}/{ident}/export"
    if kind == "matches" and match is None:
        match = ident
    try:
        with requests.get(export, timeout=HTTP_TIMEOUT, stream=True) as response:
            if response.status_code != 200:
                raise ExportError(_refusal(response, _ONE[kind], ident, base))
            response.encoding = "utf-8"
            lines = cast(Iterator[str], response.iter_lines(decode_unicode=True))  # text: its encoding is set
            return pick(_documents(lines, export), match, export)
    except (requests.ConnectionError, requests.Timeout) as exc:
        raise ExportError(f"cannot reach {base} ({type(exc).__name__}): is the platform running "
                          "there?") from None
    except requests.RequestException as exc:
        raise ExportError(f"cannot read {export}: {type(exc).__name__}: {exc}") from None


def _refusal(response: Any, kind: str, ident: str, base: str) -> str:
    """Why the platform did not hand over the export, in its own words where it gave them."""
    try:
        message = response.json()["error"]["message"]
    except Exception:  # not the platform's JSON error: its status says enough
        message = None
    if response.status_code == 404:
        return f"{base} has no {kind} {ident!r}" + (f" ({message})" if message else "")
    if response.status_code == 409:
        return (f"{kind} {ident} is not public yet: " + (message or "a match is exported once it is "
                "finished, and its tournament too"))
    return f"{base}: {kind} {ident}: HTTP {response.status_code}" + (f": {message}" if message else "")
