"""mini-swe-agent's trajectory files: ``*.traj.json`` in its global config dir.

Verified on 2.4.6. ``mini`` saves its trajectory after every step to ``-o``,
by default ``last_mini_run.traj.json`` in its global config dir
(``MSWEA_GLOBAL_CONFIG_DIR``, else ``~/.config/mini-swe-agent``), which the
next run overwrites. It is one JSON object, ``{"info", "messages",
"trajectory_format": "mini-swe-agent-1.1"}``, rewritten whole at each save, so
it is read whole when it changed (``incremental = False``); a run that
overwrites it replaces what was read of it. A file caught mid-write, or of
another format, is an issue and nothing else. tackroom's own runs send the
trajectory to stdout (``-o /dev/stdout``), where the family reads it, so they
leave no file here.

The trajectory names no session: the session is the file, its name without
``.traj.json``. ``info.config.model.model_name`` is the session's model,
``info.config.environment.cwd`` its work dir (empty by default: none). Each
message is a row (``line`` its place from 1), mapped as the family maps it
from stdout (:func:`~tackroom.families.mini_swe_agent.stream.message_events`): an
assistant's text, ``tool_calls`` and usage, a ``tool`` result, and an
``exit`` that is not ``Submitted`` as the run's error; a ``Submitted`` exit's
submission is the assistant's answer. A ``user`` message is the user's text
(the task in mini's template), a ``system`` message and any other role is kept
as a raw record. A message's time is ``extra.timestamp`` (epoch seconds).

Usage is per model call, the family's :func:`~tackroom.families.mini_swe_agent.stream.response_usage`
of ``extra.response.usage`` (litellm's OpenAI usage): ``prompt_tokens`` less
its ``cached_tokens`` is the input, ``reasoning_tokens`` as written, no cache
write figure; a call without it reports nothing, and a null figure (litellm
writes ``cached_tokens: null`` for a provider without one) is none. A figure
that is there but not a count is unknown. A call's key is its response id (``extra.response.id``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from tackroom.families.base import int_or_none, obj, seq, str_or_none, text_or_none
from tackroom.families.kimi.transcripts import iso
from tackroom.families.mini_swe_agent.stream import (
    SUBMITTED,
    TRAJECTORY_FORMAT,
    _content_text,
    message_events,
    response_usage,
)
from tackroom.families.openhands.transcripts import read_json
from tackroom.trace.events import (
    FIGURES,
    AssistantText,
    Event,
    Record,
    SessionStarted,
    Usage,
    UsageReport,
    UserText,
)
from tackroom.trace.model import Cursor, SessionMeta, TraceEvent, TraceIssue, TraceItem, TranscriptReader

MAX_TRAJECTORY = 256 * 1024 * 1024
"""A trajectory larger than this is not read (each step adds its whole model response)."""
SUFFIX = ".traj.json"


def usage_of(extra: Any) -> Usage:
    """A message's ``extra.response.usage``; a figure that is there but not a count is unknown."""
    usage = response_usage(extra)
    figures = obj(obj(obj(extra).get("response")).get("usage"))
    details = {
        "prompt_tokens": (figures, ("input",)),
        "completion_tokens": (figures, ("output",)),
        "cached_tokens": (obj(figures.get("prompt_tokens_details")), ("cache_read", "input")),
        "reasoning_tokens": (obj(figures.get("completion_tokens_details")), ("reasoning",)),
    }
    wrong = {
        name
        for key, (where, names) in details.items()
        if where.get(key) is not None and int_or_none(where[key]) is None
        for name in names
    }
    if not wrong:
        return usage
    values = {name: getattr(usage, name) for name in FIGURES if name not in wrong}
    return Usage(**values, unknown=frozenset(wrong))


def _events(message: dict[str, Any]) -> list[Event]:
    role = message.get("role")
    if role in ("assistant", "tool"):
        return [e for e in message_events(message) if not isinstance(e, UsageReport)]
    if role == "exit":
        extra = obj(message.get("extra"))
        if extra.get("exit_status") != SUBMITTED:
            return message_events(message)
        submission = extra.get("submission")
        text = submission if isinstance(submission, str) else _content_text(message.get("content"))
        return [AssistantText(text=text)] if text.strip() else []
    if role == "user" and isinstance(text := _content_text(message.get("content")), str) and text:
        return [UserText(text=text)]
    kind = f"message.{role}" if isinstance(role, str) else "message"
    return [Record(orjson.dumps(message).decode(), record_type=kind)]


class MiniTranscripts(TranscriptReader):
    """Reads ``*.traj.json``."""

    incremental = False
    suffixes = (SUFFIX,)

    def read(self, path: Path, cursor: Cursor, *, usage_only: bool = False) -> Iterator[TraceItem]:
        session = path.name.removesuffix(SUFFIX) or path.name
        data = read_json(path, MAX_TRAJECTORY)
        if isinstance(data, str):  # caught mid-write, or not a trajectory: read when it is whole
            yield TraceIssue(path, 0, data)
            return
        if data.get("trajectory_format") != TRAJECTORY_FORMAT:
            yield TraceIssue(path, 0, f"not a {TRAJECTORY_FORMAT} trajectory")
            return
        config = obj(obj(data.get("info")).get("config"))
        model = text_or_none(obj(config.get("model")).get("model_name"))
        info = SessionMeta(session, cwd=text_or_none(obj(config.get("environment")).get("cwd")))
        info.saw(None, model)
        items: list[TraceItem] = []
        for number, value in enumerate(seq(data.get("messages")), start=1):
            if not isinstance(value, dict):
                items.append(TraceIssue(path, number, "a message that is not a JSON object"))
                continue
            message = value
            extra = obj(message.get("extra"))
            timestamp = iso(extra.get("timestamp"))
            response = obj(extra.get("response"))
            call_model = str_or_none(response.get("model")) if message.get("role") == "assistant" else None
            info.saw(timestamp, call_model or None)
            try:
                events = [] if usage_only else _events(message)
            except (RecursionError, ValueError, TypeError):  # nested deeper than JSON text can be written
                items.append(TraceIssue(path, number, "a message nested too deep"))
                continue
            for event in events:
                items.append(TraceEvent(session, event, timestamp, call_model or None, number))
            if message.get("role") == "assistant":
                usage = usage_of(extra)
                if usage.reported:
                    key = text_or_none(response.get("id"))
                    items.append(
                        TraceEvent(
                            session, UsageReport(usage=usage), timestamp, call_model or None, number, key
                        )
                    )
        if not usage_only:
            yield TraceEvent(session, SessionStarted(session_id=session, model=model), info.started, line=0)
        yield from items
        yield info
