"""``tackroom trace``: the sessions in every harness's own logs, listed, shown and exported."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from tackroom.cli._output import console, escape, print_json
from tackroom.cli.usage import HARNESS, JSON_OPT, SINCE, day, said_skipped, scanning

app = typer.Typer(
    help="Sessions from every harness's own logs (user's home and every run's): list, show, export.",
    no_args_is_help=True,
)

SESSION = typer.Argument(..., help="Session id, or a prefix of exactly one (see `tackroom trace list`).")
MAX_SHOWN = 400
"""Characters of one event's text shown in the table (all of it with --json)."""


@app.command("list")
def list_(harness: str | None = HARNESS, since: str | None = SINCE, as_json: bool = JSON_OPT) -> None:
    """Every session, oldest first: harness, id, started, models, working directory, run."""
    from rich.table import Column, Table

    from tackroom.trace.api import list_sessions, scan, skipped

    since = day(since, "--since")
    with scanning(as_json) as progress:
        scanned = scan(harness=harness, progress=progress)
    said_skipped(skipped(scanned.issues))
    sessions = list_sessions(harness=harness, since=since, refresh=False)
    if as_json:
        print_json([s.to_json() for s in sessions])
        return
    if not sessions:
        console(stderr=True).print("no sessions in the logs tackroom can read", markup=False)
        return
    table = Table("harness", Column("session", no_wrap=True), "started", "models", "cwd", "run")
    for s in sessions:
        meta = s.meta
        name = s.session_id if meta.parent_id is None else f"└ {s.session_id} ({meta.agent or 'subagent'})"
        table.add_row(
            *map(
                escape,
                [
                    s.harness,
                    name,
                    meta.started or "",
                    ", ".join(meta.models),
                    meta.cwd or "",
                    s.run_id or ("ambiguous: " + ", ".join(s.candidates) if s.candidates else ""),
                ],
            )
        )
    console().print(table)
    console(stderr=True).print(f"{len(sessions)} session(s)", markup=False)


@app.command()
def show(session: str = SESSION, harness: str | None = HARNESS, as_json: bool = JSON_OPT) -> None:
    """One session read whole: its messages, tool calls and results, usage per call, and its subagents."""
    from tackroom.trace.api import read_trace, scan, skipped

    said_skipped(skipped(scan(harness=harness).issues))
    trace = read_trace(session, harness=harness, refresh=False)
    if as_json:
        print_json(trace.to_json())
        return
    _show(trace, depth=0)


def _show(trace: Any, depth: int) -> None:
    from rich.table import Table

    out = console()
    meta = trace.meta
    pad = "  " * depth
    out.print(
        f"{pad}[bold]{escape(trace.harness)} {escape(meta.session_id)}[/]"
        + (f"  (subagent {escape(meta.agent or '')} of {escape(meta.parent_id)})" if meta.parent_id else "")
    )
    out.print(
        f"{pad}{escape(meta.started or '?')} .. {escape(meta.ended or '?')}  {escape(meta.cwd or '')}  "
        f"{escape(', '.join(meta.models))}"
    )
    table = Table("time", "line", "event", "detail", show_edge=False)
    for item in trace.events:
        event = item.event
        if event.kind == "record":
            continue
        table.add_row(
            *map(escape, [(item.timestamp or "")[11:23], str(item.line), event.kind, _detail(item)])
        )
    out.print(table)
    records = sum(1 for item in trace.events if item.event.kind == "record")
    if records:
        out.print(f"{pad}{records} other record(s) kept raw (see --json)", markup=False)
    for issue in trace.issues:
        out.print(f"{pad}[yellow]{escape(str(issue))}[/]")
    for child in trace.children:
        _show(child, depth + 1)


def _detail(item: Any) -> str:
    event = item.event
    data = event.to_json()
    if event.kind in ("assistant_text", "user_text"):
        text = str(data["text"])
    elif event.kind == "tool_call":
        text = f"{data['name']} {data['input']}"
    elif event.kind == "tool_result":
        text = ("error: " if data["is_error"] else "") + str(data["output"])
    elif event.kind == "usage":
        usage = data["usage"]
        text = (
            f"{item.model or '?'}: in {usage['input']}, out {usage['output']}, "
            f"cache read {usage['cache_read']}, cache write {usage['cache_write']}"
        )
    else:
        text = ", ".join(f"{k}={v}" for k, v in data.items() if k not in ("type", "raw") and v is not None)
    text = " ".join(text.split())
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + " …"


FORMAT = typer.Option(
    "atif", "--format", "-f", help="atif (Harbor's trajectory JSON) or otel (OTLP/JSON GenAI spans)."
)
OUT = typer.Option(None, "--out", "-o", help="Write to this file (default: stdout).")
OTLP = typer.Option(
    None, "--otlp", help="POST the spans to this OTLP/HTTP collector (e.g. http://localhost:4318)."
)
CONTENT = typer.Option(False, "--content", help="otel: record tool arguments and results (redacted).")
PROVIDER = typer.Option(
    None, "--provider", help="otel: gen_ai.provider.name (a log does not say which service answered)."
)


@app.command()
def export(
    session: str = SESSION,
    harness: str | None = HARNESS,
    format: str = FORMAT,
    out: Path | None = OUT,
    otlp: str | None = OTLP,
    content: bool = CONTENT,
    provider: str | None = PROVIDER,
) -> None:
    """One session as ATIF (Harbor's trajectory JSON) or as OpenTelemetry GenAI spans."""
    from tackroom.cli._output import dumps_json
    from tackroom.trace.api import read_trace
    from tackroom.trace.export import atif, otel, send_otlp

    if format not in ("atif", "otel"):
        raise typer.BadParameter(f"{format!r}: give atif or otel", param_hint="--format")
    if otlp is not None and format != "otel":
        raise typer.BadParameter("--otlp sends OpenTelemetry spans: add --format otel", param_hint="--otlp")
    trace = read_trace(session, harness=harness)
    data = atif(trace) if format == "atif" else otel(trace, provider=provider, content=content)
    if otlp is not None:
        send_otlp(data, otlp)
        console(stderr=True).print(f"sent {escape(trace.session_id)} to {escape(otlp)}")
        return
    text = dumps_json(data) + "\n"
    if out is None:
        sys.stdout.write(text)
        return
    out.write_text(text, encoding="utf-8")
    console(stderr=True).print(f"wrote {escape(out)}")
