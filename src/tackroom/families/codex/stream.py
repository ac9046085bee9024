"""The codex family's stream parser: ``codex exec --json`` lines into events (see the package)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tackroom.families.base import StreamParser, fresh_input, int_or_none, json_line, tolerant
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


def codex_usage(data: Any) -> Usage:
    """Usage from ``turn.completed.usage``."""
    if not isinstance(data, dict):
        return Usage()
    cached = int_or_none(data.get("cached_input_tokens"))
    return Usage(
        input=fresh_input(int_or_none(data.get("input_tokens")), cached),
        output=int_or_none(data.get("output_tokens")),
        cache_read=cached,
        cache_write=int_or_none(data.get("cache_write_input_tokens")),
        reasoning=int_or_none(data.get("reasoning_output_tokens")),
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _call_of(item: dict[str, Any]) -> tuple[str, Any] | None:
    """The tool name and input of an item that is a tool call, or None for any other item."""
    kind = item.get("type")
    if kind == "command_execution":
        return "command_execution", {"command": item.get("command")}
    if kind == "file_change":
        return "file_change", {"changes": item.get("changes")}
    if kind == "mcp_tool_call":
        # Named as the model sees it (facts §2: namespace mcp__<server>, child <tool>).
        return f"mcp__{item.get('server')}__{item.get('tool')}", item.get("arguments")
    if kind == "collab_tool_call":
        return str(item.get("tool") or "collab_tool_call"), {
            "prompt": item.get("prompt"),
            "receiver_thread_ids": item.get("receiver_thread_ids"),
        }
    if kind == "web_search":
        return "web_search", {"query": item.get("query")}
    return None


def _failed(item: dict[str, Any]) -> bool:
    exit_code = int_or_none(item.get("exit_code"))
    return (
        item.get("status") in ("failed", "declined")
        or item.get("error") is not None
        or (exit_code is not None and exit_code != 0)
    )


def _mcp_output(item: dict[str, Any]) -> str | None:
    error = item.get("error")
    if isinstance(error, dict):
        return _text(error.get("message"))
    result = item.get("result")
    content = result.get("content") if isinstance(result, dict) else None
    if not isinstance(content, list):
        return None
    return "".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))


def _changes_output(item: dict[str, Any]) -> str | None:
    changes = item.get("changes")
    if not isinstance(changes, list):
        return None
    return "\n".join(f"{c.get('kind')} {c.get('path')}" for c in changes if isinstance(c, dict))


def _collab_output(item: dict[str, Any]) -> str | None:
    states = item.get("agents_states")
    if not isinstance(states, dict):
        return None
    messages = [s.get("message") for s in states.values() if isinstance(s, dict)]
    return "\n".join(m for m in messages if isinstance(m, str)) or None


def _command_output(item: dict[str, Any]) -> str | None:
    return _text(item.get("aggregated_output"))  # stdout and stderr, interleaved


def _no_output(item: dict[str, Any]) -> str | None:
    return None  # web_search: the stream carries the query, not what was found


_OUTPUTS: dict[str, Callable[[dict[str, Any]], str | None]] = {
    "command_execution": _command_output,
    "file_change": _changes_output,
    "mcp_tool_call": _mcp_output,
    "collab_tool_call": _collab_output,
}


class CodexStreamParser(StreamParser):
    """Parses ``codex exec --json``: one turn per run, tool items opened and closed by id."""

    def __init__(self) -> None:
        self._started: set[str] = set()
        self._last_text: str | None = None
        self._finished = False
        # The last top-level error, while it is still codex's latest word.
        self._pending_error: str | None = None

    @tolerant
    def feed(self, line: str) -> list[Event]:
        data = json_line(line)
        if data is None:
            return []
        kind = data.get("type")
        if kind != "error":
            self._pending_error = None
        if kind == "thread.started":
            return [SessionStarted(line, session_id=_text(data.get("thread_id")))]
        if kind in ("item.started", "item.completed"):
            item = data.get("item")
            return self._item(line, item, kind == "item.completed") if isinstance(item, dict) else []
        if kind == "turn.completed":
            return self._completed(line, data)
        if kind == "turn.failed":
            return self._failed_turn(line, data)
        if kind == "error":
            return self._error(line, data)
        return []

    def close(self, exit_code: int | None) -> list[Event]:
        # Killed or crashed mid-turn: if codex's last word was an error (say, its
        # endless "Reconnecting..." to a dead endpoint), that is why the run failed.
        if self._finished or self._pending_error is None or exit_code == 0:
            return []
        return [ErrorEvent(message=self._pending_error, fatal=True)]

    def _item(self, line: str, item: dict[str, Any], completed: bool) -> list[Event]:
        kind = item.get("type")
        if kind == "agent_message":
            text = _text(item.get("text"))
            if not completed or not text:
                return []
            self._last_text = text
            return [AssistantText(line, text=text)]
        if kind == "error":
            # Warnings (e.g. the hook-trust bypass notice); the run goes on.
            message = _text(item.get("message")) or ""
            return [ErrorEvent(line, message=message, fatal=False)] if completed else []
        return self._tool_item(line, item, completed)

    def _tool_item(self, line: str, item: dict[str, Any], completed: bool) -> list[Event]:
        call = _call_of(item)
        if call is None:
            return []  # reasoning, todo_list: not tool calls
        call_id = _text(item.get("id"))
        events: list[Event] = []
        if call_id is None or call_id not in self._started:
            # Some items arrive completed only, never started.
            if call_id is not None:
                self._started.add(call_id)
            events.append(ToolCall(line, name=call[0], call_id=call_id, input=call[1]))
        if completed:
            output = _OUTPUTS.get(str(item.get("type")), _no_output)(item)
            events.append(ToolResult(line, call_id=call_id, output=output, is_error=_failed(item)))
            self._started.discard(call_id or "")  # a completed item is not announced again; forget it
        return events

    def _completed(self, line: str, data: dict[str, Any]) -> list[Event]:
        self._finished = True
        events: list[Event] = []
        usage = codex_usage(data.get("usage"))
        if usage.reported:
            events.append(UsageReport(line, usage=usage, scope="total"))
        events.append(Finished(line, final_text=self._last_text, ok=True))
        return events

    def _failed_turn(self, line: str, data: dict[str, Any]) -> list[Event]:
        self._finished = True
        error = data.get("error")
        message = _text(error.get("message")) if isinstance(error, dict) else None
        return [
            ErrorEvent(line, message=message or "turn failed", fatal=True),
            Finished(line, final_text=self._last_text, ok=False),
        ]

    def _error(self, line: str, data: dict[str, Any]) -> list[Event]:
        message = _text(data.get("message")) or ""
        self._pending_error = message
        return [ErrorEvent(line, message=message, fatal=False)]
