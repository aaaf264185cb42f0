"""Progress bars (rich) that disappear with ``verbose=0``."""
from __future__ import annotations

import contextlib
import sys


class _NullBar:
    def advance(self, n: int = 1, **fields) -> None:
        pass


class _RichBar:
    def __init__(self, progress, task):
        self._p, self._t = progress, task

    def advance(self, n: int = 1, **fields) -> None:
        self._p.update(self._t, advance=n, **fields)


@contextlib.contextmanager
def progress_bar(total: int, description: str, verbose: int = 1, transient: bool = False):
    """Yield an object with ``advance(n, **fields)``; a no-op when ``verbose`` is 0. ``transient``: the bar is shown
    while the work runs (on a terminal) and leaves no line behind."""
    if not verbose:
        yield _NullBar()
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = Console(file=sys.stderr)
    cols = [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), TimeRemainingColumn(), TextColumn("{task.fields[info]}")]
    with Progress(*cols, console=console, transient=transient) as p:
        task = p.add_task(description, total=total, info="")
        yield _RichBar(p, task)
