"""The opencode family: OpenCode's ``run --format json`` (one JSON event per line).

Verified on 1.18.33 (Anthropic Messages wire). Every line carries ``sessionID``;
the types are ``step_start`` (one model call begins), ``text`` (a finished text
part), ``tool_use`` (one line per tool, written once the tool has finished:
``part.state.{status,input,output|error}``), ``step_finish`` (that call's
``part.tokens``) and ``error`` (the run failed: exit 1). The stream has no
model name and no final "result" line, so the final text is the text of the
last step that had any.

Token figures are opencode's own, already in tackroom's convention: on the
Anthropic wire ``tokens.input`` is the provider's uncached ``input_tokens``
(321 for a mock reply of 321/21 cached), and on OpenAI-compatible wires
opencode subtracts the cached tokens itself (1234 prompt, 7 cached -> 1227).
opencode writes ``reasoning: 0`` where the provider reported no reasoning
figure at all (Anthropic Messages has none), so a zero there is not a count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tackroom.families.base import Family, StreamParser

if TYPE_CHECKING:
    from tackroom.trace.model import TranscriptReader


class Opencode(Family):
    """OpenCode, verified on 1.18.33 against the mock over the Anthropic Messages wire."""

    name = "opencode"
    engines_module = "tackroom.families.opencode.engines"
    stream = "opencode run --format json"
    verified = True
    reports_usage = frozenset({"input", "output", "cache_read", "cache_write"})
    sidecars = ("-wal",)  # opencode.db's write-ahead log

    def parser(self) -> StreamParser:
        from tackroom.families.opencode.stream import OpencodeStreamParser

        return OpencodeStreamParser()

    def transcripts(self) -> TranscriptReader:
        from tackroom.families.opencode.transcripts import OpencodeTranscripts

        return OpencodeTranscripts()


FAMILY = Opencode()
