"""The qwen family's stream parser: Qwen Code's ``stream-json`` lines into events (see the package)."""

from __future__ import annotations

from typing import Any

from tackroom.families.base import fresh_input, int_or_none, obj, seq, str_or_none
from tackroom.families.claude_code.stream import ClaudeStreamParser
from tackroom.trace.events import ErrorEvent, Event, Finished, Usage, UsageReport

#: How qwen words a failed model call in place of the model's reply.
API_ERROR = "[API Error"


def qwen_usage(data: Any) -> Usage:
    """Qwen's usage (prompt including cached tokens) in tackroom's convention (input without them)."""
    data = obj(data)
    prompt = int_or_none(data.get("input_tokens"))
    cached = int_or_none(data.get("cache_read_input_tokens"))
    # A prompt smaller than its cached part contradicts itself: fresh_input goes negative, Usage says unknown.
    return Usage(
        input=fresh_input(prompt, cached), output=int_or_none(data.get("output_tokens")), cache_read=cached
    )


def is_api_error(text: Any) -> bool:
    """Whether a reply or result text is qwen's wording of a failed model call."""
    return isinstance(text, str) and text.lstrip().startswith(API_ERROR)


def _text_blocks(message: dict[str, Any]) -> list[str]:
    return [
        b["text"]
        for b in seq(message.get("content"))
        if isinstance(b, dict) and isinstance(b.get("text"), str)
    ]


class QwenStreamParser(ClaudeStreamParser):
    """Claude's stream-json parser with qwen's usage convention and its exit-0 model failures."""

    def _assistant(self, line: str, message: dict[str, Any]) -> list[Event]:
        texts = _text_blocks(message)
        if texts and all(is_api_error(text) for text in texts):
            # Not a model reply: qwen's own error text, with usage it made up (0/0). The result
            # line that follows decides whether the run failed.
            return [ErrorEvent(line, message=text.strip(), fatal=False) for text in texts]
        events = [e for e in super()._assistant(line, message) if not isinstance(e, UsageReport)]
        usage = qwen_usage(message.get("usage"))
        return [*events, UsageReport(line, usage=usage, scope="turn")] if usage.reported else events

    def _result(self, line: str, data: dict[str, Any]) -> list[Event]:
        text = data.get("result")
        error = str_or_none(obj(data.get("error")).get("message"))
        failure = text if is_api_error(text) else error if is_api_error(error) else None
        if failure is not None:
            # The call failed (the text says so, whatever the subtype). Its usage is qwen's 0 for a
            # call that returned none, so the run's usage is the sum of the replies that did arrive
            # (none: not reported).
            return [ErrorEvent(line, message=str(failure).strip(), fatal=True), Finished(line, ok=False)]
        events = [e for e in super()._result(line, data) if not isinstance(e, UsageReport)]
        if error is not None and error.strip():
            # A failed result names its cause in error.message, which says more than the subtype.
            events = [
                ErrorEvent(line, message=error.strip(), fatal=e.fatal) if isinstance(e, ErrorEvent) else e
                for e in events
            ]
        usage = qwen_usage(data.get("usage"))
        return [UsageReport(line, usage=usage, scope="total"), *events] if usage.reported else events
