"""tackroom.mock: a keyless scripted model server speaking four wire APIs.

Anthropic Messages, OpenAI Responses, OpenAI Chat Completions and Gemini, each
streaming and not, in the event shapes the real harness SDKs accept. A script of
turns (text, tool call by neutral name, HTTP error) is played statelessly: the
turn answered is the number of assistant turns already in the request.

::

    with MockServer(Script([Turn.call("shell", {"command": "echo hi > out.txt"})]),
                    tools=ToolVocabulary({"shell": ToolName("Bash")})) as mock:
        run_harness(base_url=mock.base_url)
        assert mock.saw("MY-RULES-MARKER")
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tackroom.mock.record import REDACTED, RecordedRequest
    from tackroom.mock.schema import PLACEHOLDER
    from tackroom.mock.script import (
        DEFAULT_CACHE_READ_TOKENS,
        DEFAULT_CACHE_WRITE_TOKENS,
        DEFAULT_INPUT_TOKENS,
        DEFAULT_OUTPUT_TOKENS,
        DEFAULT_REASONING_TOKENS,
        DEFAULT_TEXT,
        DEFAULT_USAGE,
        SIDE_TEXT,
        Script,
        Turn,
        Usage,
        done_text,
        load_script,
    )
    from tackroom.mock.server import MockServer
    from tackroom.mock.vocabulary import NEUTRAL_TOOLS, ToolName, ToolVocabulary, load_vocabulary
    from tackroom.mock.wires import MOCK_MODEL

_WHERE = {
    "REDACTED": "record",
    "RecordedRequest": "record",
    "PLACEHOLDER": "schema",
    **dict.fromkeys(
        (
            "DEFAULT_CACHE_READ_TOKENS",
            "DEFAULT_CACHE_WRITE_TOKENS",
            "DEFAULT_INPUT_TOKENS",
            "DEFAULT_OUTPUT_TOKENS",
            "DEFAULT_REASONING_TOKENS",
            "DEFAULT_TEXT",
            "DEFAULT_USAGE",
            "SIDE_TEXT",
            "Script",
            "Turn",
            "Usage",
            "done_text",
            "load_script",
        ),
        "script",
    ),
    "MockServer": "server",
    **dict.fromkeys(("NEUTRAL_TOOLS", "ToolName", "ToolVocabulary", "load_vocabulary"), "vocabulary"),
    "MOCK_MODEL": "wires",
}
"""Each public name's module, imported when the name is first used: a run that needs the server and
a script does not load the wires, the dispatch or the schema filler with them."""


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'tackroom.mock' has no attribute {name!r}")
    value = getattr(import_module(f"tackroom.mock.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})


__all__ = [
    "DEFAULT_CACHE_READ_TOKENS",
    "DEFAULT_CACHE_WRITE_TOKENS",
    "DEFAULT_INPUT_TOKENS",
    "DEFAULT_OUTPUT_TOKENS",
    "DEFAULT_REASONING_TOKENS",
    "DEFAULT_TEXT",
    "DEFAULT_USAGE",
    "MOCK_MODEL",
    "NEUTRAL_TOOLS",
    "PLACEHOLDER",
    "REDACTED",
    "SIDE_TEXT",
    "MockServer",
    "RecordedRequest",
    "Script",
    "ToolName",
    "ToolVocabulary",
    "Turn",
    "Usage",
    "done_text",
    "load_script",
    "load_vocabulary",
]
