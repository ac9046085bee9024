"""The pi family: ``pi -p --mode json`` JSONL, also spoken by OMP (oh-my-pi, a pi fork).

Verified on pi 0.73.1 and omp 18.2.3. Line types: ``session`` (session id),
``agent_start``/``turn_start``, ``message_start``/``message_update`` (deltas,
ignored: ``message_end`` carries the whole message), ``message_end`` (a
``user``, ``assistant`` or ``toolResult`` message; an assistant one has its
text and ``toolCall`` blocks, ``usage`` and ``stopReason``),
``tool_execution_*``, ``turn_end``, ``agent_end``, ``auto_retry_start`` and
``auto_retry_end``. OMP adds ``advisor_cost_changed`` and
``agent_end.isTerminal`` (``false`` when the agent goes on).

A failed model call ends with an assistant message whose ``stopReason`` is
``error`` (or ``aborted``) and ``errorMessage``, then ``agent_end``, and pi
still exits 0. A retryable failure is followed by ``auto_retry_start`` and a
new attempt; a 400 is not retried. So a failed ``agent_end`` is only final once
the stream ends or ``auto_retry_end`` says ``success: false``.

Usage: ``input`` is already the uncached prompt (pi and omp subtract
``cached_tokens`` from ``prompt_tokens``), so it passes through. Every usage
object starts as all zeros and stays so when the provider never answered:
such a placeholder is not reported. Both write ``cacheWrite: 0`` when the
provider sends no cache-write figure (OpenAI's own wires have none; pi reads
OpenRouter's ``cache_write_tokens``), so only a positive one is an
observation. omp also reports ``reasoningTokens`` (only when above 0) and pi
0.73.1 does not; one family serves both and ``reports_usage`` is per family,
so reasoning is not reported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tackroom.families.base import Family, StreamParser

if TYPE_CHECKING:
    from tackroom.trace.model import TranscriptReader


class Pi(Family):
    name = "pi"
    engines_module = "tackroom.families.pi.engines"
    stream = "pi --mode json"
    terminal = 'a terminal "agent_end" (or a failure nothing retried)'
    verified = True
    reports_usage = frozenset({"input", "output", "cache_read"})

    def parser(self) -> StreamParser:
        from tackroom.families.pi.stream import PiStreamParser

        return PiStreamParser()

    def transcripts(self) -> TranscriptReader:
        from tackroom.families.pi.transcripts import PiTranscripts

        return PiTranscripts()


FAMILY = Pi()
