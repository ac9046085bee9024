"""The claude-code family: Claude Code's ``--output-format stream-json`` (with ``--verbose``).

Line types (verified on 2.1.197): ``system/init`` (session id, model, tools),
``assistant`` (one API message: text and tool_use blocks, per-call usage),
``user`` (tool_result blocks), ``result`` (final text, total usage,
``is_error``). A model error exits 1 with ``is_error: true`` while ``subtype``
still says ``success``, so ``is_error`` is what decides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tackroom.families.base import (
    Family,
    StreamParser,
)

if TYPE_CHECKING:
    from tackroom.trace.model import TranscriptReader


class ClaudeCode(Family):
    name = "claude-code"
    engines_module = "tackroom.families.claude_code.engines"
    stream = "claude stream-json"
    terminal = 'its "result" line'
    verified = True
    reports_usage = frozenset({"input", "output", "cache_read", "cache_write"})

    def parser(self) -> StreamParser:
        from tackroom.families.claude_code.stream import ClaudeStreamParser

        return ClaudeStreamParser()

    def transcripts(self) -> TranscriptReader:
        from tackroom.families.claude_code.transcripts import ClaudeTranscripts

        return ClaudeTranscripts()


FAMILY = ClaudeCode()
