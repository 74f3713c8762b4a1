"""A small server-sent-events reader for the tests: real HTTP, parsed as a browser does.

    with EventStream(url, last_event_id="3") as stream:
        event = stream.next(timeout=10)      # Event(name, data, id) or None when the stream ended
"""

from __future__ import annotations

import json
import queue
import threading
from dataclasses import dataclass

import requests


@dataclass
class Event:
    name: str
    data: object
    id: str | None


class EventStream:
    """Reads one event stream in a background thread; `next()` hands out its events in order."""

    def __init__(self, url: str, last_event_id: str | None = None, timeout: float = 60) -> None:
        headers = {"Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        self.response = requests.get(url, headers=headers, stream=True, timeout=timeout)
        self.events: queue.Queue = queue.Queue()
        self.retry: int | None = None
        self.comments = 0
        self.ended = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        if self.response.status_code == 200:
            self._thread.start()

    def _read(self) -> None:
        name, data, ident = "message", [], None
        try:
            for raw in self.response.iter_lines(decode_unicode=True):
                if raw == "":
                    if data:
                        self.events.put(Event(name, json.loads("\n".join(data)), ident))
                    name, data, ident = "message", [], None
                elif raw.startswith(":"):
                    self.comments += 1
                else:
                    field, _, value = raw.partition(":")
                    value = value[1:] if value.startswith(" ") else value
                    if field == "event":
                        name = value
                    elif field == "data":
                        data.append(value)
                    elif field == "id":
                        ident = value
                    elif field == "retry":
                        self.retry = int(value)
        except (requests.RequestException, ValueError, AttributeError):
            pass  # closed under our feet: the stream is over
        finally:
            self.ended.set()
            self.events.put(None)

    def next(self, timeout: float = 15) -> Event | None:
        """The next event; None once the stream has ended. Fails after `timeout` s."""
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no event within {timeout} s") from None

    def until(self, name: str, timeout: float = 15) -> list[Event]:
        """Every event up to and including the first called `name`."""
        out = []
        while True:
            event = self.next(timeout)
            assert event is not None, f"the stream ended before a {name!r} event: {out}"
            out.append(event)
            if event.name == name:
                return out

    def close(self) -> None:
        self.response.close()

    def __enter__(self) -> EventStream:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
