"""The gptme family: ``gptme -n --output-format json`` (one JSON object per conversation message).

Verified on 0.35.1 against the mock. Each line is ``{"type": "message", "role":
..., "content": ..., "timestamp": ...}``: the user's prompt, each assistant
message (its ``metadata`` holds ``usage`` for that model call: ``input_tokens``
is the prompt less the cache read, ``cache_read_tokens``, ``output_tokens``,
``reasoning_tokens``), and ``system`` messages (a tool's result carries
``call_id`` and ``metadata.tool``). A tool call is written into the
assistant's content as ``@<tool>(<call id>): <JSON arguments>``.

There is no terminal line: the stream simply ends. A model failure (HTTP 400)
writes nothing to stdout after the prompt; it shows on stderr as
``Error code: 400 - {...}`` and exit 1, which :meth:`Gptme.stderr_error` reads.
Headless, an answer without a tool call is asked again twice ("No tool call
detected ...") before gptme gives up with exit 0; the ``complete`` tool ends a
session at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tackroom.families.base import Family, StreamParser
from tackroom.families.gptme.stream import API_ERROR, GptmeStreamParser
from tackroom.trace.events import (
    ErrorEvent,
)

if TYPE_CHECKING:
    from tackroom.trace.model import TranscriptReader


class Gptme(Family):
    """gptme, verified on 0.35.1 against the mock over Chat Completions."""

    name = "gptme"
    engines_module = "tackroom.families.gptme.engines"
    stream = "gptme -n --output-format json"
    verified = True
    reports_usage = frozenset({"input", "output", "cache_read", "reasoning"})

    def parser(self) -> StreamParser:
        return GptmeStreamParser()

    def transcripts(self) -> TranscriptReader:
        from tackroom.families.gptme.transcripts import GptmeTranscripts

        return GptmeTranscripts()

    def stderr_error(self, stderr_tail: str) -> ErrorEvent | None:
        """``Error code: 400 - {...}``, logged through Rich: wrapped, the rest on indented lines."""
        lines = stderr_tail.splitlines()
        for at, line in enumerate(lines):
            found = API_ERROR.search(line)
            if found is None:
                continue
            status, body = found.groups()
            rest = []
            for more in lines[at + 1 :]:
                if not more.startswith(" ") or not more.strip():
                    break
                rest.append(more.strip())
            text = (body.rstrip() + "".join(rest))[:500]
            return ErrorEvent(message=f"the model API answered {status}: {text}", fatal=True)
        return None


FAMILY = Gptme()
