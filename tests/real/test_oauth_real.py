"""Subscription sign-ins end to end: the real harness, a real gateway, the mock holding it to the form.

Claude Code on an OAuth token: ``CLAUDE_CODE_OAUTH_TOKEN=... tackroom run claude-code "hi"
--base-url <mock> --capture`` as a user types it (the CLI in a process of its own, no key set), the
sign-in chosen by itself; and on the sign-in of its own config dir, copied in by ``--credentials``.
Codex signed in with ChatGPT: its ``auth.json`` (the ChatGPT shape) copied in by ``--credentials``,
through the gateway's ChatGPT backend route to the mock. The mock requires a
credential in its provider's form (``auth="required"``), so each answered call carried the bearer;
each call is captured under the run's trace id with its usage; and the token is in no file of the run
directory, of the capture database, of the CLI's output or of the rendered plan.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from realkit import processes_in

from tackroom.adapters.resolve import Adapter
from tackroom.mock import DEFAULT_OUTPUT_TOKENS, MockServer, Script, Turn
from tackroom.run.runner import run, vocabulary

pytestmark = [pytest.mark.real, pytest.mark.timeout(300)]

OAT = "sk-ant-oat01-REALOAUTHSECRET-fake-000000000000000000000001"


def _nowhere(secrets: list[str], *places: Path) -> None:
    """No secret in any file under ``places`` (links not followed: the shared installs stay out)."""
    checked = 0
    for place in places:
        files = (
            [place]
            if place.is_file()
            else [p for p in place.rglob("*") if p.is_file() and not p.is_symlink()]
        )
        for path in files:
            data = path.read_bytes()
            checked += 1
            for secret in secrets:
                assert secret.encode() not in data, f"{secret[:12]}... in {path}"
    assert checked, places


def _own_data_dir(tmp_path: Path, harness_data: Path) -> Path:
    """An ``XDG_DATA_HOME`` of the test's own (runs, state database) that sees the shared installs."""
    data = tmp_path / "data"
    (data / "tackroom").mkdir(parents=True)
    (data / "tackroom" / "harnesses").symlink_to(harness_data / "tackroom" / "harnesses")
    return data


@pytest.mark.parametrize("harness", ["claude-code"], indirect=True)
def test_claude_code_on_an_oauth_token_is_captured_with_no_key_set(
    harness: Adapter, harness_data: Path, workdir: Path, tmp_path: Path
) -> None:
    text = "TACKROOM-SIGNED-IN"
    data = _own_data_dir(tmp_path, harness_data)
    environ = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path / "home"),
        "XDG_DATA_HOME": str(data),
        "TACKROOM_CONFIG_DIR": str(tmp_path / "config"),
        "CLAUDE_CODE_OAUTH_TOKEN": OAT,
    }
    (tmp_path / "home").mkdir()
    with MockServer(Script([Turn.reply(text)]), tools=vocabulary(harness), auth="required") as mock:
        args = ["run", "claude-code", "hi", "--base-url", mock.base_url, "--capture", "--json"]
        args += ["--workdir", str(workdir), "--timeout", "120"]
        done = subprocess.run(
            [sys.executable, "-m", "tackroom", *args],
            env=environ,
            capture_output=True,
            timeout=200,
            check=False,
        )
        render = ["adapters", "render", "claude-code", "--base-url", mock.base_url, "--json"]
        rendered = subprocess.run(
            [sys.executable, "-m", "tackroom", *render, "--workdir", str(workdir)],
            env=environ,
            capture_output=True,
            timeout=60,
            check=False,
        )
        requests = mock.requests
    assert done.returncode == 0, done.stderr.decode()
    result = json.loads(done.stdout)
    assert result["final_text"].strip() == text
    assert result["auth"] == "oauth"  # the result says how it signed in, never with what
    run_dir = Path(result["run_dir"])
    # The harness signed in with the token: every model call reached the mock as Anthropic's OAuth
    # (a bearer beside its oauth- beta flag), the form the adapter says it sends.
    assert harness.effective["model_endpoint"]["oauth"]["sends"] == "bearer"
    model_calls = [r for r in requests if r.wire is not None]
    assert model_calls and {r.auth for r in model_calls} == {"oauth"}, [r.headers for r in model_calls]
    assert all("x-api-key" not in r.headers for r in model_calls)
    # Captured under the run's trace id, with the usage counted.
    calls = result["capture"]["calls"]
    assert {c["trace_id"] for c in calls} == {run_dir.name}
    generated = [c for c in calls if c["wire_api"] == "anthropic-messages"]
    assert generated and all((c["status"], c["outcome"]) == (200, "complete") for c in generated)
    assert all(c["usage"]["output"] == DEFAULT_OUTPUT_TOKENS for c in generated)
    assert result["capture"]["usage"]["usage"]["output"] == DEFAULT_OUTPUT_TOKENS * len(generated)
    # The plan said it: oauth, the token shown as a secret, no key set.
    assert rendered.returncode == 0, rendered.stderr.decode()
    plan = json.loads(rendered.stdout)
    assert plan["auth"] == "oauth" and plan["env"]["CLAUDE_CODE_OAUTH_TOKEN"] == "<secret>"
    assert "ANTHROPIC_API_KEY" not in plan["env"]
    # Nowhere on disk, nor in what the CLI printed.
    for output in (done.stdout, done.stderr, rendered.stdout, rendered.stderr):
        assert OAT.encode() not in output
    assert (run_dir / "result.json").is_file() and (run_dir / "stdout.log").is_file()
    assert (data / "tackroom" / "state.db").is_file()
    _nowhere([OAT], run_dir, data / "tackroom" / "state.db", data)
    assert processes_in(workdir) == []


def _jwt(claims: dict[str, Any]) -> str:
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}.c2lnbmF0dXJl"


def chatgpt_sign_in(home: Path) -> list[str]:
    """An ``auth.json`` of the shape ``codex login`` (Sign in with ChatGPT) writes; its secrets."""
    now = int(time.time())
    account = {"chatgpt_plan_type": "plus", "chatgpt_account_id": "acct-tackroom-test"}
    claims = {"exp": now + 30 * 86400, "iat": now, "https://api.openai.com/auth": account}
    tokens = {
        "id_token": _jwt({**claims, "email": "user@example.com"}),
        "access_token": _jwt({**claims, "scp": ["openid"]}),
        "refresh_token": "rt_REALCHATGPTREFRESH-fake-0000000000000001",
        "account_id": "acct-tackroom-test",
    }
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
    path = home / ".codex" / "auth.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"OPENAI_API_KEY": None, "tokens": tokens, "last_refresh": stamp}))
    return [tokens["id_token"], tokens["access_token"], tokens["refresh_token"]]


@pytest.mark.parametrize("harness", ["codex"], indirect=True)
def test_codex_signed_in_with_chatgpt_takes_the_backend_route_through_the_gateway(
    harness: Adapter, harness_data: Path, workdir: Path, tmp_path: Path
) -> None:
    text = "TACKROOM-CHATGPT"
    real_home = tmp_path / "real-home"
    secrets = chatgpt_sign_in(real_home)
    environ = {"PATH": os.environ["PATH"], "HOME": str(real_home), "XDG_DATA_HOME": str(harness_data)}
    with MockServer(Script([Turn.reply(text)]), tools=vocabulary(harness), auth="required") as mock:
        result = run(
            harness,
            "hi",
            workdir=workdir,
            runs_dir=tmp_path / "runs",
            environ=environ,
            harness_version=harness.version,
            base_url=mock.base_url,
            credentials=True,
            capture=True,
            capture_db=tmp_path / "capture.db",
            timeout_s=120.0,
        )
        requests = mock.requests
    assert result.ok, result.error
    assert result.final_text is not None and result.final_text.strip() == text
    generated = [r for r in requests if r.wire is not None and r.method == "POST"]
    assert generated and {(r.path, r.auth) for r in generated} == {("/backend-api/codex/responses", "bearer")}
    assert {r.headers.get("chatgpt-account-id") for r in generated} == {"acct-tackroom-test"}
    assert result.capture is not None
    calls = result.capture["calls"]
    assert {c["trace_id"] for c in calls} == {result.run_dir.name}
    responses = [c for c in calls if c["wire_api"] == "openai-responses"]
    assert responses and all(
        (c["provider"], c["path"], c["status"]) == ("chatgpt", "/backend-api/codex/responses", 200)
        for c in responses
    )
    assert all(c["usage"]["output"] == DEFAULT_OUTPUT_TOKENS for c in responses)
    assert "--credentials" not in result.argv and not any(s in " ".join(result.argv) for s in secrets)
    assert (tmp_path / "capture.db").is_file() and (result.run_dir / "result.json").is_file()
    _nowhere(secrets, result.run_dir, tmp_path / "capture.db", tmp_path / "runs")
    assert processes_in(workdir) == []


@pytest.mark.parametrize("harness", ["claude-code"], indirect=True)
def test_claude_code_signed_in_on_its_own_uses_the_copied_sign_in(
    harness: Adapter, harness_data: Path, workdir: Path, tmp_path: Path
) -> None:
    """The sign-in ``claude`` keeps in its config dir (``.credentials.json``), copied in by
    ``--credentials``: chosen by itself with no key and no token set, taken out again after."""
    text = "TACKROOM-CLAUDE-SIGNED-IN"
    real_home = tmp_path / "real-home"
    (real_home / ".claude").mkdir(parents=True)
    access, refresh = "sk-ant-oat01-REALCREDFILE-fake-00000000000001", "sk-ant-ort01-REALCREDFILE-fake-0001"
    sign_in = {
        "accessToken": access,
        "refreshToken": refresh,
        "expiresAt": int(time.time() * 1000) + 30 * 86400 * 1000,
        "scopes": ["user:inference", "user:profile"],
        "subscriptionType": "max",
    }
    (real_home / ".claude" / ".credentials.json").write_text(json.dumps({"claudeAiOauth": sign_in}))
    environ = {"PATH": os.environ["PATH"], "HOME": str(real_home), "XDG_DATA_HOME": str(harness_data)}
    with MockServer(Script([Turn.reply(text)]), tools=vocabulary(harness), auth="required") as mock:
        result = run(
            harness,
            "hi",
            workdir=workdir,
            runs_dir=tmp_path / "runs",
            environ=environ,
            harness_version=harness.version,
            base_url=mock.base_url,
            credentials=True,
            capture=True,
            capture_db=tmp_path / "capture.db",
            timeout_s=120.0,
        )
        requests = mock.requests
    assert result.ok, result.error
    assert result.final_text is not None and result.final_text.strip() == text
    model_calls = [r for r in requests if r.wire is not None]
    assert model_calls and {r.auth for r in model_calls} == {"oauth"}
    assert result.capture is not None
    generated = [c for c in result.capture["calls"] if c["wire_api"] == "anthropic-messages"]
    assert generated and {c["trace_id"] for c in generated} == {result.run_dir.name}
    assert all(c["usage"]["output"] == DEFAULT_OUTPUT_TOKENS for c in generated)
    assert not (result.run_dir / "home" / ".claude" / ".credentials.json").exists()
    _nowhere([access, refresh], result.run_dir, tmp_path / "capture.db", tmp_path / "runs")
    assert processes_in(workdir) == []
