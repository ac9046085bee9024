"""Each wire API over a real socket, streaming and not, asserting the exact shapes clients parse."""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pytest

from tackroom.mock import SIDE_TEXT, MockServer, Script, ToolName, ToolVocabulary, Turn, Usage

pytestmark = pytest.mark.timeout(30)

SHELL = Script([Turn.call("shell", {"command": "echo hi > out.txt"})])
USAGE = Usage(input=11, output=22, cache_read=33, cache_write=44, reasoning=55)


@dataclass
class Answer:
    status: int
    content_type: str
    raw: bytes

    def json(self) -> Any:
        return json.loads(self.raw)

    def events(self) -> list[tuple[str | None, Any]]:
        """SSE events as (event name, parsed data); ``[DONE]`` stays a string."""
        out: list[tuple[str | None, Any]] = []
        for block in self.raw.decode().replace("\r\n", "\n").split("\n\n"):
            if not block.strip():
                continue
            fields = dict(line.split(": ", 1) for line in block.split("\n"))
            data = fields["data"]
            out.append((fields.get("event"), data if data == "[DONE]" else json.loads(data)))
        return out


def call(base_url: str, path: str, body: Any = None, method: str = "POST", **headers: str) -> Answer:
    conn = http.client.HTTPConnection(urlsplit(base_url).netloc, timeout=10)
    try:
        payload = None if body is None else json.dumps(body).encode()
        conn.request(method, path, payload, {"Content-Type": "application/json", **headers})
        response = conn.getresponse()
        return Answer(response.status, response.getheader("Content-Type", ""), response.read())
    finally:
        conn.close()


Serve = Callable[..., MockServer]


# --- Anthropic Messages ---------------------------------------------------------------------------

ANTHROPIC_TOOLS = [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}}]


def test_anthropic_non_streaming_text(serve: Serve) -> None:
    mock = serve()
    answer = call(
        mock.base_url, "/v1/messages", {"model": "claude-x", "messages": [{"role": "user", "content": "hi"}]}
    )
    assert answer.status == 200
    body = answer.json()
    assert body.pop("id").startswith("msg_mock_")
    assert body == {
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [{"type": "text", "text": "MOCK-REPLY-OK"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 1234,
            "output_tokens": 56,
            "cache_read_input_tokens": 78,
            "cache_creation_input_tokens": 9,
        },
    }


def test_anthropic_streaming_text(serve: Serve) -> None:
    mock = serve(Script([Turn.reply("hello there", usage=USAGE)]))
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    answer = call(mock.base_url, "/v1/messages?beta=true", body)
    assert answer.content_type == "text/event-stream"
    events = answer.events()
    assert [name for name, _ in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",  # Claude Code needs it, or the text comes back empty
        "message_delta",
        "message_stop",
    ]
    assert all(data["type"] == name for name, data in events)
    start = events[0][1]["message"]
    assert start["usage"] == {
        "input_tokens": 11,
        "output_tokens": 1,
        "cache_read_input_tokens": 33,
        "cache_creation_input_tokens": 44,
    }
    assert events[1][1] == {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": ""},
    }
    assert "".join(data["delta"]["text"] for _, data in events[2:4]) == "hello there"
    assert events[4][1] == {"type": "content_block_stop", "index": 0}
    assert events[5][1] == {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 22},
    }


def test_anthropic_streaming_tool_call(serve: Serve) -> None:
    mock = serve(SHELL, tools=ToolVocabulary({"shell": ToolName("Bash")}))
    body = {
        "model": "m",
        "stream": True,
        "tools": ANTHROPIC_TOOLS,
        "messages": [{"role": "user", "content": "go"}],
    }
    events = call(mock.base_url, "/v1/messages", body).events()
    block = events[1][1]["content_block"]
    assert block["type"] == "tool_use"
    assert block["id"].startswith("toolu_mock_")
    assert (block["name"], block["input"]) == ("Bash", {})
    assert events[2][1]["delta"] == {
        "type": "input_json_delta",
        "partial_json": '{"command": "echo hi > out.txt"}',
    }
    assert events[3][0] == "content_block_stop"
    assert events[4][1]["delta"]["stop_reason"] == "tool_use"


def test_anthropic_non_streaming_tool_call(serve: Serve) -> None:
    mock = serve(SHELL, tools=ToolVocabulary({"shell": ToolName("Bash")}))
    body = {"model": "m", "tools": ANTHROPIC_TOOLS, "messages": [{"role": "user", "content": "go"}]}
    content = call(mock.base_url, "/v1/messages", body).json()
    assert content["stop_reason"] == "tool_use"
    [block] = content["content"]
    assert (block["type"], block["name"], block["input"]) == (
        "tool_use",
        "Bash",
        {"command": "echo hi > out.txt"},
    )


def test_anthropic_error_shape(serve: Serve) -> None:
    mock = serve(Script([Turn.error(429, "slow down")]))
    answer = call(mock.base_url, "/v1/messages", {"stream": True, "messages": []})
    assert answer.status == 429
    assert answer.content_type == "application/json"
    assert answer.json() == {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}


def test_anthropic_count_tokens(serve: Serve) -> None:
    mock = serve()
    answer = call(mock.base_url, "/v1/messages/count_tokens?beta=true", {"messages": []})
    assert (answer.status, answer.json()) == (200, {"input_tokens": 1234})


# --- OpenAI Chat Completions ----------------------------------------------------------------------

CHAT_TOOLS = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]
CHAT_USAGE = {
    "prompt_tokens": 11,
    "completion_tokens": 22,
    "total_tokens": 33,
    "prompt_tokens_details": {"cached_tokens": 33},
    "completion_tokens_details": {"reasoning_tokens": 55},
}


def test_chat_non_streaming_text(serve: Serve) -> None:
    mock = serve(Script([Turn.reply("hello there", usage=USAGE)]))
    body = call(mock.base_url, "/v1/chat/completions", {"model": "gpt-x", "messages": []}).json()
    assert body.pop("id").startswith("chatcmpl-mock-")
    assert body == {
        "object": "chat.completion",
        "created": 1_764_000_000,
        "model": "gpt-x",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "hello there"},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": CHAT_USAGE,
    }


def test_chat_streaming_text_with_usage_chunk(serve: Serve) -> None:
    mock = serve(Script([Turn.reply("hello there", usage=USAGE)]))
    body = {"model": "m", "stream": True, "stream_options": {"include_usage": True}, "messages": []}
    events = [data for _, data in call(mock.base_url, "/v1/chat/completions", body).events()]
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": "hello"}
    assert chunks[1]["choices"][0]["delta"] == {"content": " there"}
    assert chunks[2]["choices"][0] == {"index": 0, "delta": {}, "finish_reason": "stop", "logprobs": None}
    assert (chunks[3]["choices"], chunks[3]["usage"]) == ([], CHAT_USAGE)
    assert len(chunks) == 4


def test_chat_streaming_without_include_usage_has_no_usage_chunk(serve: Serve) -> None:
    mock = serve()
    events = call(mock.base_url, "/v1/chat/completions", {"stream": True, "messages": []}).events()
    assert [data for _, data in events][-1] == "[DONE]"
    assert not any("usage" in data for _, data in events[:-1])


def test_chat_tool_call_streaming_and_not(serve: Serve) -> None:
    mock = serve(SHELL, tools=ToolVocabulary({"shell": ToolName("bash")}))
    body: dict[str, Any] = {
        "model": "m",
        "tools": CHAT_TOOLS,
        "messages": [{"role": "user", "content": "go"}],
    }
    message = call(mock.base_url, "/v1/chat/completions", body).json()["choices"][0]
    assert message["finish_reason"] == "tool_calls"
    [tool_call] = message["message"]["tool_calls"]
    assert tool_call["type"] == "function"
    assert tool_call["function"] == {"name": "bash", "arguments": '{"command": "echo hi > out.txt"}'}
    events = call(mock.base_url, "/v1/chat/completions", {**body, "stream": True}).events()
    delta = events[0][1]["choices"][0]["delta"]
    [streamed] = delta["tool_calls"]
    assert streamed["id"].startswith("call_mock_")
    assert {k: v for k, v in streamed.items() if k != "id"} == {
        "index": 0,
        "type": "function",
        "function": tool_call["function"],
    }
    assert events[1][1]["choices"][0]["finish_reason"] == "tool_calls"


def test_chat_error_shape(serve: Serve) -> None:
    mock = serve(Script([Turn.error(401, "bad key")]))
    answer = call(mock.base_url, "/v1/chat/completions", {"messages": []})
    assert answer.status == 401
    error = {
        "message": "bad key",
        "type": "authentication_error",
        "param": None,
        "code": "authentication_error",
    }
    assert answer.json() == {"error": error}


# --- OpenAI Responses -----------------------------------------------------------------------------

RESPONSES_USAGE = {
    "input_tokens": 11,
    "input_tokens_details": {"cached_tokens": 33, "cache_write_tokens": 44},
    "output_tokens": 22,
    "output_tokens_details": {"reasoning_tokens": 55},
    "total_tokens": 33,
}


def test_responses_streaming_text(serve: Serve) -> None:
    mock = serve(Script([Turn.reply("hello there", usage=USAGE)]))
    events = call(mock.base_url, "/v1/responses", {"model": "m", "stream": True, "input": "hi"}).events()
    assert [name for name, _ in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [data["sequence_number"] for _, data in events] == list(range(10))
    assert all(data["type"] == name for name, data in events)
    item = events[8][1]["item"]
    assert item["id"].startswith("msg_mock_")
    assert {k: v for k, v in item.items() if k != "id"} == {
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "hello there", "annotations": []}],
    }
    completed = events[-1][1]["response"]
    assert (completed["status"], completed["output"], completed["usage"]) == (
        "completed",
        [item],
        RESPONSES_USAGE,
    )


def test_responses_path_without_v1_and_non_streaming(serve: Serve) -> None:
    mock = serve()
    body = call(
        mock.base_url, "/responses", {"model": "m", "input": [{"role": "user", "content": "hi"}]}
    ).json()
    assert body["object"] == "response"
    assert body["status"] == "completed"
    assert body["output"][0]["content"][0]["text"] == "MOCK-REPLY-OK"
    assert body["usage"]["input_tokens"] == 1234


NAMESPACED = [
    {"type": "function", "name": "exec_command", "parameters": {"type": "object"}},
    {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}},
    {
        "type": "namespace",
        "name": "mcp__feas",
        "tools": [
            {"type": "function", "name": "echo", "parameters": {"type": "object", "required": ["text"]}}
        ],
    },
    {"type": "web_search"},
]


def test_responses_namespace_call_names_namespace_and_bare_child(serve: Serve) -> None:
    mock = serve(Script([Turn.call("mcp:feas/echo", {"text": "ping"})]))
    body = {"model": "m", "stream": True, "tools": NAMESPACED, "input": "go"}
    events = call(mock.base_url, "/v1/responses", body).events()
    assert [name for name, _ in events][3:5] == [
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
    ]
    added, done = events[2][1]["item"], events[5][1]["item"]
    assert (added["status"], added["arguments"]) == ("in_progress", "")
    assert done["call_id"].startswith("call_mock_")
    assert {k: done[k] for k in ("type", "namespace", "name", "arguments", "status")} == {
        "type": "function_call",
        "namespace": "mcp__feas",
        "name": "echo",
        "arguments": '{"text": "ping"}',
        "status": "completed",
    }
    assert mock.offered_tools() == {"exec_command", "apply_patch", "mcp__feas__echo"}


def test_responses_custom_tool_takes_an_input_string(serve: Serve) -> None:
    mock = serve(Script([Turn.call("raw:apply_patch", {"input": "*** Begin Patch\n*** End Patch\n"})]))
    body = {"model": "m", "stream": True, "tools": NAMESPACED, "input": "go"}
    events = call(mock.base_url, "/v1/responses", body).events()
    assert [name for name, _ in events][3:5] == [
        "response.custom_tool_call_input.delta",
        "response.custom_tool_call_input.done",
    ]
    item = events[5][1]["item"]
    assert {k: item[k] for k in ("type", "name", "input")} == {
        "type": "custom_tool_call",
        "name": "apply_patch",
        "input": "*** Begin Patch\n*** End Patch\n",
    }
    assert "arguments" not in item


def test_responses_error_shape(serve: Serve) -> None:
    mock = serve(Script([Turn.error(500, "boom")]))
    answer = call(mock.base_url, "/v1/responses", {"stream": True, "input": "x"})
    assert answer.status == 500
    error = {"message": "boom", "type": "server_error", "param": None, "code": "server_error"}
    assert answer.json() == {"error": error}


# --- Gemini ---------------------------------------------------------------------------------------

GEMINI_STREAM = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
GEMINI_TOOLS = [
    {"functionDeclarations": [{"name": "run_shell_command", "parametersJsonSchema": {"type": "object"}}]}
]


def test_gemini_streaming_text(serve: Serve) -> None:
    mock = serve(Script([Turn.reply("hello there", usage=USAGE)]))
    answer = call(mock.base_url, GEMINI_STREAM, {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
    assert answer.raw.count(b"\r\n\r\n") == 2  # Google's own event separator
    chunks = [data for _, data in answer.events()]
    assert [c["candidates"][0]["content"] for c in chunks] == [
        {"role": "model", "parts": [{"text": "hello"}]},
        {"role": "model", "parts": [{"text": " there"}]},
    ]
    assert "finishReason" not in chunks[0]["candidates"][0]
    assert "usageMetadata" not in chunks[0]
    assert chunks[1]["candidates"][0]["finishReason"] == "STOP"
    assert chunks[1]["modelVersion"] == "gemini-2.5-flash"
    assert chunks[1]["usageMetadata"] == {
        "promptTokenCount": 11,
        "candidatesTokenCount": 22,
        "cachedContentTokenCount": 33,
        "thoughtsTokenCount": 55,
        "totalTokenCount": 88,
    }


def test_gemini_tool_call_non_streaming(serve: Serve) -> None:
    mock = serve(SHELL, tools=ToolVocabulary({"shell": ToolName("run_shell_command")}))
    body = {"tools": GEMINI_TOOLS, "contents": [{"role": "user", "parts": [{"text": "go"}]}]}
    answer = call(mock.base_url, "/v1beta/models/gemini-x:generateContent", body).json()
    assert answer["candidates"][0]["content"] == {
        "role": "model",
        "parts": [{"functionCall": {"name": "run_shell_command", "args": {"command": "echo hi > out.txt"}}}],
    }
    assert answer["candidates"][0]["finishReason"] == "STOP"


def test_gemini_router_call_gets_schema_json_and_counts_no_turn(serve: Serve) -> None:
    mock = serve(SHELL, tools=ToolVocabulary({"shell": ToolName("run_shell_command")}))
    schema = {
        "type": "object",
        "properties": {"complexity_reasoning": {"type": "string"}, "complexity_score": {"type": "integer"}},
    }
    router = {"contents": [], "generationConfig": {"responseJsonSchema": schema}}
    answer = call(mock.base_url, "/v1beta/models/gemini-3.5-flash-lite:generateContent", router).json()
    [part] = answer["candidates"][0]["content"]["parts"]
    assert json.loads(part["text"]) == {"complexity_reasoning": "mock", "complexity_score": 1}
    main = {"tools": GEMINI_TOOLS, "contents": [{"role": "user", "parts": [{"text": "go"}]}]}
    chunks = call(mock.base_url, GEMINI_STREAM, main).events()
    assert "functionCall" in chunks[-1][1]["candidates"][0]["content"]["parts"][0]
    assert [r.turn for r in mock.requests] == [None, 0]


def test_gemini_openapi_response_schema(serve: Serve) -> None:
    mock = serve()
    schema = {"type": "OBJECT", "properties": {"next_speaker": {"type": "STRING", "enum": ["user", "model"]}}}
    body = {"contents": [], "generationConfig": {"responseSchema": schema}}
    answer = call(mock.base_url, "/v1beta/models/m:generateContent", body).json()
    assert json.loads(answer["candidates"][0]["content"]["parts"][0]["text"]) == {"next_speaker": "user"}


def test_gemini_error_shape(serve: Serve) -> None:
    mock = serve(Script([Turn.error(400, "bad request")]))
    answer = call(mock.base_url, GEMINI_STREAM, {"contents": []})
    assert answer.status == 400
    assert answer.json() == {"error": {"code": 400, "message": "bad request", "status": "INVALID_ARGUMENT"}}


# --- Tool translation, shared by every wire -------------------------------------------------------


def test_arguments_are_renamed_and_required_ones_filled(serve: Serve) -> None:
    mock = serve(
        Script([Turn.call("shell", {"command": "ls"})]),
        tools=ToolVocabulary({"shell": ToolName("exec_command", {"command": "cmd"})}),
    )
    schema = {
        "type": "object",
        "properties": {"cmd": {"type": "string"}, "i": {"type": "string"}, "yield_ms": {"type": "integer"}},
        "required": ["cmd", "i", "yield_ms"],
    }
    tools = [{"type": "function", "function": {"name": "exec_command", "parameters": schema}}]
    answer = call(mock.base_url, "/v1/chat/completions", {"tools": tools, "messages": []}).json()
    arguments = answer["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(arguments) == {"cmd": "ls", "i": "mock", "yield_ms": 1}


def test_tool_not_offered_is_said_in_text(serve: Serve) -> None:
    mock = serve(SHELL, tools=ToolVocabulary({"shell": ToolName("Bash")}))
    tools = [{"name": "Read", "input_schema": {}}]
    answer = call(mock.base_url, "/v1/messages", {"tools": tools, "messages": []}).json()
    assert answer["content"] == [{"type": "text", "text": "MOCK: tool Bash not offered"}]


def test_side_request_without_tools_gets_plain_text(serve: Serve) -> None:
    mock = serve(SHELL, tools=ToolVocabulary({"shell": ToolName("Bash")}))
    answer = call(mock.base_url, "/v1/messages", {"messages": [{"role": "user", "content": "title?"}]}).json()
    assert answer["content"] == [{"type": "text", "text": SIDE_TEXT}]
    assert mock.requests[0].turn == 0


BASH_TOOL = {
    "type": "function",
    "function": {"name": "bash", "parameters": {"type": "object", "properties": {"command": {}}}},
}
SUBMIT = ToolVocabulary(
    {"shell": ToolName("bash")},
    text_call=ToolName("bash", wrap={"command": "echo SUBMIT && cat <<'EOF'\n{text}\nEOF"}),
)


def _chat(mock: MockServer, messages: list[dict[str, Any]], tools: list[Any]) -> dict[str, Any]:
    body = {"model": "m", "tools": tools, "messages": messages}
    message: dict[str, Any] = call(mock.base_url, "/v1/chat/completions", body).json()["choices"][0][
        "message"
    ]
    return message


def test_a_text_answer_rides_in_the_tool_call_the_harness_ends_on(serve: Serve) -> None:
    mock = serve(Script([Turn.reply("the answer")]), tools=SUBMIT)
    message = _chat(mock, [{"role": "user", "content": "go"}], [BASH_TOOL])
    [tool_call] = message["tool_calls"]
    assert tool_call["function"]["name"] == "bash"
    command = json.loads(tool_call["function"]["arguments"])["command"]
    assert command == "echo SUBMIT && cat <<'EOF'\nthe answer\nEOF"
    # The same way for the mock's own texts: past the script, and with no script at all.
    past = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [tool_call]},
    ]
    past.append({"role": "tool", "tool_call_id": tool_call["id"], "content": "SUBMIT"})
    [after] = _chat(mock, past, [BASH_TOOL])["tool_calls"]
    assert "MOCK-DONE after 0 tool call(s)" in json.loads(after["function"]["arguments"])["command"]
    unscripted = serve(None, tools=SUBMIT)
    [default] = _chat(unscripted, [{"role": "user", "content": "go"}], [BASH_TOOL])["tool_calls"]
    assert "MOCK-REPLY-OK" in json.loads(default["function"]["arguments"])["command"]


def test_a_text_answer_stays_text_without_its_tool(serve: Serve) -> None:
    mock = serve(Script([Turn.reply("the answer")]), tools=SUBMIT)
    other = {"type": "function", "function": {"name": "other", "parameters": {"type": "object"}}}
    assert _chat(mock, [{"role": "user", "content": "go"}], [other])["content"] == "the answer"
    assert _chat(mock, [{"role": "user", "content": "title?"}], [])["content"] == "the answer"
    plain = serve(Script([Turn.reply("the answer")]), tools=ToolVocabulary({"shell": ToolName("bash")}))
    assert _chat(plain, [{"role": "user", "content": "go"}], [BASH_TOOL])["content"] == "the answer"


def test_bare_child_name_finds_the_only_namespaced_tool(serve: Serve) -> None:
    mock = serve(Script([Turn.call("subagent", {"message": "hi"})]))
    tools = [
        {"type": "namespace", "name": "multi_agent_v1", "tools": [{"type": "function", "name": "subagent"}]}
    ]
    item = call(mock.base_url, "/v1/responses", {"tools": tools, "input": "go"}).json()["output"][0]
    assert (item["namespace"], item["name"]) == ("multi_agent_v1", "subagent")


def test_an_mcp_call_can_ride_in_another_tools_arguments(serve: Serve) -> None:
    wrap = {"path": "xd://mcp__{server}_{tool}", "content": "{arguments}"}
    vocabulary = ToolVocabulary(mcp_call=ToolName("write", wrap=wrap))
    assert vocabulary.translate("mcp:srv/echo") == ToolName(
        "write", wrap={"path": "xd://mcp__srv_echo", "content": "{arguments}"}
    )
    mock = serve(Script([Turn.call("mcp:srv/echo", {"text": "hi"})]), tools=vocabulary)
    write_tool = {
        "type": "function",
        "function": {
            "name": "write",
            "parameters": {"type": "object", "properties": {"path": {}, "content": {}}, "required": ["path"]},
        },
    }
    body = {"model": "m", "tools": [write_tool], "messages": [{"role": "user", "content": "go"}]}
    [tool_call] = call(mock.base_url, "/v1/chat/completions", body).json()["choices"][0]["message"][
        "tool_calls"
    ]
    arguments = json.loads(tool_call["function"]["arguments"])
    assert tool_call["function"]["name"] == "write"
    assert arguments == {"path": "xd://mcp__srv_echo", "content": '{"text": "hi"}'}
