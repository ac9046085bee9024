"""The codex family: Codex CLI's ``codex exec --json`` (JSONL on stdout).

Verified on codex-cli 0.171.0. Line types: ``thread.started`` (thread id),
``turn.started``, ``item.started`` / ``item.completed`` (``agent_message``,
``command_execution``, ``file_change``, ``mcp_tool_call``, ``collab_tool_call``,
``web_search``, ``reasoning``, and ``error`` items that are warnings),
``turn.completed`` (usage), ``turn.failed`` (the error that failed the turn)
and top-level ``error``. Command, file-change, message, warning and error
lines were recorded from the real binary; the MCP, subagent and web-search
item shapes follow codex's published ``exec_events`` types (on 0.171.0 a
configured MCP server's tools did not reach the mock's tool list, so no MCP
call could be recorded).

A top-level ``error`` is not fatal on its own: codex prints its
``Reconnecting...`` retries that way, and a model error that ends the turn is
followed by ``turn.failed``, which is what decides. There is no final result
line: the final text is the last ``agent_message``.

``turn.completed.usage`` is the thread's running total, not one model call: a
turn with a tool call reports both calls summed, and under ``exec resume`` it
includes the earlier runs of the thread too (both seen on 0.171.0). Its
``input_tokens`` counts cached tokens (OpenAI's convention), so tackroom's
``input`` is ``input_tokens - cached_input_tokens``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tackroom.families.base import Family, StreamParser

if TYPE_CHECKING:
    from tackroom.trace.model import TranscriptReader


class Codex(Family):
    """Codex CLI, verified on codex-cli 0.171.0 (``exec --json``)."""

    name = "codex"
    engines_module = "tackroom.families.codex.engines"
    stream = "codex exec --json"
    terminal = 'its "turn.completed" or "turn.failed" line'
    verified = True
    reports_usage = frozenset({"input", "output", "cache_read", "cache_write", "reasoning"})

    def parser(self) -> StreamParser:
        from tackroom.families.codex.stream import CodexStreamParser

        return CodexStreamParser()

    def transcripts(self) -> TranscriptReader:
        from tackroom.families.codex.transcripts import CodexTranscripts

        return CodexTranscripts()


FAMILY = Codex()
