"""How ``tackroom run`` shows a run: JSONL events for machines, a readable live view for people.

Everything shown here came from a harness, so it is hostile text: it is
escaped before Rich sees it (a tool result reading ``[/usr/bin]`` is text,
not markup), a control character in it is shown as ``\\xNN`` rather than
sent to the terminal (an ANSI escape in a harness's stderr would recolour,
move or retitle it), and whatever is written survives lone surrogates (JSON
is written as UTF-8 with them replaced).
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from tackroom.run.result import Result
    from tackroom.trace.events import Event


def printable(text: str) -> str:
    """``text`` to print on a terminal: surrogates replaced, control characters as ``\\xNN``."""
    from tackroom.cli._output import printable as shown_controls

    return shown_controls(safe(text))


def safe(text: str) -> str:
    """``text`` with any lone surrogate replaced, so no UTF-8 writer can fail on it."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def write_json(data: Any, *, indent: int | None = None) -> None:
    """One JSON document to stdout, as UTF-8 that survives whatever a harness printed."""
    sys.stdout.write(safe(json.dumps(data, ensure_ascii=False, indent=indent)) + "\n")
    sys.stdout.flush()


def jsonl_event(event: Event) -> None:
    write_json(event.to_json())


def jsonl_result(result: Result) -> None:
    write_json({"type": "result", **result.to_json()})


def shown(value: object, limit: int = 200) -> str:
    """Harness text for the live view: one line, cut to ``limit``, markup escaped."""
    from rich.markup import escape  # the live view's own: a JSON run never loads Rich

    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return escape(printable(text.strip().replace("\n", " ")[:limit]))


class Live:
    """A readable live view: text, tool calls and results as they happen, then a summary."""

    def __init__(self, out: Console) -> None:
        self.out = out

    def event(self, event: Event) -> None:
        data = event.to_json()
        kind = data["type"]
        if kind == "assistant_text":
            self.out.print(printable(data["text"]), markup=False, highlight=False)
        elif kind == "tool_call":
            self.out.print(f"[cyan]→ {shown(data['name'])}[/] {shown(data['input'])}", highlight=False)
        elif kind == "tool_result":
            style = "red" if data["is_error"] else "dim"
            self.out.print(f"[{style}]← {shown(data['output'] or '')}[/]", highlight=False)
        elif kind == "error":
            self.out.print(f"[red]error:[/] {shown(data['message'], 2000)}", highlight=False)

    def summary(self, result: Result) -> None:
        usage = ", ".join(f"{k} {v}" for k, v in result.usage.to_json().items())
        state = "[green]ok[/]" if result.ok else f"[red]failed[/] ({shown(result.error or '', 2000)})"
        version = shown(result.harness_version or "")
        self.out.print(
            f"[dim]{shown(result.adapter)} {version} · {state} · exit {result.exit_code} · "
            f"{result.duration_s:.1f}s · usage: {usage} · {shown(str(result.run_dir), 4096)}[/]",
            highlight=False,
        )
        for note in result.truncated:
            self.out.print(f"[yellow]truncated:[/] {shown(note, 2000)}", highlight=False)
        for gone in result.escaped:
            self.out.print(
                f"[yellow]stopped a process that escaped the run:[/] pid {gone.pid} {shown(gone.command)}",
                highlight=False,
            )
