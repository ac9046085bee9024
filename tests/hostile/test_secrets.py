"""Secrets stay where they belong (issue 7, items 13 and 14).

Credentials in URLs and headers are hidden everywhere tackroom shows or saves
something (plan JSON, render output, result.json, the mock's records and log,
errors); a mock run gets no real credential; only the identity of a git config
reaches a run directory; credentials copied in with ``--credentials`` leave
when the run ends, however it ends; a profile cannot write a credential out;
and ``--base-url`` sends the user's own key (``--api-key-env`` picks it), never
the mock's dummy. Every check looks at what the harness process really got
(the fake harness dumps its environment) and at every file of the run dir.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import re
import string
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from clikit import run_cli
from hostile.fuzz import FUZZ
from tackroom.adapters.resolve import Adapter, load_adapters
from tackroom.errors import ConfigError, OptionError, RunError
from tackroom.mock import MockServer, Script
from tackroom.profile.load import load_profile
from tackroom.run.runner import arun, run

FAKE = Path(__file__).resolve().parent.parent / "fakes" / "fake_harness.py"
# A stream recorded from the real claude binary: a run that replays it is complete (it ends in "result").
RECORDED = FAKE.parent.parent / "golden" / "claude-code" / "claude-code-text" / "stream.jsonl"
SLOTS = [
    *("{{opt.auto_accept}}", "{{opt.model}}", "{{opt.max_turns}}", "{{opt.system_prompt_file}}"),
    *("{{opt.append_system_prompt}}", "{{opt.allowed_tools}}", "{{opt.disallowed_tools}}"),
    *("{{opt.reasoning_effort}}", "{{opt.resume}}", "{{trust}}"),
]
REAL = {
    "ANTHROPIC_API_KEY": "sk-ant-REAL-API-KEY-0001",
    "ANTHROPIC_AUTH_TOKEN": "REAL-AUTH-TOKEN-0002",
    "CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat-REAL-OAUTH-0003",
    "HTTPS_PROXY": "http://proxyuser:REAL-PROXY-PASS-0004@proxy.example:3128",
}


def fake_adapter(
    config_dir: Path, one_shot: list[str], extra: str = "", name: str = "fake", executable: Path = FAKE
) -> Adapter:
    """An operator adapter of claude-code's family: the fake harness (or ``executable``) runs ``one_shot``."""
    table = (
        f'[adapter.{name}]\nextends = "claude-code"\nexecutable = "{executable}"\n'
        f"one_shot = {json.dumps([*one_shot, *SLOTS])}\n{extra}"
    )
    (config_dir / "adapters.d" / f"{name}.toml").write_text(table, encoding="utf-8")
    return load_adapters(config=config_dir)[name]


def dumped_environ(run_dir: Path) -> dict[str, str]:
    """The exec-time environment the fake harness printed (``--dump-environ``)."""
    return dict(json.loads((run_dir / "stdout.log").read_text().splitlines()[0]))


def files_holding(root: Path, *needles: str) -> list[str]:
    """Every file under ``root`` holding one of ``needles``, as 'path: needle'."""
    found = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            found += [f"{path}: {needle}" for needle in needles if needle.encode() in data]
    return found


def real_home(tmp_path: Path) -> Path:
    home = tmp_path / "real-home"
    home.mkdir()
    return home


# -- shown and saved -----------------------------------------------------------------------------


@pytest.mark.parametrize("as_json", [False, True])
def test_render_hides_proxy_and_url_credentials(as_json: bool, tmp_path: Path) -> None:
    args = ["adapters", "render", "codex", "--workdir", str(tmp_path)]
    args += ["--base-url", "http://gwuser:REAL-GATEWAY-PASS@gateway.example/v1?key=REAL-QUERY-KEY"]
    env = {"HTTPS_PROXY": REAL["HTTPS_PROXY"], "OPENAI_API_KEY": "sk-REAL-OPENAI-KEY", "COLUMNS": "400"}
    done = run_cli(*args, *(["--json"] if as_json else []), env=env)
    assert done.returncode == 0, done.stderr
    shown = done.stdout + done.stderr
    for secret in ("REAL-PROXY-PASS-0004", "REAL-GATEWAY-PASS", "REAL-QUERY-KEY", "sk-REAL-OPENAI-KEY"):
        assert secret not in shown
    assert "proxy.example:3128" in shown and "gateway.example" in shown  # hidden: the secret, not the host


def test_mock_records_and_log_hold_no_credentials(tmp_path: Path) -> None:
    log = tmp_path / "mock.jsonl"
    with MockServer(Script.text("hi"), log_path=log) as mock:
        conn = http.client.HTTPConnection(urlsplit(mock.base_url).netloc, timeout=10)
        body = json.dumps({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
        headers = {
            "Content-Type": "application/json",
            "x-goog-api-key": "AIza-REAL-HEADER-KEY",
            "Referer": "https://user:REAL-REFERER-PASS@example.com/",
        }
        path = "/v1beta/models/m:generateContent?alt=sse&key=AIza-REAL-QUERY-KEY"
        conn.request("POST", path, body, headers)
        assert conn.getresponse().status == 200
        conn.close()
        records = json.dumps([r.to_json() for r in mock.requests])
    logged = log.read_text(encoding="utf-8")
    for secret in ("AIza-REAL-HEADER-KEY", "AIza-REAL-QUERY-KEY", "REAL-REFERER-PASS"):
        assert secret not in records and secret not in logged
    assert "alt=sse" in logged and ":generateContent" in logged


def test_result_json_hides_endpoint_credentials_in_argv(config_dir: Path, tmp_path: Path) -> None:
    # The endpoint's argv carries the URL and the key, as codex's -c flags do.
    adapter = fake_adapter(
        config_dir,
        ["--dump-environ", "{{endpoint}}", "--prompt", "{{prompt}}"],
        '[adapter.fake.model_endpoint]\nargv = ["--prompt", "{{base_url}}|{{api_key}}"]\n',
    )
    environ = {"PATH": "/usr/bin:/bin", "HOME": str(real_home(tmp_path)), **REAL}
    url = "http://gwuser:REAL-GATEWAY-PASS@127.0.0.1:9"
    result = run(adapter, "p", workdir=tmp_path, runs_dir=tmp_path / "runs", base_url=url, environ=environ)
    saved = (result.run_dir / "result.json").read_text()
    assert "REAL-GATEWAY-PASS" not in saved and REAL["ANTHROPIC_API_KEY"] not in saved
    assert "REAL-GATEWAY-PASS" not in " ".join(result.argv)
    assert "127.0.0.1:9|<redacted>" in saved  # what was passed is still told, without the secrets


# -- what the harness gets -----------------------------------------------------------------------


def test_a_mock_run_gets_no_real_credential(config_dir: Path, tmp_path: Path) -> None:
    adapter = fake_adapter(config_dir, ["--dump-environ", "--prompt", "{{prompt}}"])
    environ = {"PATH": "/usr/bin:/bin", "HOME": str(real_home(tmp_path)), **REAL}
    result = run(adapter, "p", workdir=tmp_path, runs_dir=tmp_path / "runs", mock_text="hi", environ=environ)
    got = dumped_environ(result.run_dir)
    assert got["ANTHROPIC_API_KEY"] == "sk-tackroom-mock"
    for name in ("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "HTTPS_PROXY"):
        assert name not in got, name
    assert not any(secret in json.dumps(got) for secret in REAL.values())
    assert files_holding(result.run_dir, *REAL.values()) == []
    assert any("HTTPS_PROXY" in note for note in result.withheld)
    with pytest.raises(RunError, match="no real credential"):
        run(adapter, "p", workdir=tmp_path, mock_text="hi", environ=environ, credentials=True)


def test_base_url_sends_the_users_own_key(config_dir: Path, tmp_path: Path) -> None:
    adapter = fake_adapter(config_dir, ["--dump-environ", "--prompt", "{{prompt}}"])
    environ = {"PATH": "/usr/bin:/bin", "HOME": str(real_home(tmp_path)), **REAL, "GATEWAY_KEY": "gw-KEY-7"}
    url = "http://127.0.0.1:9"

    def sent(**kwargs: Any) -> dict[str, str]:
        done = run(adapter, "p", workdir=tmp_path, runs_dir=tmp_path / "runs", environ=environ, **kwargs)
        return dumped_environ(done.run_dir)

    by_default = sent(base_url=url)
    assert by_default["ANTHROPIC_API_KEY"] == REAL["ANTHROPIC_API_KEY"]
    assert by_default["ANTHROPIC_BASE_URL"] == url
    # The endpoint gets one key; the OAuth login for the harness's own provider stays home.
    assert "CLAUDE_CODE_OAUTH_TOKEN" not in by_default
    assert sent(base_url=url, api_key_env="GATEWAY_KEY")["ANTHROPIC_API_KEY"] == "gw-KEY-7"
    assert sent(mock_text="hi")["ANTHROPIC_API_KEY"] == "sk-tackroom-mock"
    with pytest.raises(OptionError, match="--api-key-env"):
        run(adapter, "p", workdir=tmp_path, base_url=url, environ={"PATH": "/usr/bin:/bin"})
    with pytest.raises(OptionError, match="NOT_SET is not set"):
        run(adapter, "p", workdir=tmp_path, base_url=url, api_key_env="NOT_SET", environ=environ)


def test_cli_api_key_env_and_errors_without_passwords(config_dir: Path, tmp_path: Path) -> None:
    fake_adapter(config_dir, ["--dump-environ", "--replay", str(RECORDED), "--prompt", "{{prompt}}"])
    url = "http://gwuser:REAL-GATEWAY-PASS@127.0.0.1:9"
    base = ["run", "fake", "p", "--json", "--workdir", str(tmp_path), "--base-url", url]
    done = run_cli(*base, "--api-key-env", "GATEWAY_KEY", env={"GATEWAY_KEY": "gw-KEY-8"})
    assert done.returncode == 0, done.stderr
    assert dumped_environ(Path(json.loads(done.stdout)["run_dir"]))["ANTHROPIC_API_KEY"] == "gw-KEY-8"
    assert "REAL-GATEWAY-PASS" not in done.stdout + done.stderr
    failed = run_cli(*base, "--api-key-env", "NOWHERE_KEY")
    assert failed.returncode == 1 and failed.stderr.count("tackroom: error:") == 1
    assert "NOWHERE_KEY" in failed.stderr and "REAL-GATEWAY-PASS" not in failed.stderr
    assert "Traceback" not in failed.stderr


def test_only_the_git_identity_reaches_the_run(config_dir: Path, tmp_path: Path) -> None:
    home = real_home(tmp_path)
    (home / ".gitconfig").write_text(
        '[user]\n\tname = "Real \\"Q\\" Person"\n\temail = real@example.com\n'
        '[url "https://x-access-token:ghp_REALGITTOKEN01@github.com/"]\n\tinsteadOf = https://github.com/\n'
        "[http]\n\textraHeader = Authorization: Bearer REAL-EXTRA-HEADER-02\n"
        "[credential]\n\thelper = store --file ~/.REAL-CREDENTIAL-STORE\n",
        encoding="utf-8",
    )
    adapter = fake_adapter(config_dir, ["--dump-environ", "--prompt", "{{prompt}}"])
    environ = {"PATH": "/usr/bin:/bin", "HOME": str(home)}
    result = run(adapter, "p", workdir=tmp_path, runs_dir=tmp_path / "runs", environ=environ)
    copied = result.run_dir / "home" / ".gitconfig"

    def git(key: str) -> str:
        cmd = ["git", "config", "--file", str(copied), "--get", key]
        return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout

    assert git("user.name") == 'Real "Q" Person\n' and git("user.email") == "real@example.com\n"
    secrets = ("ghp_REALGITTOKEN01", "REAL-EXTRA-HEADER-02", "REAL-CREDENTIAL-STORE")
    assert files_holding(result.run_dir, *secrets) == []


@pytest.mark.parametrize("ending", ["normal", "timeout", "cancelled"])
def test_copied_credentials_leave_when_the_run_ends(ending: str, config_dir: Path, tmp_path: Path) -> None:
    home = real_home(tmp_path)
    (home / ".claude").mkdir()
    (home / ".claude" / ".credentials.json").write_text('{"token": "REAL-OAUTH-CRED-03"}', encoding="utf-8")
    (home / ".claude" / "settings.json").write_text("{}", encoding="utf-8")
    check = 'test -f "$CLAUDE_CONFIG_DIR/.credentials.json" && echo COPY-PRESENT; sleep "$0"'
    adapter = fake_adapter(config_dir, ["-c", check, "{{prompt}}"], name="creds", executable=Path("/bin/sh"))
    runs = tmp_path / "runs"
    kwargs: dict[str, Any] = {"workdir": tmp_path, "runs_dir": runs, "credentials": True}
    kwargs["environ"] = {"PATH": "/usr/bin:/bin", "HOME": str(home)}
    if ending == "normal":
        run(adapter, "0", **kwargs)
    elif ending == "timeout":
        assert run(adapter, "30", timeout_s=1.0, **kwargs).timed_out
    else:

        async def cancelled() -> None:
            await asyncio.wait_for(arun(adapter, "30", **kwargs), timeout=1.5)

        with pytest.raises(TimeoutError):
            asyncio.run(cancelled())
    [run_dir] = list(runs.iterdir())
    if ending != "cancelled":
        assert "COPY-PRESENT" in (run_dir / "stdout.log").read_text()  # it was there while the run ran
    assert not (run_dir / "home" / ".claude" / ".credentials.json").exists()
    assert files_holding(run_dir, "REAL-OAUTH-CRED-03") == []
    assert (home / ".claude" / ".credentials.json").exists()  # the user's own is untouched


# -- a profile cannot write a credential out -------------------------------------------------------


INLINE = [
    ('command = "s"\nargs = ["--token", "ghp_literal_token"]', "servers.x.args"),
    ('command = "s"\nargs = ["--api-key=sk-literal"]', "servers.x.args"),
    ('command = "s"\nargs = ["https://user:hunter2@db.example/x"]', "servers.x.args"),
    ('command = "s"\nenv = { DATABASE_URL = "postgres://app:hunter2@db/x" }', "servers.x.env.DATABASE_URL"),
    ('command = "s"\nenv = { GITHUB_TOKEN = "ghp_literal" }', "servers.x.env.GITHUB_TOKEN"),
    ('url = "https://user:hunter2@mcp.example/sse"', "servers.x.url"),
    ('url = "https://mcp.example/sse?api_key=literal123"', "servers.x.url"),
    (
        'url = "https://m.example"\nheaders = { Proxy-Authorization = "Basic dXNlcjpwYXNz" }',
        "Proxy-Authorization",
    ),
    ('url = "https://m.example"\nheaders = { X-Api-Key = "literal" }', "servers.x.headers.X-Api-Key"),
    ('url = "https://m.example"\nheaders = { Authorization = "Bearer literal" }', "headers.Authorization"),
    # Names no rule knows: the value's shape says what it is.
    (f'command = "s"\nenv = {{ GH = "ghp_{"a1B2" * 9}" }}', "servers.x.env.GH"),
    (f'command = "s"\nenv = {{ SLACK = "xoxb-{"1234567890"}-abcDEF" }}', "servers.x.env.SLACK"),
    (f'command = "s"\nargs = ["--config", "AIza{"Sy0_-" * 7}"]', "servers.x.args"),
    (
        'command = "s"\nenv = { SIGNING = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLWJ5dGVz" }',
        "env.SIGNING",
    ),
    ('command = "s"\nenv = { PASSPHRASE = "correct horse battery" }', "servers.x.env.PASSPHRASE"),
    ('url = "https://m.example"\nheaders = { X-Api = "literal-value-1" }', "servers.x.headers.X-Api"),
]


@pytest.mark.parametrize(("body", "key"), INLINE)
def test_a_profile_cannot_write_a_credential_out(body: str, key: str, tmp_path: Path) -> None:
    (tmp_path / "mcp.toml").write_text(f"[servers.x]\n{body}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_profile([tmp_path])
    assert f"{key}: inline secret" in str(caught.value) and "${MY_TOKEN}" in str(caught.value)


def test_references_and_hook_commands(tmp_path: Path) -> None:
    (tmp_path / "mcp.toml").write_text(
        '[servers.ok]\ncommand = "server"\nargs = ["--token", "${GITHUB_TOKEN}", "--api-key=$KEY"]\n'
        'env = { DATABASE_URL = "postgres://app:${DB_PASSWORD}@db/x" }\n'
        '[servers.remote]\nurl = "https://mcp.example/sse?key=${MCP_KEY}"\n'
        'headers = { Authorization = "Bearer ${MCP_TOKEN}" }\n',
        encoding="utf-8",
    )
    assert len(load_profile([tmp_path]).mcp) == 2
    (tmp_path / "hooks.toml").write_text(
        '[hooks.leaky]\nmoment = "session-start"\n'
        "command = \"curl -H 'Authorization: Bearer sk-literal-123' https://x.example\"\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=r"hooks\.leaky\.command: inline secret"):
        load_profile([tmp_path])


def test_a_key_known_by_its_shape_is_refused_in_the_profile_env_too(tmp_path: Path) -> None:
    (tmp_path / "env.toml").write_text(f'[env]\nGH = "ghp_{"x9Y8" * 9}"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"env\.GH: inline secret \(a GitHub token \(by its shape\)\)"):
        load_profile([tmp_path])


def test_words_that_look_like_key_prefixes_are_not_keys(tmp_path: Path) -> None:
    (tmp_path / "mcp.toml").write_text(
        '[servers.x]\ncommand = "s"\nargs = ["--task-force-abcdefghijklmnopqrstuvwxyz", "risk-free"]\n'
        'env = { MODE = "desk-abcdefghijklmnopqrstuvwxyz0123", LIB = "sk-learn" }\n',
        encoding="utf-8",
    )
    assert len(load_profile([tmp_path]).mcp) == 1


def test_keys_typed_into_a_message_or_echoed_by_the_upstream_are_not_captured(tmp_path: Path) -> None:
    from tackroom.gateway import Gateway, SQLiteCaptureStore
    from tackroom.mock import Turn

    typed = {
        "github": "ghp_" + "T" * 36,
        "google": "AIza" + "G" * 35,
        "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLWJ5dGVz",
        "slack": "xoxb-1234567890-abcdefSLACK",
    }
    echoed = "sk-proj-" + "E" * 40
    db = tmp_path / "state.db"
    mock = MockServer(Script([Turn.reply(f"your new key is {echoed}")]))
    with mock, Gateway(upstream=mock.base_url, db=db) as gw:
        body = {
            "model": "claude-sonnet-4-5",
            "max_tokens": 5,
            "messages": [{"role": "user", "content": "keys: " + " ".join(typed.values())}],
        }
        parts = urlsplit(gw.trace_url("tr-k"))
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
        conn.request(
            "POST",
            parts.path + "/v1/messages",
            json.dumps(body),
            {"content-type": "application/json", "x-api-key": "placeholder-key"},
        )
        answer = conn.getresponse()
        assert answer.status == 200 and echoed in answer.read().decode()  # the client gets it whole
        conn.close()
        gw.flush()
    [call] = SQLiteCaptureStore(db).calls(trace="tr-k")
    stored = SQLiteCaptureStore(db).body(call["request_body"]) or b""
    assert b"keys: <redacted> <redacted> <redacted> <redacted>" in stored
    for secret in (*typed.values(), echoed):
        for path in tmp_path.glob("state.db*"):
            assert secret.encode() not in path.read_bytes(), (secret, path.name)


# -- fuzz ----------------------------------------------------------------------------------------

USERINFO = string.ascii_letters + string.digits + "-._~!*+,;=%"


@FUZZ
@given(
    user=st.text(USERINFO, min_size=1, max_size=12),
    password=st.text(USERINFO, min_size=6, max_size=24),
    key=st.text(string.ascii_letters + string.digits + "-_", min_size=6, max_size=24),
    around=st.text(max_size=20),
)
def test_redaction_hides_every_url_credential(user: str, password: str, key: str, around: str) -> None:
    from tackroom.redact import inline_secret, redact_text

    url = f"https://{user}:{password}@host.example:8443/p?x=1&api_key={key}#f"
    shown = redact_text(url)
    assert password not in shown and f"api_key={key}" not in shown
    assert "host.example:8443/p" in shown
    assert inline_secret(url) is not None
    assert password not in redact_text(f"{around} {url}", secrets=[password]).replace(around, "", 1)


@FUZZ
@given(text=st.text(max_size=200), args=st.lists(st.text(max_size=30), max_size=6))
def test_redaction_and_detection_take_anything(text: str, args: list[str]) -> None:
    from tackroom.redact import inline_secret, inline_secret_in_args, redact_text

    assert isinstance(redact_text(text, secrets=args), str)
    assert inline_secret(text) is None or isinstance(inline_secret(text), str)
    assert inline_secret_in_args(args) is None or isinstance(inline_secret_in_args(args), str)


SECRET_SHARDS = [
    *("Authorization", "authorization", "AUTHORIZATION", "Proxy-Authorization", "x-api-key", "API-KEY"),
    *("x-goog-api-key", "Cookie", "set-cookie", "coo\u212aie", "authorızation", "Bearer", "Basic", "Token"),
    *("authorızation: x", "ſet-cookie=1", "Cookie: v", "x-api-key: k", "Bearer abcd", "h://u:p@h"),
    *(": ", "=", "://", "@", "?", "&", "#", " ", "\n", "https", "user:pw", "sk-abc12345", "key", "token"),
]


@FUZZ
@given(parts=st.lists(st.sampled_from(SECRET_SHARDS) | st.text(max_size=4), max_size=16))
@example(parts=["authorızation: x"])
def test_redaction_skips_a_pattern_only_where_it_cannot_match(parts: list[str]) -> None:
    """Each pattern is skipped where a byte search says the text cannot hold a match: that changes nothing."""
    from tackroom import redact

    text = "".join(parts)
    every = redact._url_userinfo().sub(lambda m: f"{m['scheme']}{redact.REDACTED}@", text)
    every = redact._secret_query().sub(lambda m: f"{m['name']}{redact.REDACTED}", every)
    every = redact._header_text().sub(redact._header_value, every)
    every = redact._scheme_token().sub(lambda m: f"{m['name']}{redact.REDACTED}", every)
    every = redact._key_shape().sub(redact.REDACTED, every)
    assert redact.redact_text(text) == every


KEY_SHARDS = [
    *("sk-", "sk-ant-", "proj-", "AKIA", "ghp_", "gho_", "github_pat_", "glpat-", "AIza", "xoxb-", "hf_"),
    *("npm_", "rk_live_", "sk_live_", "eyJ", ".", "-", "_", " ", "ABCDEFGHIJ", "0123456789", "abcdefghij"),
]


@FUZZ
@given(parts=st.lists(st.sampled_from(KEY_SHARDS) | st.text(max_size=3), max_size=24))
@example(parts=["ghp_", *["ABCDEFGHIJ"] * 3])
def test_key_shapes_in_bytes_are_found_as_in_text(parts: list[str]) -> None:
    """The bytes path looks for each shape only where its literal prefix occurs: that changes nothing."""
    from tackroom import redact

    text = "".join(parts)
    expected = redact._key_shape().sub(redact.REDACTED, text).encode("utf-8", "surrogatepass")
    assert redact.redact_key_shapes(text.encode("utf-8", "surrogatepass")) == expected


@FUZZ
@given(parts=st.lists(st.sampled_from(SECRET_SHARDS + KEY_SHARDS) | st.text(max_size=4), max_size=16))
@example(parts=["https://", "u:pw", "@h"])
@example(parts=["authorızation: x"])
def test_an_inline_secret_is_looked_for_only_where_it_cannot_be_missed(parts: list[str]) -> None:
    """inline_secret skips a pattern where a byte search says the text cannot hold a match, and looks
    for key shapes only where a key's literal prefix occurs: it says what searching everything says."""
    from tackroom import redact

    text = "".join(parts)
    expected = None
    for match in redact._url_userinfo().finditer(text):
        _, colon, password = match["userinfo"].partition(":")
        if colon and password and not redact._is_reference(password):
            expected = expected or "a password in a URL (user:password@)"
    for match in redact._secret_query().finditer(text):
        if not redact._is_reference(match["value"]):
            expected = expected or f"a credential in a URL query ({match['name'][1:]}...)"
    for match in redact._header_text().finditer(text):
        value = re.sub(r"^(?:Bearer|Basic|Token)\s+", "", match["value"].strip(), flags=re.IGNORECASE)
        if not redact._is_reference(value):
            expected = expected or f"a {match['name'].strip(' :=')} header value"
    for match in redact._scheme_token().finditer(text):
        if not redact._is_reference(match["value"]):
            expected = expected or f"a {match['name'].strip()} token"
    if expected is None and (found := redact._key_shape().search(text)):
        shape = next(name for name, shape in redact._shape_names() if shape.fullmatch(found.group(0)))
        expected = f"{shape} (by its shape)"
    assert redact.inline_secret(text) == expected
