"""A run is a value before it is a process: RunSpec is checked when made, round-trips through JSON,
hashes the same in every process, and is what the runner runs."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runkit import RECORDED, fake_adapter
from tackroom.errors import CellError, MockScriptError, OptionError, RunError, RunSpecError
from tackroom.mock import Script, Turn
from tackroom.mock.script import Usage, parse_script, script_data
from tackroom.run.runner import run
from tackroom.run.spec import RunSpec


def _script() -> Script:
    return Script(
        [
            Turn.call("read_file", {"path": "README.md"}, delay_s=0.25),
            Turn.reply("done", usage=Usage(input=7, output=3, cache_read=0, cache_write=1, reasoning=2)),
            Turn.error(529, "overloaded", disconnect_after=2),
        ]
    )


def _spec(tmp_path: Path, **fields: Any) -> RunSpec:
    values: dict[str, Any] = {
        "prompt": "fix the bug",
        "adapter": "claude-code",
        "options": {"max_turns": "4", "allowed_tools": "Read,Edit"},
        "workdir": tmp_path,
        "mock": _script(),
        "timeout_s": 30,
    }
    return RunSpec(**{**values, **fields})


def test_a_spec_round_trips_through_json_and_keeps_its_hash(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    text = json.dumps(spec.to_json())
    back = RunSpec.from_json(json.loads(text))
    assert back == spec and back.hash == spec.hash and hash(back) == hash(spec)
    assert back.to_json() == spec.to_json()
    # Values are held as checked and coerced: the option kinds, the resolved workdir, a float timeout.
    assert spec.options == {"allowed_tools": ("Read", "Edit"), "max_turns": 4}
    assert spec.workdir == tmp_path.resolve() and spec.timeout_s == 30.0
    assert spec.to_json()["options"] == {"allowed_tools": ["Read", "Edit"], "max_turns": 4}
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.prompt = "other"  # type: ignore[misc]


def test_the_hash_is_the_same_in_another_process(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    code = (
        "import json, sys; from tackroom.run.spec import RunSpec; "
        "print(RunSpec.from_json(json.load(sys.stdin)).hash)"
    )
    other = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(spec.to_json()),
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": "/usr/bin:/bin"},
    )
    assert other.stdout.strip() == spec.hash and len(spec.hash) == 64


def test_every_field_changes_the_hash(tmp_path: Path) -> None:
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    base = _spec(tmp_path)
    changed = {
        "prompt": "fix another bug",
        "adapter": "codex",
        "version": "2.1.0",
        "transport": "acp",
        "options": {"max_turns": 5},
        "workdir": other_dir,
        "mock": Script.text("other"),
        "timeout_s": 31,
        "home": "real",
        "profile": "none",
        "env": {"GREETING": "hello"},
    }
    hashes = {base.hash}
    for name, value in changed.items():
        hashes.add(dataclasses.replace(base, **{name: value}).hash)
    no_mock = dataclasses.replace(base, mock=None)
    hashes |= {no_mock.hash, dataclasses.replace(no_mock, base_url="http://127.0.0.1:9/v1").hash}
    hashes.add(dataclasses.replace(no_mock, gateway="http://127.0.0.1:9").hash)
    hashes.add(dataclasses.replace(no_mock, capture=True).hash)
    hashes.add(dataclasses.replace(no_mock, credentials=True).hash)
    hashes.add(dataclasses.replace(no_mock, capture=True, auth="oauth").hash)
    assert len(hashes) == len(changed) + 7


def test_a_mock_script_round_trips_turn_for_turn() -> None:
    script = _script()
    assert parse_script(json.loads(json.dumps(script_data(script)))) == script
    assert script_data(Script.text("hi")) == {"turns": [{"text": "hi"}]}


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"spec": 1, "prompt": "p", "jail": "bwrap"}, "unknown field(s) in a run spec: jail"),
        ({"spec": 2, "prompt": "p"}, "run spec format 2"),
        ({"prompt": "p"}, "run spec format None"),
        ({"spec": 1}, "needs its prompt"),
        (["prompt"], "is a JSON object"),
        ({"spec": 1, "prompt": 7}, "prompt must be a string"),
        ({"spec": 1, "prompt": "p", "workdir": 3}, "workdir must be a path"),
        ({"spec": 1, "prompt": "p", "timeout_s": "soon"}, "timeout must be a positive"),
        ({"spec": 1, "prompt": "p", "home": "elsewhere"}, "home must be"),
        ({"spec": 1, "prompt": "p", "profile": "mine"}, "profile must be"),
        ({"spec": 1, "prompt": "p", "capture": "yes"}, "capture must be true or false"),
        ({"spec": 1, "prompt": "p", "options": []}, "options must be a table"),
    ],
)
def test_bad_json_is_a_named_spec_error(data: Any, words: str) -> None:
    with pytest.raises(RunSpecError, match=words.replace("(", r"\(").replace(")", r"\)")):
        RunSpec.from_json(data)


def test_a_bad_mock_in_json_names_the_turn() -> None:
    with pytest.raises(MockScriptError, match=r"run spec mock: turns\[0\]: unknown key 'shout'"):
        RunSpec.from_json({"spec": 1, "prompt": "p", "mock": {"turns": [{"shout": "x"}]}})


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"timeout_s": 0}, "timeout must be a positive"),
        ({"timeout_s": math.inf}, "timeout must be a positive"),
        ({"timeout_s": math.nan}, "timeout must be a positive"),
        ({"timeout_s": True}, "timeout must be a positive"),
        ({"base_url": "http://127.0.0.1:9"}, "choose one model endpoint"),
        ({"credentials": True}, "gets no real credential"),
        ({"mock": None, "api_key_env": "KEY"}, "names the key for --base-url or --gateway"),
        ({"mock": None, "base_url": "ftp://x"}, "is not an http"),
        ({"mock": None, "gateway": "http://127.0.0.1:9", "capture": True}, "choose one"),
        ({"gateway": "http://127.0.0.1:9"}, "forwards to its own upstream"),
        ({"workdir": Path("/nonexistent/tackroom")}, "is not a directory"),
        ({"mock": "turns.toml"}, "mock must be a mock Script"),
        ({"env": {"A=B": "1"}}, "is not a variable name"),
        ({"env": {"A": 1}}, "A must be a string without NUL"),
        ({"env": ["A"]}, "env must be a table"),
        ({"mock": None, "auth": "oauth"}, "--auth says how the harness signs in"),
        ({"auth": "oauth"}, "a run against the mock gets no real credential"),
        ({"mock": None, "capture": True, "auth": "token"}, "auth must be 'api-key' or 'oauth'"),
        (
            {"mock": None, "base_url": "http://127.0.0.1:9", "auth": "oauth", "api_key_env": "K"},
            "--auth oauth sends none",
        ),
    ],
)
def test_bad_values_fail_on_construction(tmp_path: Path, fields: dict[str, Any], words: str) -> None:
    with pytest.raises(RunSpecError, match=words) as caught:
        _spec(tmp_path, **fields)
    assert isinstance(caught.value, CellError) and isinstance(caught.value, RunError)


def test_an_option_is_checked_on_construction(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="unknown option 'colour'"):
        _spec(tmp_path, options={"colour": "blue"})
    with pytest.raises(OptionError, match="takes a whole number"):
        _spec(tmp_path, options={"max_turns": "many"})


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)
FIELDS = st.sampled_from(
    ["prompt", "adapter", "options", "workdir", "mock", "timeout_s", "home", "profile", "capture", "gateway"]
)


@given(st.dictionaries(FIELDS, JSON, max_size=6))
def test_any_json_is_a_spec_or_a_cell_error(data: dict[str, Any]) -> None:
    """A spec from outside (a matrix, another host) is hostile until parsed: never a traceback."""
    try:
        spec = RunSpec.from_json({"spec": 1, **data})
    except CellError:
        return
    assert RunSpec.from_json(spec.to_json()) == spec


def test_the_runner_runs_a_spec_as_it_runs_the_keywords(config_dir: Path, tmp_path: Path) -> None:
    fake_adapter(config_dir, "--replay", str(RECORDED))
    spec = RunSpec(prompt="hello", adapter="fake", workdir=tmp_path, mock=Script.text("hi"), timeout_s=60)
    by_value = run(spec, runs_dir=tmp_path / "runs")
    by_keywords = run(
        "fake", "hello", workdir=tmp_path, mock_text="hi", timeout_s=60, runs_dir=tmp_path / "runs"
    )
    for result in (by_value, by_keywords):
        assert result.ok and result.final_text == "TACKROOM-TEXT-claude-code"
    assert by_value.argv == by_keywords.argv and by_value.adapter_hash == by_keywords.adapter_hash
    assert by_value.run_dir != by_keywords.run_dir


def test_a_spec_takes_no_run_values_beside_it(config_dir: Path, tmp_path: Path) -> None:
    fake_adapter(config_dir, "--replay", str(RECORDED))
    spec = RunSpec(prompt="hello", adapter="fake", workdir=tmp_path)
    with pytest.raises(RunSpecError, match="mock_text, timeout_s cannot be given beside it"):
        run(spec, mock_text="hi", timeout_s=5, runs_dir=tmp_path / "runs")
    with pytest.raises(RunSpecError, match="profile is 'given': pass the Profile object"):
        run(dataclasses.replace(spec, profile="given"), runs_dir=tmp_path / "runs")
    assert not (tmp_path / "runs").exists()
