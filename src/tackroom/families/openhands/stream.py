"""The OpenHands stream parser and the record shapes its transcript reader shares.

What the lines mean is told in the family's own docstring (:mod:`tackroom.families.openhands`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tackroom.families.base import StreamParser, int_or_none, json_line, tolerant
from tackroom.trace.events import (
    AssistantText,
    ErrorEvent,
    Event,
    Finished,
    SessionStarted,
    ToolCall,
    ToolResult,
    Usage,
)

MAX_STATE = 64 * 1024 * 1024
"""A base_state.json larger than this is not read."""

_CONVERSATION = re.compile(r"Conversation ID:\s*([0-9a-fA-F-]{8,64})\b")


def _parts_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
    return "".join(t for t in texts if isinstance(t, str))


class OpenHandsStreamParser(StreamParser):
    """Parses ``openhands --headless --json``."""

    def __init__(self) -> None:
        self._text: str | None = None
        self._failed = False
        self._session: str | None = None

    @tolerant
    def feed(self, line: str) -> list[Event]:
        data = json_line(line)
        if data is None:
            return self._human(line)
        kind = data.get("kind")
        if kind == "MessageEvent" and data.get("source") == "agent":
            message = data.get("llm_message")
            text = _parts_text(message.get("content")) if isinstance(message, dict) else ""
            if text.strip():
                self._text = text
                return [AssistantText(line, text=text)]
        elif kind == "ActionEvent":
            name = data.get("tool_name")
            call_id = data.get("tool_call_id")
            return [
                ToolCall(
                    line,
                    name=name if isinstance(name, str) else "",
                    call_id=call_id if isinstance(call_id, str) else None,
                    input=data.get("action"),
                )
            ]
        elif kind == "ObservationEvent":
            call_id = data.get("tool_call_id")
            observation = data.get("observation")
            output = _parts_text(observation.get("content")) if isinstance(observation, dict) else ""
            is_error = isinstance(observation, dict) and observation.get("is_error") is True
            return [
                ToolResult(
                    line,
                    call_id=call_id if isinstance(call_id, str) else None,
                    output=output,
                    is_error=is_error,
                )
            ]
        elif kind == "ConversationErrorEvent" and not self._failed:
            self._failed = True
            detail, code = data.get("detail"), data.get("code")
            text = (
                detail if isinstance(detail, str) and detail else str(code or "openhands reported an error")
            )
            return [ErrorEvent(line, message=text[:4096], fatal=True)]
        return []

    def _human(self, line: str) -> list[Event]:
        found = _CONVERSATION.search(line)
        if found is None or self._session is not None:
            return []
        self._session = found.group(1).replace("-", "").lower()
        return [SessionStarted(line, session_id=self._session)]

    def close(self, exit_code: int | None) -> list[Event]:
        # No terminal JSON line; an error event fails the run whatever the exit code.
        if self._failed or exit_code != 0:
            return [Finished(final_text=None, ok=False)]
        return [Finished(final_text=self._text, ok=True)]


def persistence_dir(home: Path | None, env: Mapping[str, str]) -> Path | None:
    """Where openhands keeps conversations: ``$OPENHANDS_PERSISTENCE_DIR``, else ``~/.openhands``."""
    if env.get("OPENHANDS_PERSISTENCE_DIR"):
        return Path(env["OPENHANDS_PERSISTENCE_DIR"])
    return home / ".openhands" if home is not None else None


def state_usage(state: Any) -> Usage:
    """``stats.usage_to_metrics.agent.accumulated_token_usage`` of a base_state.json."""
    figures: Any = state
    for key in ("stats", "usage_to_metrics", "agent", "accumulated_token_usage"):
        figures = figures.get(key) if isinstance(figures, dict) else None
    if not isinstance(figures, dict):
        return Usage()
    prompt = int_or_none(figures.get("prompt_tokens"))
    cached = int_or_none(figures.get("cache_read_tokens"))
    fresh = prompt - cached if prompt is not None and cached is not None and cached <= prompt else None
    return Usage(
        input=fresh,
        output=int_or_none(figures.get("completion_tokens")),
        cache_read=cached,
        reasoning=int_or_none(figures.get("reasoning_tokens")),
    )
