"""The mini-swe-agent stream parser and the record shapes its transcript reader shares.

What the lines mean is told in the family's own docstring (:mod:`tackroom.families.mini_swe_agent`).
"""

from __future__ import annotations

import json
from typing import Any

from tackroom.families.base import (
    MAX_TEXT,
    StreamParser,
    clean,
    fresh_input,
    int_or_none,
    json_arguments,
    obj,
    seq,
    str_or_none,
)
from tackroom.trace.events import (
    AssistantText,
    ErrorEvent,
    Event,
    Finished,
    ToolCall,
    ToolResult,
    Usage,
    UsageReport,
)

TRAJECTORY_FORMAT = "mini-swe-agent-1.1"
SUBMITTED = "Submitted"


def response_usage(extra: Any) -> Usage:
    """One model call's usage: ``extra.response.usage`` of an assistant message (OpenAI's shape)."""
    usage = obj(obj(obj(extra).get("response")).get("usage"))
    if not usage:
        return Usage()
    prompt = int_or_none(usage.get("prompt_tokens"))
    cached = int_or_none(obj(usage.get("prompt_tokens_details")).get("cached_tokens"))
    return Usage(
        input=fresh_input(prompt, cached),
        output=int_or_none(usage.get("completion_tokens")),
        cache_read=cached,
        reasoning=int_or_none(obj(usage.get("completion_tokens_details")).get("reasoning_tokens")),
    )


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [obj(p).get("text") for p in seq(content) if obj(p).get("type") == "text"]
    return "".join(p for p in parts if isinstance(p, str))


def message_events(message: dict[str, Any]) -> list[Event]:
    """The events of one trajectory message: an assistant's text, tool calls and usage, a tool's
    result, and the error of an ``exit`` whose status is not ``Submitted`` (the answer of one that
    is, the run's final text, is the caller's)."""
    raw = json.dumps(message, ensure_ascii=False)[:MAX_TEXT]
    role, extra = message.get("role"), obj(message.get("extra"))
    events: list[Event] = []
    if role == "assistant":
        text = _content_text(message.get("content"))
        if text.strip():
            events.append(AssistantText(raw, text=text))
        for call in seq(message.get("tool_calls")):
            function = obj(obj(call).get("function"))
            name = str_or_none(function.get("name")) or ""
            call_id = str_or_none(obj(call).get("id"))
            events.append(
                ToolCall(raw, name=name, call_id=call_id, input=json_arguments(function.get("arguments")))
            )
        usage = response_usage(extra)
        if usage.reported:
            events.append(UsageReport(raw, usage=usage, scope="turn"))
    elif role == "tool":
        returncode = extra.get("returncode")
        output = extra.get("raw_output")
        events.append(
            ToolResult(
                raw,
                call_id=str_or_none(message.get("tool_call_id")),
                output=output if isinstance(output, str) else _content_text(message.get("content")),
                is_error=isinstance(returncode, int) and returncode != 0,
            )
        )
    elif role == "exit":
        status = str_or_none(extra.get("exit_status")) or ""
        if status != SUBMITTED:
            detail = _content_text(message.get("content")).strip()
            shown = f"{status}: {detail}" if detail and detail != status else status or "no exit status"
            events.append(ErrorEvent(raw, message=f"mini-swe-agent exited: {shown}"[:4096], fatal=True))
    return events


class MiniStreamParser(StreamParser):
    """Parses mini's stdout: the Rich transcript, and the trajectories saved into it."""

    def __init__(self) -> None:
        self._block: list[str] | None = None
        self._size = 0
        self._seen = 0
        """How many of the trajectory's messages are already events."""
        self._exit: dict[str, Any] | None = None
        self._info: dict[str, Any] = {}
        self._overflowed = False

    def feed(self, line: str) -> list[Event]:
        text = line.rstrip("\r\n")
        if text == "{":
            self._block, self._size = [text], len(text)
            return []
        if self._block is None:
            return []
        # json.dumps ends with no newline: the transcript's next print follows the "}" on its line.
        closing = text.startswith("}")
        text = "}" if closing else text
        self._block.append(text)
        self._size += len(text) + 1
        if self._size > MAX_TEXT:
            self._block = None
            if self._overflowed:
                return []
            self._overflowed = True
            return [ErrorEvent(line[:200], message="a trajectory larger than tackroom reads", fatal=False)]
        if not closing:
            return []
        block, self._block = "\n".join(self._block), None
        return self._trajectory(block)

    def _trajectory(self, block: str) -> list[Event]:
        try:
            data = json.loads(block)
        except (ValueError, RecursionError):
            return []  # a transcript line "{" that opened no trajectory
        data = clean(data)
        if not isinstance(data, dict) or data.get("trajectory_format") != TRAJECTORY_FORMAT:
            return []
        self._info = obj(data.get("info"))
        messages = seq(data.get("messages"))
        events: list[Event] = []
        for message in messages[self._seen :]:
            events += self._message(obj(message))
        self._seen = max(self._seen, len(messages))
        return events

    def _message(self, message: dict[str, Any]) -> list[Event]:
        if message.get("role") == "exit":
            if self._exit is not None:
                return []
            raw = json.dumps(message, ensure_ascii=False)[:MAX_TEXT]
            extra = obj(message.get("extra"))
            self._exit = {"extra": extra, "content": _content_text(message.get("content")), "raw": raw}
        return message_events(message)

    def close(self, exit_code: int | None) -> list[Event]:
        exit_message = self._exit
        if exit_message is None:
            return [Finished(final_text=None, ok=False)]
        extra = exit_message["extra"]
        if extra.get("exit_status") != SUBMITTED or exit_code != 0:
            return [Finished(final_text=None, ok=False)]
        submission = extra.get("submission")
        text = submission if isinstance(submission, str) else exit_message["content"]
        events: list[Event] = [AssistantText(exit_message["raw"], text=text)] if text.strip() else []
        return [*events, Finished(final_text=text, ok=True)]
