"""How ``tackroom run`` shows a run: JSONL events for machines, a readable live view for people."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from tackroom.run.result import Result
    from tackroom.trace.events import Event


def jsonl_event(event: Event) -> None:
    sys.stdout.write(json.dumps(event.to_json(), ensure_ascii=False) + "\n")
    sys.stdout.flush()


def jsonl_result(result: Result) -> None:
    sys.stdout.write(json.dumps({"type": "result", **result.to_json()}, ensure_ascii=False) + "\n")


class Live:
    """A readable live view: text, tool calls and results as they happen, then a summary."""

    def __init__(self, out: Console) -> None:
        self.out = out

    def event(self, event: Event) -> None:
        data = event.to_json()
        kind = data["type"]
        if kind == "assistant_text":
            self.out.print(data["text"], markup=False)
        elif kind == "tool_call":
            args = json.dumps(data["input"], ensure_ascii=False)
            self.out.print(f"[cyan]→ {data['name']}[/] {args[:200]}", highlight=False)
        elif kind == "tool_result":
            output = (data["output"] or "").strip().replace("\n", " ")
            style = "red" if data["is_error"] else "dim"
            self.out.print(f"[{style}]← {output[:200]}[/]", highlight=False)
        elif kind == "error":
            self.out.print(f"[red]error:[/] {data['message']}", highlight=False)

    def summary(self, result: Result) -> None:
        usage = ", ".join(f"{k} {v}" for k, v in result.usage.to_json().items())
        state = "[green]ok[/]" if result.ok else f"[red]failed[/] ({result.error})"
        self.out.print(
            f"[dim]{result.adapter} {result.harness_version or ''} · {state} · exit {result.exit_code} · "
            f"{result.duration_s:.1f}s · usage: {usage} · {result.run_dir}[/]"
        )
