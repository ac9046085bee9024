"""The acp family: any agent that speaks the Agent Client Protocol (JSON-RPC 2.0 over stdio).

tackroom is the client. It sends ``initialize`` (protocol version 1, no file
system and no terminal capability: the agent runs its tools itself), then
``session/new`` in the run's workdir with the profile's MCP servers (see
below), then one ``session/prompt`` with the run's prompt; the answer to
that prompt (its ``stopReason``, and ``usage`` where the agent reports it)
ends the run, and stdin is closed. A run that reaches its timeout mid-turn first sends
``session/cancel``: the agent ends the turn (``stopReason: cancelled``, with
what it had used) before it is signalled, and the run counts as timed out.

What the agent streams in between (``session/update`` notifications) becomes
events: ``agent_message_chunk`` text is gathered into one
:class:`AssistantText` per message (a message ends where any other update
comes), ``tool_call`` and ``tool_call_update`` are merged by ``toolCallId``
into a :class:`ToolCall` (once it leaves ``pending``, or is put to the user)
and a :class:`ToolResult` (``completed`` or ``failed``). Thought chunks,
plans, mode and command lists and context-window figures (``usage_update``:
``used``/``size``, not token counts) have no event in tackroom's model and are
kept only in the raw stream (``stdout.log``).

A ``session/request_permission`` is answered from the run's options: with
``auto_accept`` the agent's ``allow_once`` option (else ``allow_always``),
without it ``reject_once`` (else ``reject_always``), and a non-fatal error
event says what was denied and why (ACP's answer has no field for a reason).
Any other request of the agent (``fs/*``, ``terminal/*``, which tackroom did
not offer) gets JSON-RPC's "method not found".

MCP servers reach an ACP agent through its client, in ``session/new``'s
``mcpServers``. An adapter whose agent takes them declares an ``mcp``
capability with the ``acp-mcp`` engine (:mod:`.engines`): the run's render
writes the profile's servers, in the protocol's shape and with their
``${VAR}`` references as written, into the file its ``path`` names in the
run's home, and the client reads it before the agent starts. As it sends
``session/new`` it resolves each reference from the harness's environment (a
server that references a variable the run does not have is not sent), and
sends an ``http`` or ``sse`` server only to an agent whose ``initialize``
answer advertised that transport (``agentCapabilities.mcpCapabilities``);
every server left out is named in a non-fatal error event, and a file the
client cannot read ends the run before any session starts (never a run
without the servers it was given).

The rest of a profile (rules, skills, subagents, commands, hooks) reaches an
ACP agent as it reaches the harness behind it, whose own files it reads: an
adapter declares the places and engines of the harness it wraps, and lacks
what that harness does not do over ACP. One engine is this family's:
``codex-acp-hooks`` (:mod:`.engines`), codex's hooks.json with the trust
codex-core asks of each hook, which codex-acp has no flag to waive.

Verified against the mock with ``@zed-industries/claude-agent-acp`` 0.23.1
(family ``acp``: the prompt's ``usage``, ``inputTokens``, ``outputTokens``,
``cachedReadTokens``, ``cachedWriteTokens``, ``thoughtTokens``, is the whole
turn's, so a ``total``), ``@zed-industries/codex-acp`` 0.16.0 (``acp-codex``:
no token counts) and Gemini CLI 0.61.0 ``--acp`` (``acp-gemini``: the output
count in ``_meta.quota``) and Qwen Code 0.24.4 ``--acp`` (``acp-qwen``: each
model call's usage in a message chunk's ``_meta.usage``). They differ only in
the usage they report; OpenCode 1.18.33 ``acp`` (``acp-opencode``) answers
with its last model call's usage as the turn's, so none is reported.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tackroom.families.base import (
    MAX_TEXT,
    ClientParser,
    Family,
    StreamParser,
    fresh_input,
    int_or_none,
    json_line,
    obj,
    seq,
    str_or_none,
    tolerant,
)
from tackroom.trace.events import (
    AssistantText,
    ErrorEvent,
    Event,
    Finished,
    SessionStarted,
    ToolCall,
    ToolResult,
    Usage,
    UsageReport,
)

if TYPE_CHECKING:
    from tackroom.profile.model import McpServer

PROTOCOL_VERSION = 1
"""The ACP version tackroom speaks (the agent answers with the one it chose)."""
MAX_TOOLS = 10_000
"""The most tool calls one run's state remembers; past it, the oldest are forgotten."""
METHOD_NOT_FOUND = -32601
MAX_SERVERS_FILE = 1024 * 1024
"""The most of the run's MCP servers file the client reads (tackroom wrote it; a larger one is not its)."""

_INITIALIZE, _NEW_SESSION, _PROMPT = 0, 1, 2
_ENDED = frozenset({"completed", "failed"})


def prompt_usage(data: Any) -> Usage:
    """A ``session/prompt`` answer's ``usage``: the turn's token counts."""
    data = obj(data)
    return Usage(
        input=int_or_none(data.get("inputTokens")),
        output=int_or_none(data.get("outputTokens")),
        cache_read=int_or_none(data.get("cachedReadTokens")),
        cache_write=int_or_none(data.get("cachedWriteTokens")),
        reasoning=int_or_none(data.get("thoughtTokens")),
    )


def content_text(content: Any) -> str | None:
    """The text of an ACP content block (``{"type": "text", "text": ...}``), else None."""
    block = obj(content)
    return str_or_none(block.get("text")) if block.get("type") == "text" else None


def tool_output(update: Mapping[str, Any]) -> str | None:
    """A finished tool call's output: its ``rawOutput`` text, else the text of its ``content``."""
    raw = update.get("rawOutput")
    if isinstance(raw, str):
        return raw
    parts = [content_text(obj(item).get("content")) for item in seq(update.get("content"))]
    texts = [part for part in parts if part is not None]
    return "\n".join(texts) if texts else None


def _tool_name(tool: Mapping[str, Any]) -> str:
    """The agent's own name for a tool where its ``_meta`` says it, else ACP's ``kind`` (execute, edit...)."""
    for value in obj(tool.get("_meta")).values():
        name = str_or_none(obj(value).get("toolName"))
        if name:
            return name
    return str_or_none(tool.get("kind")) or "other"


class AcpClient(ClientParser):
    """One run's ACP conversation: what to send, and the events of what the agent sends."""

    def __init__(self) -> None:
        self._out: list[str] = []
        self._prompt = ""
        self._cwd = ""
        self._auto_accept = False
        self._session: str | None = None
        self._message: list[str] = []
        self._message_size = 0
        self._last_message: str | None = None
        self._tools: dict[str, dict[str, Any]] = {}
        self._called: set[str] = set()
        self._finished = False
        self._cancelled = False
        self._env: Mapping[str, str] = {}
        self._servers: list[McpServer] = []
        self._unreadable: str | None = None

    # --- what tackroom says ------------------------------------------------------------

    def begin(
        self,
        prompt: str,
        workdir: Path,
        options: Mapping[str, Any],
        env: Mapping[str, str] | None = None,
        profile: Mapping[str, Path] | None = None,
    ) -> None:
        self._prompt = prompt
        self._cwd = str(workdir)
        self._auto_accept = bool(options.get("auto_accept"))
        self._env = dict(env or {})
        servers = (profile or {}).get("mcp")
        if servers is not None:
            self._read_servers(servers)
        capabilities = {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}
        params = {
            "protocolVersion": PROTOCOL_VERSION,
            "clientCapabilities": capabilities,
            "clientInfo": {"name": "tackroom", "version": _version()},
        }
        self._send(_INITIALIZE, "initialize", params)

    def outgoing(self) -> list[str]:
        out, self._out = self._out, []
        return out

    def cancel(self) -> list[Event]:
        """Out of time: ``session/cancel``; the agent answers the prompt with ``stopReason: cancelled``."""
        if self._session is not None and not self.over:
            self._cancelled = True
            message = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": self._session}}
            self._out.append(json.dumps(message))
        return []

    def _send(self, request_id: int, method: str, params: dict[str, Any]) -> None:
        self._out.append(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))

    def _reply(self, request_id: Any, result: dict[str, Any] | None = None, error: str | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        if error is not None:
            message["error"] = {"code": METHOD_NOT_FOUND, "message": error}
        else:
            message["result"] = result or {}
        self._out.append(json.dumps(message))

    # --- what the agent says -----------------------------------------------------------

    @tolerant
    def feed(self, line: str) -> list[Event]:
        data = json_line(line)
        if data is None or data.get("jsonrpc") != "2.0":
            return []  # a banner or a log line on stdout: not the protocol
        method = data.get("method")
        if isinstance(method, str):
            if "id" in data:
                return self._request(line, data["id"], method, obj(data.get("params")))
            if method == "session/update":
                return self._update(line, obj(obj(data.get("params")).get("update")))
            return []
        if "id" in data:
            return self._response(line, data.get("id"), data)
        return []

    def _response(self, line: str, request_id: Any, data: dict[str, Any]) -> list[Event]:
        if (
            self.over
            or request_id not in (_INITIALIZE, _NEW_SESSION, _PROMPT)
            or isinstance(request_id, bool)
        ):
            return []
        if "error" in data or not isinstance(data.get("result"), dict):
            return self._failed(line, request_id, obj(data.get("error")))
        result: dict[str, Any] = data["result"]
        if request_id == _INITIALIZE:
            version = result.get("protocolVersion")
            if version != PROTOCOL_VERSION:
                message = f"the agent speaks ACP version {version!r}; tackroom speaks {PROTOCOL_VERSION}"
                return self._end(line, [ErrorEvent(line, message=message, fatal=True)], ok=False)
            if self._unreadable is not None:
                error = ErrorEvent(line, message=self._unreadable, fatal=True)
                return self._end(line, [error], ok=False)
            servers, dropped = self._session_servers(result)
            self._send(_NEW_SESSION, "session/new", {"cwd": self._cwd, "mcpServers": servers})
            return [ErrorEvent(line, message=why, fatal=False) for why in dropped]
        if request_id == _NEW_SESSION:
            session = str_or_none(result.get("sessionId"))
            if not session:
                error = ErrorEvent(
                    line, message="the agent's session/new answer has no sessionId", fatal=True
                )
                return self._end(line, [error], ok=False)
            self._session = session
            prompt = [{"type": "text", "text": self._prompt}]
            self._send(_PROMPT, "session/prompt", {"sessionId": session, "prompt": prompt})
            return [SessionStarted(line, session_id=session)]
        return self._answered(line, result)

    def _read_servers(self, path: Path) -> None:
        """The MCP servers the run's render wrote for ``session/new`` (none when it wrote no file)."""
        from tackroom.families.acp.engines import read_servers
        from tackroom.profile.engines.settings import BadEntry

        try:
            raw = path.read_bytes() if path.is_file() else None
        except OSError as exc:
            self._unreadable = f"the run's MCP servers ({path}) could not be read: {exc.strerror or exc}"
            return
        if raw is None:
            return
        if len(raw) > MAX_SERVERS_FILE:
            self._unreadable = f"the run's MCP servers ({path}) are larger than tackroom ever writes them"
            return
        try:
            self._servers = read_servers(json.loads(raw.decode("utf-8")))
        except (ValueError, RecursionError, BadEntry) as exc:
            why = str(exc)[:300] if isinstance(exc, BadEntry) else "not JSON"
            self._unreadable = f"the run's MCP servers ({path}) are not what tackroom wrote: {why}"

    def _session_servers(self, answer: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
        """session/new's ``mcpServers`` for this agent, and why each server left out was.

        A remote transport is sent only where the agent's ``initialize`` answer
        advertised it; every ``${VAR}`` is resolved here, from the harness's
        environment, and the values live only in the message to the agent.
        """
        from tackroom.families.acp.engines import Unresolved, resolve, session_entry

        advertised = obj(obj(answer.get("agentCapabilities")).get("mcpCapabilities"))
        sent: list[dict[str, Any]] = []
        dropped: list[str] = []
        for server in self._servers:
            kind = server.kind
            if kind != "stdio" and advertised.get(kind) is not True:
                dropped.append(
                    f"dropped MCP server {server.name!r}: the agent does not take {kind} MCP servers (its "
                    f"initialize answer's agentCapabilities.mcpCapabilities.{kind} is not true)"
                )
                continue
            try:
                sent.append(resolve(session_entry(server), self._env))
            except Unresolved as exc:
                dropped.append(
                    f"dropped MCP server {server.name!r}: it references ${{{exc.name}}}, which is not in "
                    "the harness's environment (only the allowlist and the adapter's env.pass reach it)"
                )
        return sent, dropped

    def usage(self, result: dict[str, Any]) -> Usage:
        """The turn's usage from the answer to ``session/prompt``: ACP's own ``usage`` field."""
        return prompt_usage(result.get("usage"))

    def _answered(self, line: str, result: dict[str, Any]) -> list[Event]:
        events = self._flush()
        usage = self.usage(result)
        events += [UsageReport(line, usage=usage, scope="total")] if usage.reported else []
        stop = result.get("stopReason")
        if stop != "end_turn":
            message = (
                "the run ran out of time: tackroom cancelled the turn (session/cancel) and the agent ended it"
                if stop == "cancelled" and self._cancelled
                else f"the agent stopped the turn: {stop!r}"
                if stop
                else "the agent's answer has no stopReason"
            )
            events.append(ErrorEvent(line, message=message, fatal=True))
        return self._end(line, events, ok=stop == "end_turn")

    def _failed(self, line: str, request_id: int, error: dict[str, Any]) -> list[Event]:
        what = {_INITIALIZE: "initialize", _NEW_SESSION: "session/new", _PROMPT: "session/prompt"}[request_id]
        message = str_or_none(error.get("message")) or "no message"
        # JSON-RPC's optional data: a string, or an object whose details (claude-agent-acp) or
        # message (codex-acp) says what the model call answered.
        data = error.get("data")
        found = [data] if isinstance(data, str) else [obj(data).get("details"), obj(data).get("message")]
        details = next((d for d in found if isinstance(d, str) and d), None)
        text = f"{what} failed: {message}" + (f": {details}" if details else "")
        return self._end(line, [*self._flush(), ErrorEvent(line, message=text[:2000], fatal=True)], ok=False)

    def _end(self, line: str, events: list[Event], *, ok: bool) -> list[Event]:
        self.over = True
        self._finished = True
        return [*events, Finished(line, final_text=self._last_message if ok else None, ok=ok)]

    def _request(self, line: str, request_id: Any, method: str, params: dict[str, Any]) -> list[Event]:
        if method != "session/request_permission":
            self._reply(request_id, error=f"tackroom does not offer {method}")
            return []
        tool = obj(params.get("toolCall"))
        events = self._flush()
        call_id = str_or_none(tool.get("toolCallId"))
        if call_id is not None:
            # What the request says of the call (its content describes the question, not the output).
            asked = {k: v for k, v in tool.items() if k in ("title", "kind", "rawInput", "_meta")}
            events += self._merge(line, call_id, asked, asked=True)
        kinds = ("allow_once", "allow_always") if self._auto_accept else ("reject_once", "reject_always")
        options = [obj(option) for option in seq(params.get("options"))]
        chosen = next(
            (
                o.get("optionId")
                for kind in kinds
                for o in options
                if o.get("kind") == kind and o.get("optionId")
            ),
            None,
        )
        if chosen is None:
            self._reply(request_id, {"outcome": {"outcome": "cancelled"}})
        else:
            self._reply(request_id, {"outcome": {"outcome": "selected", "optionId": chosen}})
        if not self._auto_accept:
            title = str_or_none(tool.get("title")) or call_id or "a tool call"
            why = "the run does not auto-accept (option auto_accept is off)"
            events.append(ErrorEvent(line, message=f"permission for {title!r} denied: {why}", fatal=False))
        return events

    def call_usage(self, update: dict[str, Any]) -> Usage:
        """One model call's usage carried by a session update (none, in ACP itself)."""
        return Usage()

    def _update(self, line: str, update: dict[str, Any]) -> list[Event]:
        per_call = self.call_usage(update)
        if per_call.reported:
            return [*self._update_events(line, update), UsageReport(line, usage=per_call, scope="turn")]
        return self._update_events(line, update)

    def _update_events(self, line: str, update: dict[str, Any]) -> list[Event]:
        kind = update.get("sessionUpdate")
        if kind == "agent_message_chunk":
            text = content_text(update.get("content"))
            if text and self._message_size + len(text) <= MAX_TEXT:
                self._message.append(text)
                self._message_size += len(text)
            return []
        if kind == "agent_thought_chunk":
            return []  # thinking is not a message: it neither ends one nor is kept as an event
        events = self._flush()
        call_id = str_or_none(update.get("toolCallId"))
        if kind in ("tool_call", "tool_call_update") and call_id is not None:
            events += self._merge(line, call_id, update)
        return events

    def _merge(
        self, line: str, call_id: str, update: Mapping[str, Any], *, asked: bool = False
    ) -> list[Event]:
        tool = self._tools.get(call_id)
        if tool is None:
            if len(self._tools) >= MAX_TOOLS:  # calls that never end are forgotten, oldest first
                oldest = next(iter(self._tools))
                del self._tools[oldest]
                self._called.discard(oldest)
            tool = self._tools[call_id] = {}
        for key, value in update.items():
            if value is not None and not (key == "rawInput" and value == {} and tool.get("rawInput")):
                tool[key] = value
        status = str_or_none(tool.get("status"))  # the agent's word: a status of another type is none
        events: list[Event] = []
        if call_id not in self._called and (asked or status not in (None, "pending")):
            self._called.add(call_id)
            events.append(ToolCall(line, name=_tool_name(tool), call_id=call_id, input=tool.get("rawInput")))
        if status in _ENDED:
            events.append(
                ToolResult(line, call_id=call_id, output=tool_output(tool), is_error=status == "failed")
            )
            self._tools.pop(call_id, None)
            self._called.discard(call_id)
        return events

    def _flush(self) -> list[Event]:
        """The message gathered so far, as one event; it is also the final text, until another comes."""
        text = "".join(self._message)
        self._message, self._message_size = [], 0
        if not text:
            return []
        self._last_message = text
        return [AssistantText(text=text)]

    def close(self, exit_code: int | None) -> list[Event]:
        # A conversation that did not reach its answer (the agent crashed, or was stopped) is the
        # runner's to report; what it said so far is still an event.
        return [] if self._finished else self._flush()


def _version() -> str:
    from tackroom._dists import version

    return version("tackroom") or "unknown"


class GeminiAcpClient(AcpClient):
    """Gemini CLI's ACP mode: the turn's usage is in the answer's ``_meta.quota.token_count``."""

    def usage(self, result: dict[str, Any]) -> Usage:
        # Its input_tokens is the prompt count, cached tokens included, and no cached figure is
        # given beside it: tackroom's input (cache reads excluded) cannot be told, so only output is.
        counted = obj(obj(obj(result.get("_meta")).get("quota")).get("token_count"))
        return Usage(output=int_or_none(counted.get("output_tokens")))


class QwenAcpClient(AcpClient):
    """Qwen Code's ACP mode: each model call's usage rides on a message chunk's ``_meta.usage``."""

    def call_usage(self, update: dict[str, Any]) -> Usage:
        # inputTokens is the prompt count, cached tokens included (OpenAI's convention), with
        # cachedReadTokens beside it; thoughtTokens is written as 0 whatever the model said.
        data = obj(obj(update.get("_meta")).get("usage"))
        if not data:
            return Usage()
        cached = int_or_none(data.get("cachedReadTokens"))
        return Usage(
            input=fresh_input(int_or_none(data.get("inputTokens")), cached),
            output=int_or_none(data.get("outputTokens")),
            cache_read=cached,
        )


class OpenCodeAcpClient(AcpClient):
    """OpenCode's ACP mode: the answer's ``usage`` is its last model call's, not the turn's."""

    def usage(self, result: dict[str, Any]) -> Usage:
        # A turn with a tool call made two model calls, and the answer counted only the second:
        # the turn's figures are not in the stream, so none is reported.
        return Usage()


class Acp(Family):
    """Agents driven over the Agent Client Protocol, with tackroom as the client.

    The usage an agent reports differs (ACP's ``usage`` is optional, and some
    agents put it in ``_meta``), and a family says which figures its harness
    reports: one family per way of reporting, all with this client.
    """

    name = "acp"
    stream = "ACP JSON-RPC over stdio (session/update notifications)"
    engines_module = "tackroom.families.acp.engines"
    protocol = "acp"
    """The transport this family speaks (``tackroom run NAME --transport acp``)."""
    verified = True
    terminal = "the answer to session/prompt"
    reports_usage = frozenset({"input", "output", "cache_read", "cache_write"})
    """ACP's ``usage`` on the prompt's answer, as claude-agent-acp 0.23.1 sends it (no thought tokens)."""

    def parser(self) -> StreamParser:
        return AcpClient()


class CodexAcp(Acp):
    """codex-acp 0.16.0: no token counts (its ``usage_update`` is the context window's fill)."""

    name = "acp-codex"
    reports_usage = frozenset()


class GeminiAcp(Acp):
    """Gemini CLI 0.61.0 in ACP mode: the output count, from ``_meta``."""

    name = "acp-gemini"
    reports_usage = frozenset({"output"})

    def parser(self) -> StreamParser:
        return GeminiAcpClient()


class QwenAcp(Acp):
    """Qwen Code 0.24.4 in ACP mode: each call's input (uncached), output and cache reads, from ``_meta``."""

    name = "acp-qwen"
    reports_usage = frozenset({"input", "output", "cache_read"})

    def parser(self) -> StreamParser:
        return QwenAcpClient()


class OpenCodeAcp(Acp):
    """OpenCode 1.18.33 in ACP mode: no turn usage (its answer's ``usage`` is the last call's)."""

    name = "acp-opencode"
    reports_usage = frozenset()

    def parser(self) -> StreamParser:
        return OpenCodeAcpClient()


FAMILY = Acp()
CODEX = CodexAcp()
OPENCODE = OpenCodeAcp()
GEMINI = GeminiAcp()
QWEN = QwenAcp()
