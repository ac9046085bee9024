"""The services a run talks to: the mock model and the gateway, started for the run and stopped with it.

:func:`start_services` turns a :class:`~tackroom.run.spec.RunSpec`'s endpoint
choice into what the harness is pointed at (the mock, a base URL, a running
gateway, or a gateway started in front of any of them, with the run's id as
the trace id) and enters what it starts into the run's exit stack. The
captured calls are read back here too, from the run's own gateway or from a
running one over HTTP.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tackroom.adapters.plan import Endpoint
from tackroom.redact import redact_text
from tackroom.run.spec import RunSpec, check_base_url

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter
    from tackroom.gateway import Gateway
    from tackroom.mock import MockServer, Script, ToolVocabulary
    from tackroom.trace.events import Usage


@dataclass(frozen=True)
class Services:
    """What a run's harness is pointed at, and the gateway started for it (None: none was)."""

    endpoint: Endpoint | None
    captor: Gateway | None


def start_services(
    spec: RunSpec,
    adapter: Adapter,
    run_id: str,
    stack: ExitStack,
    *,
    environ: Mapping[str, str],
    serving: MockServer | None = None,
    mock_log: Path | None = None,
    capture_db: Path | str | None = None,
    bind: str = "127.0.0.1",
) -> Services:
    """Start the mock and the gateway ``spec`` asks for (each stopped with ``stack``) and say where the
    harness goes. ``serving`` is a mock the caller already serves, used as it is and left running;
    ``bind`` is the address a mock started here listens on (beyond loopback only for a container,
    which cannot reach it: the mock is keyless)."""
    server = start_mock(adapter, spec.mock, serving, mock_log, stack, bind)
    endpoint = endpoint_for(server, spec.base_url, spec.api_key_env)
    captor = start_gateway(server, spec.base_url, environ, capture_db, stack) if spec.capture else None
    through = spec.gateway or (captor.url if captor is not None else None)
    if through is not None:
        endpoint = through_gateway(endpoint, through, run_id, spec.api_key_env)
    return Services(endpoint, captor)


def vocabulary(adapter: Adapter) -> ToolVocabulary:
    """The mock's tool vocabulary, from the adapter's ``[tools]`` table."""
    from tackroom.mock import ToolName, ToolVocabulary

    table: dict[str, Any] = dict(adapter.effective.get("tools", {}))
    mcp = table.pop("mcp_offered", None) or table.pop("mcp", None)
    table.pop("mcp", None)
    call = table.pop("mcp_call", None)
    mcp_call = ToolName(call["tool"], wrap=dict(call["args"])) if call else None
    answer = table.pop("text_call", None)
    table.pop("mcp_load", None)  # a call the probe's script makes first, not a translation
    text_call = ToolName(answer["tool"], wrap=dict(answer["args"])) if answer else None
    tools = {
        neutral: ToolName(entry["name"], dict(entry.get("args", {})))
        if isinstance(entry, dict)
        else ToolName(entry)
        for neutral, entry in table.items()
    }
    if mcp:
        return ToolVocabulary(tools=tools, mcp=mcp, mcp_call=mcp_call, text_call=text_call)
    return ToolVocabulary(tools=tools, mcp_call=mcp_call, text_call=text_call)


def start_mock(
    adapter: Adapter,
    script: Script | None,
    serving: MockServer | None,
    log: Path | None,
    stack: ExitStack,
    bind: str = "127.0.0.1",
) -> MockServer | None:
    """The mock the run talks to: the caller's, already serving (it stays up after the run), or one
    started for ``script`` and stopped with ``stack``; None for a run with no mock."""
    if serving is not None:
        return serving
    if script is None:
        return None
    from tackroom.mock import MockServer

    server = MockServer(script=script, tools=vocabulary(adapter), log_path=log, host=bind)
    return stack.enter_context(server)


def endpoint_for(server: MockServer | None, base_url: str | None, api_key_env: str | None) -> Endpoint | None:
    """Where the harness is pointed: the mock, the base URL with the caller's key, or its own default."""
    if server is not None:
        return Endpoint.for_mock(server.base_url)
    if base_url:
        return Endpoint(base_url, api_key_env=api_key_env)
    return None


def start_gateway(
    server: MockServer | None,
    base_url: str | None,
    environ: Mapping[str, str],
    db: Path | str | None,
    stack: ExitStack,
) -> Gateway:
    """A gateway for this run alone, in front of the mock, the base URL, or the providers' own APIs."""
    from tackroom.gateway import Gateway
    from tackroom.state.db import StateDB

    upstream = (
        server.base_url if server is not None else Endpoint(base_url).url_for(False) if base_url else None
    )
    store = db if isinstance(db, str) else StateDB(db) if db else StateDB.default(environ)  # a str: a URL
    return stack.enter_context(Gateway(upstream, db=store))


def through_gateway(endpoint: Endpoint | None, url: str, run_id: str, api_key_env: str | None) -> Endpoint:
    """The endpoint the harness gets: the gateway, with the run id as the trace id in its path."""
    check_base_url(url)
    traced = f"{url.rstrip('/')}/t/{run_id}"
    if endpoint is None:
        return Endpoint(traced, api_key_env=api_key_env)
    return replace(endpoint, base_url=traced)


def captured(captor: Gateway, run_id: str, reported: Usage) -> dict[str, Any]:
    """The run's calls as its gateway stored them, their usage summed, and beside the harness's report."""
    captor.flush()
    return capture_of(captor.store.calls(run=run_id), captor.failures, reported)


def capture_of(calls: list[dict[str, Any]], failures: list[str], reported: Usage) -> dict[str, Any]:
    from tackroom.gateway.reconcile import reconcile
    from tackroom.gateway.store import summarize

    summed = summarize(calls, "run")
    return {
        "calls": calls,
        "usage": summed[0] if summed else None,
        "reconciliation": reconcile(reported, calls),
        "failures": failures,
    }


MAX_CALLS_BYTES = 256 * 1024 * 1024


FETCH_TIMEOUT_S = 30.0
"""How long a run waits for a running gateway's record of its calls (the gateway waits up to 10 s
for calls still in flight, then stores what it has)."""


def fetched(gateway: str, run_id: str, reported: Usage) -> dict[str, Any]:
    """The run's calls as a running gateway (``--gateway URL``) stored them, asked over HTTP.

    The answer is outside input: anything but the gateway's own shape leaves the capture's
    calls unknown (None), with the reason in ``failures``; the run itself is not failed.
    """
    import urllib.error
    import urllib.request

    import orjson

    url = f"{gateway.rstrip('/')}/_tackroom/calls?run={run_id}"
    shown = redact_text(gateway)
    try:
        with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_S) as answer:
            data = answer.read(MAX_CALLS_BYTES + 1)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return uncaptured(f"the gateway at {shown} did not give the run's calls: {exc}")
    if len(data) > MAX_CALLS_BYTES:
        return uncaptured(f"the gateway at {shown} sent more than {MAX_CALLS_BYTES} bytes of calls")
    try:
        value = orjson.loads(data)
        calls, failures = value["calls"], value["failures"]
        if not isinstance(calls, list) or not all(isinstance(f, str) for f in failures):
            raise TypeError("not a list of calls")
        return capture_of(calls, list(failures), reported)
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, ArithmeticError, AttributeError) as exc:
        return uncaptured(f"the gateway at {shown} answered something else than its calls ({exc!r})")


def uncaptured(reason: str) -> dict[str, Any]:
    return {"calls": None, "usage": None, "reconciliation": None, "failures": [reason]}
