"""Tables and progress on a terminal: with `rich` when it is installed, plain text without.

The SDK alone (`pip install cardarena-sdk`) does not bring `rich`; the
platform's install does. Either way the same calls print the same facts.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TextIO


def have_rich() -> bool:
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def plain_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]],
                left: Sequence[str] = ("bot",)) -> str:
    """`rows` under `columns` as aligned text: the `left` columns to the left, the rest right."""
    widths = [max([len(c), *(len(r[i]) for r in rows)]) for i, c in enumerate(columns)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(cell.ljust(w) if col in left else cell.rjust(w)
                         for cell, w, col in zip(cells, widths, columns, strict=True)).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([title, line(columns), rule, *(line(r) for r in rows)])


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]],
                left: Sequence[str] = ("bot",), file: TextIO | None = None) -> None:
    """Print the table: a rich table on a terminal if rich is installed, else `plain_table`
    (which also reads better in a file or a pipe)."""
    out = file or sys.stdout
    if not (have_rich() and out.isatty()):
        print(plain_table(title, columns, rows, left), file=out)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for column in columns:
        table.add_column(column, justify="left" if column in left else "right")
    for row in rows:
        table.add_row(*row)
    Console(file=out).print(table)


class Progress:
    """Counts steps towards a total; `log` prints a line above the count."""

    def __init__(self, advance, log, update) -> None:
        self.advance = advance
        self.log = log
        self.update = update


@contextmanager
def progress(description: str, total: int | None, file: TextIO | None = None,
             transient: bool = True) -> Iterator[Progress]:
    """A progress bar (rich, on a terminal) or a counter rewritten in place (plain, on a
    terminal only; nothing in a file or a pipe).

    `advance(n=1)` counts; `update(completed=, total=, description=)` sets;
    `log(text)` prints a line without breaking the bar.
    """
    out = file or sys.stderr
    live = out.isatty()
    if have_rich() and live:
        from rich import progress as rp
        from rich.console import Console

        columns = (rp.TextColumn("[bold]{task.description}"), rp.BarColumn(), rp.MofNCompleteColumn(),
                   rp.TimeElapsedColumn(), rp.TimeRemainingColumn())
        with rp.Progress(*columns, console=Console(file=out), transient=transient) as bar:
            task = bar.add_task(description, total=total)
            yield Progress(lambda n=1: bar.advance(task, n),
                           lambda text: bar.console.print(text, markup=False, highlight=False,
                                                          emoji=False, soft_wrap=True),
                           lambda **kw: bar.update(task, **kw))
        return
    state: dict[str, Any] = {"done": 0, "total": total, "description": description}

    def show() -> None:
        if live:
            total = state["total"]
            print(f"\r{state['description']}: {state['done']}" + (f"/{total}" if total else ""),
                  end="", file=out, flush=True)

    def advance(n: int = 1) -> None:
        state["done"] += n
        show()

    def update(completed: int | None = None, **fields) -> None:
        if completed is not None:
            state["done"] = completed
        state.update((k, v) for k, v in fields.items() if k in ("total", "description"))
        show()

    def log(text: str) -> None:
        if live:
            print("\r\033[K", end="", file=out)
        print(text, file=out)
        show()

    show()
    try:
        yield Progress(advance, log, update)
    finally:
        if live:
            print("\r\033[K" if transient else "", file=out, flush=True)
