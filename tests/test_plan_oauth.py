"""How a harness signs in to an endpoint: a key, or a subscription sign-in (``--auth api-key|oauth``).

Chosen by itself, a key wins, then a sign-in: the token variable the adapter's
``[model_endpoint.oauth]`` names, or with ``--credentials`` the harness's own sign-in file. A
sign-in sets no key, and its token is a secret wherever the plan is shown. What is data here: the
variable, the sign-in file, the route; a harness without the table is refused by name, with the fix.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tackroom.adapters.plan import Endpoint, Plan, plan_run
from tackroom.adapters.resolve import load_adapters, resolve_builtins
from tackroom.errors import ConfigError, OptionError

OAT = "sk-ant-oat01-PLANOAUTHSECRET-000000000001"
KEY = "sk-ant-api03-PLANKEYSECRET-000000000000002"
ACCESS = "eyJhbGciOiJub25lIn0.eyJQTEFOQ0hBVEdQVCI6MX0.c2ln"
GATEWAY = "http://127.0.0.1:9/t/run-1"


def plan(adapter: str, environ: dict[str, str], tmp_path: Path, **endpoint: Any) -> Plan:
    return plan_run(
        resolve_builtins()[adapter],
        "hi",
        workdir=tmp_path,
        home=tmp_path / "run" / "home",
        endpoint=Endpoint(GATEWAY, **endpoint),
        environ={"PATH": "/usr/bin", "HOME": str(tmp_path / "real"), **environ},
    )


def chatgpt_login(home: Path, tokens: Any = "signed in") -> Path:
    """A ChatGPT sign-in as codex writes it (``tokens``), or an API-key login (``tokens`` null)."""
    path = home / ".codex" / "auth.json"
    path.parent.mkdir(parents=True)
    body = {"OPENAI_API_KEY": None, "tokens": None, "last_refresh": "2026-12-01T00:00:00Z"}
    if tokens is not None:
        body["tokens"] = {"access_token": ACCESS, "refresh_token": "rt", "id_token": ACCESS}
    else:
        body["OPENAI_API_KEY"] = "sk-proj-PLANLOGINKEY000000000000000"
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def shown(plan: Plan) -> str:
    return json.dumps(plan.to_json()) + " ".join(plan.shown_argv())


def test_claude_code_with_only_an_oauth_token_signs_in_by_itself(tmp_path: Path) -> None:
    done = plan("claude-code", {"CLAUDE_CODE_OAUTH_TOKEN": OAT}, tmp_path)
    env = done.environ()
    assert done.auth == "oauth" and done.to_json()["auth"] == "oauth"
    assert env["CLAUDE_CODE_OAUTH_TOKEN"] == OAT and env["ANTHROPIC_BASE_URL"] == GATEWAY
    assert "ANTHROPIC_API_KEY" not in env and "ANTHROPIC_AUTH_TOKEN" not in env
    assert done.to_json()["env"]["CLAUDE_CODE_OAUTH_TOKEN"] == "<secret>"
    assert OAT in done.secrets and OAT not in shown(done)


def test_a_key_wins_when_both_are_set_and_oauth_asked_for_sets_none(tmp_path: Path) -> None:
    both = {"CLAUDE_CODE_OAUTH_TOKEN": OAT, "ANTHROPIC_API_KEY": KEY}
    keyed = plan("claude-code", both, tmp_path).environ()
    assert keyed["ANTHROPIC_API_KEY"] == KEY and "CLAUDE_CODE_OAUTH_TOKEN" not in keyed
    signed = plan("claude-code", both, tmp_path, auth="oauth").environ()
    assert signed["CLAUDE_CODE_OAUTH_TOKEN"] == OAT and "ANTHROPIC_API_KEY" not in signed


def test_api_key_asked_for_with_only_a_token_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match=r"no API key for .*ANTHROPIC_API_KEY is not set"):
        plan("claude-code", {"CLAUDE_CODE_OAUTH_TOKEN": OAT}, tmp_path, auth="api-key")


def test_no_key_and_no_sign_in_says_both_ways(tmp_path: Path) -> None:
    with pytest.raises(OptionError) as caught:
        plan("claude-code", {}, tmp_path)
    assert "ANTHROPIC_API_KEY is not set" in str(caught.value)
    assert "or sign in: set CLAUDE_CODE_OAUTH_TOKEN" in str(caught.value)
    with pytest.raises(OptionError, match=r"no sign-in for harness 'claude-code'.*CLAUDE_CODE_OAUTH_TOKEN"):
        plan("claude-code", {}, tmp_path, auth="oauth")


def test_codex_signed_in_with_chatgpt_takes_the_chatgpt_backend_route(tmp_path: Path) -> None:
    chatgpt_login(tmp_path / "real")
    done = plan("codex", {}, tmp_path, credentials=True)
    assert done.auth == "oauth"
    argv = list(done.argv)
    assert f"model_providers.tackroom.base_url={GATEWAY}/backend-api/codex" in argv
    assert "model_providers.tackroom.requires_openai_auth=true" in argv
    assert f"chatgpt_base_url={GATEWAY}/backend-api/" in argv
    assert "TACKROOM_CODEX_API_KEY" not in done.environ() and "OPENAI_API_KEY" not in done.environ()
    assert not any("env_key" in element for element in argv)
    assert ACCESS not in shown(done)


def test_a_chatgpt_sign_in_is_used_only_when_copied_in(tmp_path: Path) -> None:
    login = chatgpt_login(tmp_path / "real")
    with pytest.raises(OptionError, match=re.escape(f"add --credentials to use the sign-in in {login}")):
        plan("codex", {}, tmp_path)


def test_an_api_key_login_is_no_chatgpt_sign_in(tmp_path: Path) -> None:
    chatgpt_login(tmp_path / "real", tokens=None)
    with pytest.raises(OptionError, match=r"no sign-in for harness 'codex'.*sign in to the harness"):
        plan("codex", {}, tmp_path, credentials=True, auth="oauth")


def test_a_harness_without_a_sign_in_table_is_refused_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(OptionError) as caught:
        plan("aider", {"OPENAI_API_KEY": "sk-x"}, tmp_path, auth="oauth")
    message = str(caught.value)
    assert "harness 'aider'" in message and "[adapter.aider.model_endpoint.oauth]" in message
    assert "--auth api-key" in message


def test_the_mock_gets_no_sign_in(tmp_path: Path) -> None:
    adapter = resolve_builtins()["claude-code"]
    with pytest.raises(OptionError, match="a run against the mock gets no real credential"):
        plan_run(
            adapter,
            "hi",
            workdir=tmp_path,
            endpoint=Endpoint("http://127.0.0.1:9", mock=True, auth="oauth"),
            environ={"CLAUDE_CODE_OAUTH_TOKEN": OAT},
        )


@pytest.mark.parametrize(
    ("table", "words"),
    [
        (
            'env = { ANTHROPIC_AUTH_TOKEN = "{{api_key}}" }\ntoken_env = ["T"]',
            "unknown placeholder {{api_key}}",
        ),
        ('token_env = ["T"]\nheader = "bearer"', "unknown key"),
        ("token_env = []\nsign_in = []", "a sign-in needs token_env or sign_in"),
        ('token_env = ["T"]\nsends = "cookie"', "bad value"),
    ],
)
def test_a_bad_sign_in_table_fails_the_load(config_dir: Path, table: str, words: str) -> None:
    (config_dir / "adapters.d" / "10-mine.toml").write_text(
        '[adapter.mine]\nextends = "claude-code"\n\n[adapter.mine.model_endpoint.oauth]\n' + table + "\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        load_adapters(config=config_dir)
    assert any(words in str(problem) for problem in caught.value.problems), caught.value.problems


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ["fifo", "directory", "huge", "not-json", "a-list", "dangling-link"])
def test_a_hostile_sign_in_file_is_no_sign_in_and_never_hangs(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "real" / ".codex" / "auth.json"
    path.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(path)  # opening it for reading would wait for a writer forever
    elif kind == "directory":
        path.mkdir()
    elif kind == "huge":
        path.write_text('{"tokens": "' + "x" * (2 * 1024 * 1024) + '"}')
    elif kind == "not-json":
        path.write_bytes(b"\xff\xfe tokens")
    elif kind == "a-list":
        path.write_text('[{"tokens": 1}]')
    else:
        path.symlink_to(tmp_path / "nowhere")
    with pytest.raises(OptionError, match="no sign-in for harness 'codex'"):
        plan("codex", {}, tmp_path, credentials=True, auth="oauth")
