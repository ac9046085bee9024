"""The copilot family: GitHub Copilot CLI's ``--output-format json`` (JSONL), and its session log.

Verified on 1.0.102 (BYOK, OpenAI Chat Completions wire). Each line is
``{"type", "data", "id", "timestamp", ...}``; the ones that matter:
``assistant.message`` (``content`` and ``toolRequests[]``),
``tool.execution_complete`` (``success``, ``result.content``),
``session.error`` (the model call failed; exit 1) and a last ``result`` line
(``sessionId``, ``exitCode``). ``session.start`` is written to the session log
but not to stdout, so the session id arrives with ``result``.

**stdout carries no token counts.** Copilot writes one ``session.usage_record``
per model call to ``$COPILOT_HOME/session-state/<session>/events.jsonl``,
which :meth:`Copilot.after_exit` reads. Its ``inputTokens`` is the whole
prompt, cached tokens included (mock 321 prompt / 21 cached -> 321), so
tackroom's uncached input is the difference; ``reasoningTokens`` is the
provider's figure; ``cacheWriteTokens`` is 0 on a wire that has no such figure
(Chat Completions), so only a positive count is one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tackroom.errors import UnsafePathError
from tackroom.families.base import (
    Family,
    StreamParser,
)
from tackroom.paths import check_name, inside

if TYPE_CHECKING:
    from tackroom.trace.events import Event
    from tackroom.trace.model import TranscriptReader


class Copilot(Family):
    """GitHub Copilot CLI, verified on 1.0.102 against the mock over the Chat Completions wire (BYOK)."""

    name = "copilot"
    engines_module = "tackroom.families.copilot.engines"
    stream = "copilot --output-format json"
    terminal = 'its "result" line'
    verified = True
    reports_usage = frozenset({"input", "output", "cache_read", "reasoning"})

    def parser(self) -> StreamParser:
        from tackroom.families.copilot.stream import CopilotStreamParser

        return CopilotStreamParser()

    def transcripts(self) -> TranscriptReader:
        from tackroom.families.copilot.transcripts import CopilotTranscripts

        return CopilotTranscripts()

    def after_exit(self, home: Path | None, env: Mapping[str, str], events: Sequence[Event]) -> list[Event]:
        """Per-call usage from this run's session log (``session-state/<session id>/events.jsonl``).

        Without a session id from the stream, the log is read only when it is the
        only one there: a state dir holding other sessions (the real home, copied
        credentials) is not guessed at, and usage stays not reported.
        """
        from tackroom.families.copilot.stream import copilot_home, session_usage
        from tackroom.trace.events import ErrorEvent, SessionStarted

        root = copilot_home(home, env)
        if root is None:
            return []
        session = next((e.session_id for e in events if isinstance(e, SessionStarted) and e.session_id), None)
        if session is not None:
            try:
                # The id comes from the harness's stdout: it names a directory only if it stays one.
                log = inside(
                    root / "session-state", check_name(session, "copilot session id"), "events.jsonl"
                )
            except UnsafePathError as exc:
                return [ErrorEvent(message=f"copilot session log not read: {exc}", fatal=False)]
            return session_usage(log) if log.is_file() else []
        logs = sorted((root / "session-state").glob("*/events.jsonl"))
        return session_usage(logs[0]) if len(logs) == 1 else []


FAMILY = Copilot()
