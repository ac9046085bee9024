"""The kimi family: Kimi CLI's ``kimi --print --output-format stream-json``.

Verified on 1.51.0 against the mock. stdout carries one OpenAI-style message
per line and nothing else: ``{"role": "assistant", "content": ..., "tool_calls":
[{"id", "function": {"name", "arguments"}}]}`` and ``{"role": "tool",
"tool_call_id", "content"}``. Content is a string or a list of parts
(``{"type": "text", "text"}``). There is no terminal line, no session id and
no usage on stdout.

Usage is in the session's event log,
``$KIMI_SHARE_DIR/sessions/<md5 of the workdir>/<session id>/wire.jsonl``:
a ``StatusUpdate`` per model call whose ``token_usage`` has ``input_other``
(the prompt less the cache read), ``input_cache_read``, ``input_cache_creation``
and ``output``. Over Chat Completions the cache write is always 0 (that wire has
no such figure) and no reasoning figure is kept, so neither is reported.

A model failure (HTTP 400) exits 1 after printing ``Error code: 400 - {...}``
on stdout as plain text (Rich wraps it at the console width, hence the
adapter's wide COLUMNS; the parser also joins the wrapped lines).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tackroom.families.base import Family, StreamParser
from tackroom.families.kimi.stream import SESSION_ID, KimiStreamParser, kimi_share, session_usage
from tackroom.trace.events import (
    Event,
    SessionStarted,
)

if TYPE_CHECKING:
    from tackroom.trace.model import TranscriptReader


class Kimi(Family):
    """Kimi CLI, verified on 1.51.0 against the mock over Chat Completions (provider openai_legacy)."""

    name = "kimi"
    engines_module = "tackroom.families.kimi.engines"
    stream = "kimi --print --output-format stream-json"
    verified = True
    reports_usage = frozenset({"input", "output", "cache_read"})

    def parser(self) -> StreamParser:
        return KimiStreamParser()

    def transcripts(self) -> TranscriptReader:
        from tackroom.families.kimi.transcripts import KimiTranscripts

        return KimiTranscripts()

    def after_exit(self, home: Path | None, env: Mapping[str, str], events: Sequence[Event]) -> list[Event]:
        """The session and its per-call usage, from the run's only session log.

        stdout names no session, so the log is read only when it is the only one
        there: a share dir holding other sessions (the real home) is not guessed
        at, and usage stays not reported.
        """
        root = kimi_share(home, env)
        if root is None:
            return []
        logs: list[Path] = []
        try:
            for log in (root / "sessions").glob("*/*/wire.jsonl"):
                logs.append(log)
                if len(logs) > 1:  # stops at the second: a home of many sessions is not walked
                    return []
        except OSError:
            return []
        if len(logs) != 1 or logs[0].is_symlink():
            return []
        session = logs[0].parent.name
        started: list[Event] = [SessionStarted(session_id=session)] if SESSION_ID.match(session) else []
        return [*started, *session_usage(logs[0])]


FAMILY = Kimi()
