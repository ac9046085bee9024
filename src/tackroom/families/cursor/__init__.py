"""The cursor family: UNVERIFIED. Cursor's CLI cannot be installed on this machine.

Cursor documents ``-p --output-format stream-json`` with Claude-style line
types (``system/init``, ``assistant``, ``result``), so the Claude stream
parser reads it; no stream has been recorded from a real binary yet.
"""

from __future__ import annotations

from tackroom.families.base import Family, StreamParser


class Cursor(Family):
    name = "cursor"
    engines_module = "tackroom.families.cursor.engines"
    stream = "cursor-agent stream-json (claude-style, unverified here)"
    terminal = 'its "result" line'

    def parser(self) -> StreamParser:
        from tackroom.families.claude_code.stream import ClaudeStreamParser

        return ClaudeStreamParser()


FAMILY = Cursor()
