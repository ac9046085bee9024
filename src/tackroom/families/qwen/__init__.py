"""The qwen family: Qwen Code's ``-o stream-json``, Claude Code's line types with two differences.

Verified on 0.15.10 and 0.24.4 (OpenAI Chat Completions wire):

- A model failure is reported in one of two shapes, both with a synthetic
  ``assistant`` message (usage 0/0) whose text is ``"[API Error: ...]"``
  (``[API Error: 400 <message>]``, ``[API Error: Connection error. ...]``).
  0.15.10 exits **0** with ``result.subtype: "success"`` and ``is_error:
  false``, the same text as the ``result``: only the text says it failed.
  0.24.4 exits 1 with ``subtype: "error_during_execution"``, ``is_error:
  true``, no ``result`` and the text in ``error.message``. Either way the
  result's usage is qwen's 0 for the call that returned none.
- Usage follows the OpenAI convention: ``input_tokens`` is the whole prompt,
  cached tokens included (a mock reply of 321 prompt / 21 cached reads
  ``input_tokens: 321, cache_read_input_tokens: 21``), so tackroom's uncached
  input is the difference. No cache-write or reasoning figure is reported.
  ``result.usage`` counts every request of the run, qwen's own background
  ones too (the auto-memory extractor, which the built-in adapter turns off).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tackroom.families.base import Family, StreamParser

if TYPE_CHECKING:
    from tackroom.trace.model import TranscriptReader


class Qwen(Family):
    """Qwen Code, verified on 0.15.10 and 0.24.4 against the mock over the OpenAI Chat Completions wire."""

    name = "qwen"
    engines_module = "tackroom.families.qwen.engines"
    stream = "qwen stream-json"
    terminal = 'its "result" line'
    verified = True
    reports_usage = frozenset({"input", "output", "cache_read"})

    def parser(self) -> StreamParser:
        from tackroom.families.qwen.stream import QwenStreamParser

        return QwenStreamParser()

    def transcripts(self) -> TranscriptReader:
        from tackroom.families.qwen.transcripts import QwenTranscripts

        return QwenTranscripts()


FAMILY = Qwen()
