"""The openhands family: OpenHands CLI's ``openhands --headless --json``.

Verified on 1.16.0 against the mock. stdout mixes human lines (banners,
"Agent is working", a Rich summary box, ``Conversation ID: <hex>``) with one
JSON event per line; only lines starting with ``{`` are events. Their
``kind``: ``MessageEvent`` (``source`` user or agent, ``llm_message.content``
a list of text parts), ``ActionEvent`` (a tool call: ``tool_name``,
``tool_call_id``, ``action``), ``ObservationEvent`` (its result) and
``ConversationErrorEvent`` (``code``, ``detail``): a model failure, after
which the CLI still exits 0.

No usage is printed: it is in the conversation's
``$OPENHANDS_PERSISTENCE_DIR/conversations/<id>/base_state.json``
(``stats.usage_to_metrics.agent.accumulated_token_usage``), read after exit
for the conversation id the stream named. ``prompt_tokens`` includes the
cache read; over Chat Completions there is no cache-write figure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tackroom.families.base import Family, StreamParser, int_or_none, json_line, tolerant
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
    from tackroom.trace.model import TranscriptReader

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


class OpenHands(Family):
    """OpenHands CLI, verified on 1.16.0 against the mock over Chat Completions (litellm)."""

    name = "openhands"
    stream = "openhands --headless --json"
    verified = True
    reports_usage = frozenset({"input", "output", "cache_read", "reasoning"})

    def parser(self) -> StreamParser:
        return OpenHandsStreamParser()

    def transcripts(self) -> TranscriptReader:
        from tackroom.families.openhands.transcripts import OpenHandsTranscripts

        return OpenHandsTranscripts()

    def after_exit(self, home: Path | None, env: Mapping[str, str], events: Sequence[Event]) -> list[Event]:
        """The run's total usage, from the base_state.json of the conversation the stream named."""
        root = persistence_dir(home, env)
        session = next((e.session_id for e in events if isinstance(e, SessionStarted) and e.session_id), None)
        if root is None or session is None or not re.fullmatch(r"[0-9a-f]{8,64}", session):
            return []
        state = root / "conversations" / session / "base_state.json"
        try:
            if state.is_symlink() or not state.is_file() or state.stat().st_size > MAX_STATE:
                return []
            data = json.loads(state.read_bytes().decode("utf-8", errors="replace"))
        except (OSError, ValueError, RecursionError):
            return [ErrorEvent(message="openhands base_state.json could not be read", fatal=False)]
        usage = state_usage(data)
        return [UsageReport(usage=usage, scope="total")] if usage.reported else []


FAMILY = OpenHands()
