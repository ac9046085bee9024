"""The crush family: UNVERIFIED. The harness cannot be installed on this machine.

Its adapter is data from docs, and its output is read as plain text: the
final answer is stdout, no tool calls or usage are inferred. A parser for its
structured output is written once a real stream has been recorded.
"""

from __future__ import annotations

from tackroom.families.base import Family, PlainTextParser, StreamParser


class Crush(Family):
    name = "crush"
    stream = "crush run (text, unverified here)"

    def parser(self) -> StreamParser:
        return PlainTextParser()


FAMILY = Crush()
