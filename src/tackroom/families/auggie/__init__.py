"""The auggie family: UNVERIFIED. Auggie installs here but cannot run against the mock.

The CLI speaks only Augment's own tenant protocol (``/get-models``,
``/chat-stream``, ...): the model runs behind the Augment tenant, and there is
no OpenAI or Anthropic base URL to point at tackroom's mock. Its output is read
as plain text (``auggie --print``): no tool calls or usage are inferred. A
parser for ``--output-format json`` is written once a real output has been
recorded.
"""

from __future__ import annotations

from tackroom.families.base import Family, PlainTextParser, StreamParser


class Auggie(Family):
    name = "auggie"
    stream = "auggie --print (text, unverified here)"

    def parser(self) -> StreamParser:
        return PlainTextParser()


FAMILY = Auggie()
