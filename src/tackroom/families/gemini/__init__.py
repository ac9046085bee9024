"""The gemini family: Gemini CLI's ``--output-format stream-json`` (JSONL on stdout).

Verified on Gemini CLI 0.61.0. Line types: ``init`` (session id, model),
``message`` (``role`` user or assistant; assistant text arrives as
``delta: true`` fragments), ``tool_use`` / ``tool_result`` (paired by
``tool_id``), ``error`` (``severity`` warning or error; documented, not yet
seen in a recorded run) and ``result`` (``status``, ``error``, run-wide
``stats``).

A model error ends the stream with ``result{status: "error"}`` and exit 144.
With ``--output-format json`` the same failure is a JSON object on **stderr**
instead, which :meth:`Gemini.stderr_error` reads.

``stats`` are the run's totals. ``input_tokens`` counts cached tokens (the
Gemini API's ``promptTokenCount`` does), so tackroom's ``input`` is
``input_tokens - cached``. Thought tokens are not in the stream's stats (a
mock answer with ``thoughtsTokenCount`` 3 showed only in ``total_tokens``), so
reasoning is not reported, and nor are cache writes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tackroom.families.base import Family, StreamParser

if TYPE_CHECKING:
    from tackroom.trace.events import ErrorEvent
    from tackroom.trace.model import TranscriptReader


class Gemini(Family):
    """Gemini CLI, verified on 0.61.0 (``--output-format stream-json``)."""

    name = "gemini"
    engines_module = "tackroom.families.gemini.engines"
    stream = "gemini stream-json"
    terminal = 'its "result" line'
    verified = True
    reports_usage = frozenset({"input", "output", "cache_read"})

    def parser(self) -> StreamParser:
        from tackroom.families.gemini.stream import GeminiStreamParser

        return GeminiStreamParser()

    def stderr_error(self, stderr_tail: str) -> ErrorEvent | None:
        from tackroom.families.gemini.stream import json_mode_error

        return json_mode_error(stderr_tail)

    def transcripts(self) -> TranscriptReader:
        from tackroom.families.gemini.transcripts import GeminiTranscripts

        return GeminiTranscripts()


FAMILY = Gemini()
