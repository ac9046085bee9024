"""The amp family: UNVERIFIED. Amp installs here but cannot run against the mock.

The CLI talks only to the Amp service (its own JSON-RPC at
``/api/internal?<method>``; threads live there and the service routes model
calls), so there is no model endpoint to point at tackroom's mock. Its output
is read as plain text (``amp -x`` prints the last assistant message): no tool
calls or usage are inferred. A parser for ``--stream-json`` is written once a
real stream has been recorded.
"""

from __future__ import annotations

from tackroom.families.base import Family, PlainTextParser, StreamParser


class Amp(Family):
    name = "amp"
    stream = "amp -x (text, unverified here)"

    def parser(self) -> StreamParser:
        return PlainTextParser()


FAMILY = Amp()
