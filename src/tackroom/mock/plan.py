"""Choose the answer to one request, statelessly, from the script and the request alone.

Turn index = number of assistant turns already in the request's conversation, so
retries and side calls get the same answer however often they are sent. Only turns
the mock could have written count: a tool call, or a text the script or the mock
says. Harnesses put made-up assistant turns in history (Qwen Code 0.15 opens every
conversation with "Got it. Thanks for the context!"), and those must not use up a turn.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from tackroom.mock.answer import ErrorAnswer, Reply, TextAnswer, ToolCall
from tackroom.mock.schema import example, fill_required
from tackroom.mock.script import DEFAULT_TEXT, MOCK_PREFIX, SIDE_TEXT, Script, Turn, done_text
from tackroom.mock.vocabulary import ToolVocabulary, named
from tackroom.mock.wires.base import OfferedTool, PastTurn, Wire


def plan(script: Script | None, vocabulary: ToolVocabulary, wire: Wire, body: Mapping[str, Any]) -> Reply:
    """The reply to one model request."""
    schema = wire.schema_request(body)
    if schema is not None:  # a structured side call (router): answer it, count no turn
        return Reply(TextAnswer(json.dumps(example(schema))))
    index = turn_index(script, wire.past_turns(body))
    offered = wire.offered_tools(body)
    if script is None:
        return Reply(text_answer(DEFAULT_TEXT, vocabulary, offered), turn=index)
    if index >= len(script.turns):
        return Reply(text_answer(done_text(script.tool_calls), vocabulary, offered), turn=index)
    return _play(script.turns[index], index, vocabulary, offered)


def turn_index(script: Script | None, past: Sequence[PastTurn]) -> int:
    """How many past assistant turns the mock wrote."""
    scripted = {t.text.strip() for t in script.turns if t.kind == "text"} if script else set()
    return sum(1 for t in past if t.called or t.text.startswith(MOCK_PREFIX) or t.text.strip() in scripted)


def _play(turn: Turn, index: int, vocabulary: ToolVocabulary, offered: Sequence[OfferedTool]) -> Reply:
    match turn.kind:
        case "text":
            return _scripted(text_answer(turn.text, vocabulary, offered), turn, index)
        case "error":
            return _scripted(ErrorAnswer(turn.status, turn.message), turn, index)
    if not offered:
        # Title generation and memory extraction offer no tools: answer them plainly
        # and without the turn's faults, which belong to the main call.
        return Reply(TextAnswer(SIDE_TEXT), turn=index)
    return _scripted(resolve(turn, vocabulary, offered), turn, index)


def _scripted(content: TextAnswer | ToolCall | ErrorAnswer, turn: Turn, index: int) -> Reply:
    return Reply(content, turn.usage, index, turn.delay_s, turn.disconnect_after)


def text_answer(
    text: str, vocabulary: ToolVocabulary, offered: Sequence[OfferedTool]
) -> TextAnswer | ToolCall:
    """A text answer: plain, or through the tool call the harness ends on (``text_call``) when offered.

    A request that offers no tools (a side call), or not that tool, gets the plain text.
    """
    wanted = vocabulary.text_as_call(text)
    tool = find_tool(wanted.name, offered) if wanted is not None else None
    if wanted is None or wanted.wrap is None or tool is None:
        return TextAnswer(text)
    return ToolCall(tool.child, fill_required(dict(wanted.wrap), tool.schema), tool.namespace, tool.custom)


def resolve(turn: Turn, vocabulary: ToolVocabulary, offered: Sequence[OfferedTool]) -> ToolCall | TextAnswer:
    """The call of a scripted tool among the offered ones, or a text saying it is not offered."""
    wanted = vocabulary.translate(turn.tool)
    tool = find_tool(wanted.name, offered)
    if tool is None:
        return TextAnswer(f"{MOCK_PREFIX}: tool {wanted.name} not offered")
    arguments = {wanted.args.get(k, k): v for k, v in turn.args.items()}
    if wanted.wrap is not None:  # the call rides in another tool's arguments (omp: write to xd://)
        text = json.dumps(turn.args)
        arguments = {k: v.replace("{arguments}", text) for k, v in wanted.wrap.items()}
    return ToolCall(tool.child, fill_required(arguments, tool.schema), tool.namespace, tool.custom)


def find_tool(name: str, offered: Sequence[OfferedTool]) -> OfferedTool | None:
    """The offered tool of that (flattened) name, else the only namespaced child of that bare name;
    a name with a ``*`` (an MCP tool whose name ends in what only its harness knows) is the one
    offered tool it matches."""
    if "*" in name:
        matching = [t for t in offered if named(t.name, name)]
        return matching[0] if len(matching) == 1 else None
    for tool in offered:
        if tool.name == name:
            return tool
    children = [t for t in offered if t.namespace is not None and t.child == name]
    return children[0] if len(children) == 1 else None
