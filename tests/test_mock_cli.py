"""``tackroom mock serve`` as a real process on port 0, and its usage errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tackroom.cli.mock import app
from tackroom.errors import MockScriptError

pytestmark = pytest.mark.timeout(30)

SCRIPTS = Path(__file__).parent / "mock_scripts"
# Import the command group directly, so this test needs only tackroom.cli.mock.
ENTRY = "from tackroom.cli.mock import app; app()"


@pytest.fixture
def serve_process() -> Iterator[Any]:
    """Start ``serve`` with the given options; yields a starter returning (process, base URL)."""
    processes: list[subprocess.Popen[str]] = []

    def start(*options: str) -> tuple[subprocess.Popen[str], str]:
        process = subprocess.Popen(
            [sys.executable, "-c", ENTRY, "serve", "--port", "0", *options],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        processes.append(process)
        assert process.stdout is not None
        url = process.stdout.readline().strip()  # the first line is the base URL
        assert url.startswith("http://127.0.0.1:"), process.stderr.read() if process.stderr else url
        return process, url

    yield start
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait(5)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def chat(url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(f"{url}/v1/chat/completions", json.dumps(body).encode())
    with urllib.request.urlopen(request, timeout=10) as response:
        answer: dict[str, Any] = json.loads(response.read())
    return answer


def test_serve_text_answers_then_stops_cleanly_on_sigterm(serve_process: Any, tmp_path: Path) -> None:
    log = tmp_path / "mock.jsonl"
    process, url = serve_process("--text", "CLI-TEXT", "--log", str(log))
    answer = chat(url, {"messages": [{"role": "user", "content": "hi"}]})
    assert answer["choices"][0]["message"]["content"] == "CLI-TEXT"
    process.send_signal(signal.SIGTERM)
    assert process.wait(5) == 0
    [record] = [json.loads(line) for line in log.read_text().splitlines()]
    assert (record["wire"], record["answer"]) == ("openai-chat", {"kind": "text", "text": "CLI-TEXT"})


def test_serve_script_with_tool_vocabulary(serve_process: Any) -> None:
    _, url = serve_process(
        "--script", str(SCRIPTS / "shell_then_text.toml"), "--tools", str(SCRIPTS / "vocabulary.toml")
    )
    tools = [{"type": "function", "function": {"name": "exec_command", "parameters": {"type": "object"}}}]
    answer = chat(url, {"tools": tools, "messages": [{"role": "user", "content": "go"}]})
    function = answer["choices"][0]["message"]["tool_calls"][0]["function"]
    assert (function["name"], json.loads(function["arguments"])) == (
        "exec_command",
        {"cmd": "echo hi > out.txt"},
    )
    assert answer["usage"]["prompt_tokens"] == 10


def test_script_and_text_together_is_a_usage_error() -> None:
    result = CliRunner().invoke(app, ["serve", "--text", "x", "--script", str(SCRIPTS / "all_kinds.json")])
    assert result.exit_code == 2
    assert "give --script or --text, not both" in result.output


def test_bad_script_raises_mock_script_error_for_the_cli_edge() -> None:
    result = CliRunner().invoke(app, ["serve", "--script", str(SCRIPTS / "unknown_key.toml")])
    assert isinstance(result.exception, MockScriptError)
    assert "turns[1]: unknown key 'argz'" in str(result.exception)


def test_serve_auth_required_answers_a_bearer_and_refuses_none(serve_process: Any) -> None:
    _, url = serve_process("--text", "CLI-AUTH", "--auth", "required")
    body = json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode()
    bare = urllib.request.Request(f"{url}/v1/chat/completions", body)
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(bare, timeout=10)
    with refused.value:
        assert refused.value.code == 401
        assert json.loads(refused.value.read())["error"]["type"] == "authentication_error"
    signed = urllib.request.Request(f"{url}/v1/chat/completions", body, {"Authorization": "Bearer sk-cli"})
    with urllib.request.urlopen(signed, timeout=10) as answer:
        assert json.loads(answer.read())["choices"][0]["message"]["content"] == "CLI-AUTH"


def test_serve_auth_takes_any_or_required() -> None:
    result = CliRunner().invoke(app, ["serve", "--auth", "sometimes"])
    assert result.exit_code == 2 and "must be 'any' or 'required'" in result.output
