"""The kiro family: UNVERIFIED. The harness cannot be installed on this machine.

Its adapter is data from docs, and its output is read as plain text: the
final answer is stdout, no tool calls or usage are inferred. A parser for its
structured output is written once a real stream has been recorded.
"""

from __future__ import annotations

from tackroom.families.base import Family, PlainTextParser, StreamParser


class Kiro(Family):
    name = "kiro"
    engines_module = "tackroom.families.kiro.engines"
    stream = "kiro-cli chat --no-interactive (text, unverified here)"

    def parser(self) -> StreamParser:
        return PlainTextParser()


FAMILY = Kiro()
