"""``tackroom gateway``: serve the capturing proxy, list its calls, sum their usage."""

from __future__ import annotations

import datetime as dt
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from tackroom.cli._output import console, escape, print_json

if TYPE_CHECKING:
    from types import FrameType

    from tackroom.gateway import CaptureStore, Gateway

app = typer.Typer(help="The capturing gateway between harnesses and model providers.", no_args_is_help=True)

JSON_OPT = typer.Option(False, "--json", help="Print JSON instead of a table.")
DB_OPT = typer.Option(
    None,
    "--db",
    help="The capture database: a SQLite file, or postgresql://user@host/db (default: the state database).",
)
NOT_REPORTED = "n/r"


@app.callback()
def _group() -> None:
    """The capturing gateway between harnesses and model providers."""


@app.command()
def serve(
    upstream: Annotated[
        str | None,
        typer.Option(help="Base URL every call is forwarded to (default: each provider's own API)."),
    ] = None,
    host: Annotated[str, typer.Option(help="Address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on; 0 picks a free one.")] = 0,
    db: str | None = DB_OPT,
    inject_keys: Annotated[
        bool,
        typer.Option(
            "--inject-keys",
            help="Replace each client's key with the provider's key from this environment "
            "(ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY).",
        ),
    ] = False,
    engine: Annotated[
        Literal["raw", "aiohttp"],
        typer.Option(
            help="The HTTP engine: raw (asyncio protocols, httptools; the fast default) or aiohttp.",
        ),
    ] = "raw",
    header_timeout: Annotated[
        float,
        typer.Option(
            min=0.001,
            help="Seconds a client has to send a request's head whole, from its connection or its last "
            "answer (408 or closed past it).",
        ),
    ] = 30.0,
    body_timeout: Annotated[
        float,
        typer.Option(min=0.001, help="Seconds a request's body may go silent (408 past it)."),
    ] = 60.0,
) -> None:
    """Serve until Ctrl-C (or SIGTERM, SIGHUP), printing the base URL first (clients add /t/<trace-id>)."""
    from tackroom.gateway import Gateway, keys_from_env

    # The queue's feeder thread pickles each finished call: the proxy's loop gets the GIL back within
    # 0.5 ms of asking for it (Python's default is 5 ms). This process is the gateway's own.
    sys.setswitchinterval(0.0005)
    keys = keys_from_env() if inject_keys else {}
    gateway = Gateway(
        upstream,
        db=db,
        host=host,
        port=port,
        keys=keys,
        writer="process",
        engine=engine,
        header_timeout_s=header_timeout,
        body_timeout_s=body_timeout,
    )
    gateway.start()
    typer.echo(gateway.url)
    _serve_until_signal(gateway)
    for failure in gateway.failures:
        console(stderr=True).print(f"warning: {failure}", markup=False)


_STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _serve_until_signal(gateway: Gateway) -> None:
    """Serve until a terminating signal, then stop: a second signal does not cut the stop short
    (it stores every answered call, and it is bounded)."""
    stopped = [False]

    def _stop(signum: int, frame: FrameType | None) -> None:
        stopped[0] = True  # a plain flag: a lock taken in a handler may be the one the main thread holds

    previous = {number: signal.signal(number, _stop) for number in _STOPPING}
    try:
        while not stopped[0]:
            time.sleep(0.1)
    finally:
        for number in _STOPPING:
            signal.signal(number, signal.SIG_IGN)
        try:
            gateway.stop()
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)


@app.command()
def calls(
    run: Annotated[str | None, typer.Option("--run", help="Only this run's calls.")] = None,
    trace: Annotated[str | None, typer.Option("--trace", help="Only this trace's calls.")] = None,
    db: str | None = DB_OPT,
    as_json: bool = JSON_OPT,
) -> None:
    """Every captured call, oldest first: when, trace, API, model, status, usage, cost."""
    if run is not None and trace is not None:
        raise typer.BadParameter("give --run or --trace, not both")
    found = _store(db).calls(run=run, trace=trace)
    if as_json:
        print_json(found)
        return
    from rich.table import Table

    table = Table("UTC", "trace", "api", "model", "status", "in", "c.read", "c.write", "out")
    table.add_column("cost $", justify="right")
    table.add_column("ms", justify="right")
    for call in found:
        usage = call["usage"]
        status = str(call["status"] or "-") + ("" if call["outcome"] == "complete" else " incomplete")
        table.add_row(
            *map(
                escape,
                (
                    _when(call["started_at"]),
                    call["trace_id"] or "-",
                    call["wire_api"] or call["path"],
                    call["model_served"] or call["model_requested"] or "-",
                    status,
                    *(
                        _figure(usage[name])
                        for name in ("input_uncached", "cache_read", "cache_write", "output")
                    ),
                    call["cost_usd"] or "unknown",
                    f"{call['duration_ms']:.0f}",
                ),
            )
        )
    console().print(table)
    incomplete = [call for call in found if call["outcome"] != "complete"]
    summary = (
        f"{len(found)} call(s), {len(incomplete)} incomplete; {NOT_REPORTED}: not reported by the provider"
    )
    console(stderr=True).print(summary, markup=False)


@app.command()
def usage(
    by: Annotated[
        Literal["run", "model", "day"], typer.Option("--by", help="Sum per run, model or UTC day.")
    ] = "run",
    db: str | None = DB_OPT,
    as_json: bool = JSON_OPT,
) -> None:
    """Usage and cost of the captured calls, summed per run, model or day."""
    groups = _store(db).usage(by)
    if as_json:
        print_json(groups)
        return
    from rich.table import Table

    table = Table(by, "calls", "incomplete", "input", "cache read", "cache write", "output", "reasoning")
    table.add_column("cost $", justify="right")
    for group in groups:
        table.add_row(
            *map(
                escape,
                (
                    group[by],
                    group["calls"],
                    group["incomplete"],
                    *(_sum(group, name) for name in group["usage"]),
                    _cost(group),
                ),
            )
        )
    console().print(table)


def _store(db: str | None) -> CaptureStore:
    """The capture store ``--db`` names, for reading: a SQLite file that is not there is an error
    (a mistyped path), never a new empty database."""
    from tackroom.gateway.stores import open_store
    from tackroom.state.postgres import is_postgres_url

    if db is not None and not is_postgres_url(db) and not Path(db).is_file():
        from tackroom.errors import GatewayError

        raise GatewayError(
            f"{db}: no capture database there (is the path mistyped?): give the file "
            "`tackroom gateway serve --db` writes, or no --db for the state database"
        )
    return open_store(db)


def _when(started: float) -> str:
    return dt.datetime.fromtimestamp(started, dt.UTC).strftime("%m-%d %H:%M:%S")


def _figure(value: int | None) -> str:
    return NOT_REPORTED if value is None else f"{value:,}"


def _sum(group: dict[str, Any], name: str) -> str:
    missing = group["not_reported"][name]
    if group["usage"][name] is None:
        return NOT_REPORTED
    total = f"{group['usage'][name]:,}"
    return total if not missing else f"{total} ({missing} {NOT_REPORTED})"


def _cost(group: dict[str, Any]) -> str:
    unpriced = group["unpriced_calls"]
    if group["cost_usd"] is None:
        return "unknown"
    return group["cost_usd"] if not unpriced else f"≥ {group['cost_usd']} ({unpriced} unknown)"
