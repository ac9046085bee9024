"""Mock scripts, vocabularies and schema examples: parsing and validation, no sockets."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tackroom.mock as mock_api
from tackroom.errors import MockScriptError
from tackroom.mock import (
    DEFAULT_USAGE,
    Script,
    ToolName,
    ToolVocabulary,
    Turn,
    Usage,
    done_text,
    load_script,
    load_vocabulary,
)
from tackroom.mock.answer import TextAnswer, ToolCall
from tackroom.mock.plan import plan
from tackroom.mock.schema import example, fill_required
from tackroom.mock.wires import CHAT

SCRIPTS = Path(__file__).parent / "mock_scripts"


def test_public_api_is_exactly_this() -> None:
    assert set(mock_api.__all__) == {
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
    }


def test_the_public_names_load_on_first_use_and_are_the_same_on_every_access() -> None:
    """tackroom.mock binds each name when first asked for (a run does not load the wires for its
    server): each is its module's object, the same on every access, listed by dir()."""
    import subprocess
    import sys

    code = """
import importlib, sys, tackroom.mock as mock
assert "tackroom.mock.wires" not in sys.modules and "tackroom.mock.dispatch" not in sys.modules
first = {name: getattr(mock, name) for name in mock.__all__}
for name, where in mock._WHERE.items():
    home = importlib.import_module(f"tackroom.mock.{where}")
    assert getattr(mock, name) is first[name] is getattr(home, name)
assert set(mock.__all__) <= set(dir(mock))
try:
    mock.NoSuchName
except AttributeError as exc:
    assert "NoSuchName" in str(exc)
else:
    raise AssertionError("an unknown name was found")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_default_usage_is_distinctive() -> None:
    assert Usage(input=1234, output=56, cache_read=78, cache_write=9, reasoning=0) == DEFAULT_USAGE
    assert mock_api.DEFAULT_TEXT == "MOCK-REPLY-OK"


def test_script_text_and_tool_call_count() -> None:
    assert Script.text("hi").turns == (Turn("text", text="hi"),)
    script = Script([Turn.call("shell", {"command": "ls"}), Turn.error(500), Turn.call("glob")])
    assert script.tool_calls == 2
    assert done_text(2) == "MOCK-DONE after 2 tool call(s)"


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Turn.call("bash"), "unknown neutral tool 'bash'"),
        (lambda: Turn.call("mcp:server-only"), "is not mcp:<server>/<tool>"),
        (lambda: Turn.call("raw:"), "raw: needs a name"),
        (lambda: Turn.error(200), "HTTP status must be 400-599"),
        (lambda: Turn.reply("x", delay_s=-1), "delay_s: must be 0-3600 seconds"),
        (lambda: Turn.call("shell", disconnect_after=-1), "disconnect_after: must be >= 0"),
        (lambda: Turn("pause"), "kind: must be text, tool or error"),  # type: ignore[arg-type]
        (lambda: Usage(input=-1), "usage.input: must be a non-negative integer"),
    ],
)
def test_bad_turns_are_refused(build: object, message: str) -> None:
    with pytest.raises(MockScriptError, match=message):
        build()  # type: ignore[operator]


def test_load_toml_script() -> None:
    script = load_script(SCRIPTS / "shell_then_text.toml")
    assert script.turns == (
        Turn.call("shell", {"command": "echo hi > out.txt"}, usage=Usage(10, 2, 3, 4, 5)),
        Turn.error(529, "overloaded", delay_s=0.25),
        Turn.reply("all done", disconnect_after=2),
    )


def test_load_json_script() -> None:
    script = load_script(str(SCRIPTS / "all_kinds.json"))
    assert [t.kind for t in script.turns] == ["tool", "tool", "error", "text"]
    assert script.turns[0].tool == "mcp:feas/echo"
    assert script.turns[2] == Turn.error(400, "mock error")


def test_unknown_keys_name_file_and_turn_all_at_once() -> None:
    with pytest.raises(MockScriptError) as caught:
        load_script(SCRIPTS / "unknown_key.toml")
    lines = str(caught.value).splitlines()
    path = SCRIPTS / "unknown_key.toml"
    assert lines == [f"{path}: turns[1]: unknown key 'argz'", f"{path}: turns[2].usage: unknown key 'inptu'"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            '[[turns]]\ntext = "a"\ntool = "shell"\n',
            "turns[0]: needs exactly one of text, tool, error (got ['text', 'tool'])",
        ),
        ("[[turns]]\nmessage = 'x'\n", "turns[0]: needs exactly one of text, tool, error (got none)"),
        ('[[turns]]\ntext = "a"\nargs = {}\n', "turns[0]: key 'args' does not belong to a text turn"),
        ("[[turns]]\ntext = 3\n", "turns[0]: text: must be a string, got 3"),
        ("[[turns]]\nerror = true\n", "turns[0]: error: must be an integer, got True"),
        (
            '[[turns]]\ntool = "bash"\n',
            "turns[0]: tool: unknown neutral tool 'bash' (known: edit_file, glob, read_file, search, shell,"
            " skill, subagent, todo, web_fetch, web_search, write_file)",
        ),
        ('[[turns]]\ntext = "a"\ndelay_s = "1"\n', "turns[0]: delay_s: must be a number, got '1'"),
        ("turns = []\nversion = 2\n", "unknown key 'version'"),
        ('turns = "no"\n', "turns: must be a list of tables"),
    ],
)
def test_script_problems(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "s.toml"
    path.write_text(text)
    with pytest.raises(MockScriptError) as caught:
        load_script(path)
    assert str(caught.value) == f"{path}: {problem}"


def test_bad_syntax_and_missing_file_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(MockScriptError, match=r"bad_syntax\.toml: "):
        load_script(SCRIPTS / "bad_syntax.toml")
    with pytest.raises(MockScriptError, match=r"missing\.json: "):
        load_script(tmp_path / "missing.json")


def test_load_vocabulary() -> None:
    vocabulary = load_vocabulary(SCRIPTS / "vocabulary.toml")
    assert vocabulary == ToolVocabulary(
        {"glob": ToolName("Glob"), "shell": ToolName("exec_command", {"command": "cmd"})},
        mcp="mcp_{server}_{tool}",
    )
    assert vocabulary.translate("mcp:feas/echo") == ToolName("mcp_feas_echo")
    assert vocabulary.translate("raw:Bash") == ToolName("Bash")
    assert vocabulary.translate("todo") == ToolName("todo")  # untranslated: used as is
    assert vocabulary.text_as_call("hi") is None  # text answers are plain text


def test_load_vocabulary_with_a_text_call(tmp_path: Path) -> None:
    path = tmp_path / "v.toml"
    path.write_text(
        '[tools]\nshell = "bash"\n[text_call]\ntool = "bash"\nargs = { command = "echo {text}" }\n'
    )
    vocabulary = load_vocabulary(path)
    assert vocabulary.text_as_call("it's") == ToolName("bash", wrap={"command": "echo it's"})


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('[tools]\nbash = "Bash"\n', "tools.bash: not a neutral tool name"),
        ('mcp = "{server}"\n', "must use {tool}, and no field but {server}"),
        ('mcp = "{server}_{tool}_{x}"\n', "must use {tool}, and no field but {server}"),
        ('colour = "red"\n', "unknown key 'colour'"),
        ("[tools.shell]\nargs = {}\n", "tools.shell.name: required string"),
        ('[tools.shell]\nname = "B"\nalias = "x"\n', "tools.shell: unknown key 'alias'"),
        ('[text_call]\nargs = { command = "{text}" }\n', "text_call.tool: required string"),
        ('[text_call]\ntool = "bash"\nargs = { command = "echo" }\n', "never use {text}"),
        ('[text_call]\ntool = "bash"\nargs = { command = 1 }\n', "text_call.args: values must be strings"),
        ('text_call = "bash"\n', "text_call: must be a table"),
    ],
)
def test_vocabulary_problems(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "v.toml"
    path.write_text(text)
    with pytest.raises(MockScriptError, match=str(path)) as caught:
        load_vocabulary(path)
    assert problem in str(caught.value)


def test_schema_example_for_gemini_router_and_openapi_types() -> None:
    router = {
        "type": "object",
        "properties": {"complexity_reasoning": {"type": "string"}, "complexity_score": {"type": "integer"}},
    }
    assert example(router) == {"complexity_reasoning": "mock", "complexity_score": 1}
    openapi = {
        "type": "OBJECT",
        "properties": {
            "next_speaker": {"type": "STRING", "enum": ["user", "model"]},
            "ok": {"type": "BOOLEAN"},
            "items": {"type": "ARRAY", "items": {"type": "NUMBER", "minimum": 3}, "minItems": 2},
            "maybe": {"type": ["null", "string"]},
        },
    }
    assert example(openapi) == {"next_speaker": "user", "ok": False, "items": [3, 3], "maybe": "mock"}


def test_fill_required_only_fills_missing_required() -> None:
    schema = {
        "type": "object",
        "properties": {
            "command": {"type": "string"},
            "timeout": {"type": "integer"},
            "i": {"type": "string"},
        },
        "required": ["command", "i", "timeout"],
    }
    assert fill_required({"command": "ls"}, schema) == {"command": "ls", "i": "mock", "timeout": 1}
    assert fill_required({"x": 1}, {}) == {"x": 1}


@given(
    texts=st.lists(st.text(alphabet="abc xyz", min_size=1, max_size=8), max_size=5),
    calls=st.integers(min_value=0, max_value=7),
)
def test_turn_n_answers_a_history_of_n_mock_turns(texts: list[str], calls: int) -> None:
    """Any history of n tool-call rounds gets turn n, or the done text past the end, every time."""
    script = Script([Turn.call("shell", {"command": "x"}), *(Turn.reply(t) for t in texts)])
    tools = [{"type": "function", "function": {"name": "shell", "parameters": {"type": "object"}}}]
    messages: list[dict[str, object]] = [{"role": "user", "content": "go"}]
    for n in range(calls):
        messages += [{"role": "assistant", "tool_calls": [{"id": str(n)}]}, {"role": "tool", "content": ""}]
    body = {"tools": tools, "messages": messages}
    reply = plan(script, ToolVocabulary(), CHAT, body)
    assert reply == plan(script, ToolVocabulary(), CHAT, body)
    assert reply.turn == calls
    if calls == 0:
        assert reply.content == ToolCall("shell", {"command": "x"})
    elif calls <= len(texts):
        assert reply.content == TextAnswer(texts[calls - 1])
    else:
        assert reply.content == TextAnswer(done_text(1))
