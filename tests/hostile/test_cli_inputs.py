"""Bad input to every command: an error or a usage error, never a traceback, never a silent success.

Each case runs the real ``tackroom`` process in a fresh isolated home that
holds a working fake adapter, a repository and some hostile files. It must
exit 1 with one ``tackroom: error: ...`` line (or 2 with Typer's usage
error), name what is wrong, print no traceback, and leave every file under
the home as it was (the adapter cache aside): nothing written, nothing
deleted, no run directory.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from clikit import run_cli

FAKE = Path(__file__).parent.parent / "fakes" / "fake_harness.py"
SLOTS = (
    '"{{opt.auto_accept}}", "{{opt.model}}", "{{opt.max_turns}}", "{{opt.system_prompt_file}}", '
    '"{{opt.append_system_prompt}}", "{{opt.allowed_tools}}", "{{opt.disallowed_tools}}", '
    '"{{opt.reasoning_effort}}", "{{opt.resume}}", "{{trust}}"'
)


@dataclass(frozen=True)
class Case:
    argv: tuple[str, ...]
    code: int
    says: str
    """Text the message must contain (whitespace and Rich box borders ignored)."""
    setup: str = ""
    """A named extra hostile file to plant first (see ``plant``)."""


def case(*argv: str, code: int, says: str, setup: str = "") -> Case:
    return Case(argv, code, says, setup)


CASES = {
    # adapters
    "show an unknown adapter": case("adapters", "show", "no-such", code=1, says="unknown adapter 'no-such'"),
    "diff an unknown adapter": case("adapters", "diff", "../x", code=1, says="unknown adapter '../x'"),
    "render into a file as workdir": case(
        "adapters", "render", "fake", "--workdir", "{home}/file.txt", code=2, says="--workdir"
    ),
    "render with a missing workdir": case(
        "adapters", "render", "fake", "--workdir", "/nonexistent/dir", code=2, says="does not exist"
    ),
    "render with an ftp base url": case(
        "adapters", "render", "fake", "--base-url", "ftp://host", code=2, says="is not an http(s)://host"
    ),
    "render with an empty base url": case(
        "adapters", "render", "fake", "--base-url", "", code=2, says="is not an http(s)://host"
    ),
    "render with a port out of range": case(
        "adapters", "render", "fake", "--base-url", "http://h:99999", code=2, says="is not an http(s)://host"
    ),
    "render an empty prompt": case(
        "adapters", "render", "fake", "--prompt", " ", code=2, says="prompt is empty"
    ),
    "render with a bad home": case(
        "adapters", "render", "fake", "--home", "x", code=2, says="'isolated' or 'real'"
    ),
    "render a bad option value": case(
        "adapters",
        "render",
        "fake",
        "-o",
        "max_turns=0",
        code=1,
        says="option 'max_turns' takes a whole number",
    ),
    "render an option without =": case("adapters", "render", "fake", "-o", "model", code=1, says="KEY=VALUE"),
    "list with a non-UTF-8 operator file": case(
        "adapters", "list", code=1, says="20-bad.toml:2: not UTF-8", setup="non-utf8"
    ),
    "list with deep nesting": case("adapters", "list", code=1, says="nested too deeply", setup="deep"),
    "show through a broken extends chain": case(
        "adapters", "show", "a0", code=1, says="extends unknown adapter 'nosuch'", setup="chain"
    ),
    "list with a dangling link in adapters.d": case(
        "adapters", "list", code=1, says="30-gone.toml: cannot read", setup="dangling"
    ),
    "metrics with a bad operator file": case(
        "adapters", "metrics", code=1, says="not UTF-8", setup="non-utf8"
    ),
    "list with a 5,000-digit number": case(
        "adapters", "list", code=1, says="20-big.toml:4: a number with thousands of digits", setup="huge-int"
    ),
    "list with an adapter named ../x": case(
        "adapters", "list", code=1, says="'../x' cannot be an adapter's name", setup="name-path"
    ),
    "list with an adapter name holding an escape": case(
        "adapters", "list", code=1, says="'x\\x1b[31m' cannot be an adapter's name", setup="name-escape"
    ),
    "list with a min_version that is no version": case(
        "adapters", "list", code=1, says="adapter.big.min_version", setup="min-version"
    ),
    "run with a NUL in env.set": case(
        "run", "fake", "hi", code=1, says="adapter.nul.env.set.FOO", setup="nul-env"
    ),
    # run
    "run with --timeout 0": case("run", "fake", "hi", "--timeout", "0", code=2, says="positive, finite"),
    "run with --timeout nan": case("run", "fake", "hi", "--timeout", "nan", code=2, says="positive, finite"),
    "run with --timeout inf": case("run", "fake", "hi", "--timeout", "inf", code=2, says="positive, finite"),
    "run with --timeout -1": case("run", "fake", "hi", "--timeout", "-1", code=2, says="positive, finite"),
    "run with a mock log in a missing dir": case(
        "run",
        "fake",
        "hi",
        "--mock-text",
        "x",
        "--mock-log",
        "/nonexistent/dir/x.log",
        code=1,
        says="cannot open the mock log '/nonexistent/dir/x.log'",
    ),
    "run with a directory as mock log": case(
        "run", "fake", "hi", "--mock-text", "x", "--mock-log", "{home}", code=2, says="--mock-log"
    ),
    "run with a missing mock script": case(
        "run", "fake", "hi", "--mock", "/nonexistent.toml", code=2, says="does not exist"
    ),
    "run with a deeply nested mock script": case(
        "run",
        "fake",
        "hi",
        "--mock",
        "{home}/deep.json",
        code=1,
        says="nested too deeply",
        setup="deep-script",
    ),
    "run with a base url that is not one": case(
        "run", "fake", "hi", "--base-url", "notaurl", code=2, says="is not an http(s)://host"
    ),
    "run in a missing workdir": case(
        "run", "fake", "hi", "--workdir", "/nonexistent", code=2, says="does not exist"
    ),
    "run an empty prompt": case("run", "fake", "", code=2, says="prompt is empty"),
    "run a name without a prompt": case("run", "fake", code=2, says="missing PROMPT"),
    "run three words": case("run", "fake", "a", "b", code=2, says="quote the prompt"),
    "run a prompt with no project": case("run", "hello", code=1, says="no adapter named"),
    "run an unknown adapter": case("run", "no-such", "hi", code=1, says="unknown adapter 'no-such'"),
    "run a bad option value": case(
        "run", "fake", "hi", "-o", "max_turns=x", code=1, says="'max_turns' takes"
    ),
    "run an option the adapter lacks": case(
        "run",
        "fake",
        "hi",
        "-o",
        "sandbox=workspace-write",
        code=1,
        says="has no rendering for option 'sandbox'",
    ),
    "run with a bad home": case("run", "fake", "hi", "--home", "x", code=2, says="'isolated' or 'real'"),
    "run with two endpoints": case(
        "run", "fake", "hi", "--mock-text", "x", "--base-url", "http://h", code=2, says="choose one of"
    ),
    "run a profile into a real home": case(
        "run",
        "fake",
        "hi",
        "--home",
        "real",
        "--profile",
        "{home}/profile",
        code=1,
        says="rendered into the run's isolated home",
        setup="profile",
    ),
    "run with --profile and --no-profile": case(
        "run",
        "fake",
        "hi",
        "--profile",
        "{home}/profile",
        "--no-profile",
        code=2,
        says="not both",
        setup="profile",
    ),
    "run in a repository with a bad project file": case(
        "run",
        "hi",
        "--workdir",
        "{home}/repo",
        code=1,
        says="tackroom.toml:1: turbo: unknown key",
        setup="project",
    ),
    # install
    "install nothing": case("install", code=2, says="name one or more adapters"),
    "install --all with a version": case("install", "--all", "--version", "1", code=2, says="not --all"),
    "install an unknown adapter": case("install", "no-such", code=1, says="unknown adapter 'no-such'"),
    "install a path as a name": case("install", "../../x", code=1, says="unknown adapter '../../x'"),
    # mock serve
    "gateway with an ftp upstream": case(
        "gateway", "serve", "--upstream", "ftp://host", code=1, says="must be an http(s) base URL"
    ),
    "gateway upstream with a query": case(
        "gateway", "serve", "--upstream", "http://h/?key=sekrit", code=1, says="key=<redacted>"
    ),
    "gateway on port 70000": case("gateway", "serve", "--port", "70000", code=2, says="0<=x<=65535"),
    "gateway on a bad address": case(
        "gateway", "serve", "--host", "999.1.1.1", code=1, says="cannot listen on 999.1.1.1"
    ),
    "gateway calls from a file that is no database": case(
        "gateway", "calls", "--db", "{home}/file.txt", code=1, says="not a usable SQLite database"
    ),
    "gateway calls for a run and a trace": case(
        "gateway", "calls", "--run", "a", "--trace", "b", code=2, says="not both"
    ),
    "gateway usage by week": case("gateway", "usage", "--by", "week", code=2, says="'week' is not one of"),
    "mock on port 70000": case("mock", "serve", "--port", "70000", code=2, says="0<=x<=65535"),
    "mock on port -1": case("mock", "serve", "--port", "-1", code=2, says="0<=x<=65535"),
    "mock on a port that is text": case("mock", "serve", "--port", "http", code=2, says="is not a valid int"),
    "mock logging into a missing dir": case(
        "mock", "serve", "--log", "/nonexistent/x.jsonl", code=1, says="cannot open the mock log"
    ),
    "mock logging into a directory": case("mock", "serve", "--log", "{home}", code=1, says="Is a directory"),
    "mock on an empty host": case("mock", "serve", "--host", "", code=1, says="host must name an address"),
    "mock on a host that is not one": case(
        "mock", "serve", "--host", "999.1.1.1", code=1, says="cannot listen on 999.1.1.1"
    ),
    "mock with a deep JSON script": case(
        "mock", "serve", "--script", "{home}/deep.json", code=1, says="nested too deeply", setup="deep-script"
    ),
    "mock with a deep TOML script": case(
        "mock", "serve", "--script", "{home}/deep.toml", code=1, says="nested too deeply", setup="deep-script"
    ),
    "mock with a non-UTF-8 script": case(
        "mock", "serve", "--script", "{home}/latin1.toml", code=1, says="not UTF-8", setup="latin1"
    ),
    "mock with a non-UTF-8 vocabulary": case(
        "mock", "serve", "--tools", "{home}/latin1.toml", code=1, says="not UTF-8", setup="latin1"
    ),
    "mock with a missing script": case(
        "mock", "serve", "--script", "/nonexistent", code=1, says="cannot read"
    ),
    "mock with script and text": case(
        "mock", "serve", "--text", "x", "--script", "y", code=2, says="not both"
    ),
    # probe
    "probe with --timeout 0": case("probe", "fake", "--timeout", "0", code=2, says="positive, finite"),
    "probe with --timeout nan": case("probe", "fake", "--timeout", "nan", code=2, says="positive, finite"),
    "probe an unknown capability": case("probe", "fake", "-c", "telepathy", code=2, says="unknown"),
    "probe an unknown adapter": case("probe", "no-such", code=1, says="unknown adapter 'no-such'"),
    # profile
    "profile render an unknown adapter": case("profile", "render", "no-such", code=1, says="unknown adapter"),
    "profile render a bad scope": case(
        "profile", "render", "fake", "--scope", "x", code=2, says="'home' or 'project'"
    ),
    "profile import a bad scope": case(
        "profile", "import", "fake", "--scope", "x", code=2, says="'home' or 'project'"
    ),
    "profile import from a missing home": case(
        "profile",
        "import",
        "fake",
        "--from",
        "/nonexistent",
        "--into",
        "{home}/out",
        code=2,
        says="does not exist",
    ),
    "profile import from a file": case(
        "profile",
        "import",
        "fake",
        "--from",
        "{home}/file.txt",
        "--into",
        "{home}/out",
        code=2,
        says="--from",
    ),
    "profile render into a file": case(
        "profile", "render", "fake", "--into", "{home}/file.txt", code=2, says="--into"
    ),
    "profile import into a file": case(
        "profile", "import", "fake", "--from", "{home}", "--into", "{home}/file.txt", code=2, says="--into"
    ),
    # runs
    "runs show a path": case(
        "runs", "show", "../x", code=1, says="run id '../x' cannot be used as a file name"
    ),
    "runs show a hidden name": case("runs", "show", ".lock", code=1, says="cannot be used as a file name"),
    "runs show an unknown run": case("runs", "show", "20260101-000000-x-000000", code=1, says="no run"),
    "runs prune a bare number": case("runs", "prune", "--older-than", "7", code=2, says="is not an age"),
    "runs prune a negative age": case("runs", "prune", "--older-than", "-1d", code=2, says="is not an age"),
    "runs with no command": case("runs", "nope", code=2, says="No such command"),
}


def plant(home: Path, config: Path, setup: str) -> None:
    """Write the hostile file a case needs."""
    drop_ins = config / "adapters.d"
    if setup == "non-utf8":
        (drop_ins / "20-bad.toml").write_bytes(b"# operator file\n\xff\xfe = 1\n")
    elif setup == "deep":
        (drop_ins / "20-deep.toml").write_text("[adapter.fake]\nenv.set.X = " + "[" * 500 + "]" * 500 + "\n")
    elif setup == "chain":
        lines = ['[adapter.a1499]\nextends = "nosuch"\n']
        lines += [f'[adapter.a{i}]\nextends = "a{i + 1}"\n' for i in range(1499)]
        (drop_ins / "20-chain.toml").write_text("".join(lines))
    elif setup == "huge-int":
        (drop_ins / "20-big.toml").write_text('[adapter.big]\nextends = "fake"\n\nx = ' + "9" * 5000 + "\n")
    elif setup == "name-path":
        (drop_ins / "20-name.toml").write_text('[adapter."../x"]\nextends = "fake"\n')
    elif setup == "name-escape":
        (drop_ins / "20-name.toml").write_text('[adapter."x\\u001b[31m"]\nextends = "fake"\n')
    elif setup == "min-version":
        (drop_ins / "20-big.toml").write_text('[adapter.big]\nextends = "fake"\nmin_version = "banana"\n')
    elif setup == "nul-env":
        (drop_ins / "20-nul.toml").write_text('[adapter.nul]\nextends = "fake"\nenv.set.FOO = "a\\u0000b"\n')
    elif setup == "dangling":
        (drop_ins / "30-gone.toml").symlink_to(home / "nowhere.toml")
    elif setup == "deep-script":
        (home / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
        (home / "deep.toml").write_text("turns = " + "[" * 100_000 + "]" * 100_000 + "\n")
    elif setup == "latin1":
        (home / "latin1.toml").write_bytes('[[turns]]\ntext = "café"\n'.encode("latin-1"))
    elif setup == "profile":
        (home / "profile" / "rules").mkdir(parents=True)
        (home / "profile" / "rules" / "r.md").write_text("Be brief.\n")
    elif setup == "project":
        (home / "repo" / ".git").mkdir(parents=True)
        (home / "repo" / "tackroom.toml").write_text("turbo = true\n")


@pytest.fixture
def home(isolated_home: Path, config_dir: Path) -> Path:
    table = (
        f'[adapter.fake]\nextends = "claude-code"\nexecutable = "{FAKE}"\n'
        f'one_shot = ["--exit-code", "0", "--prompt", "{{{{prompt}}}}", {SLOTS}]\n'
    )
    (config_dir / "adapters.d" / "10-fake.toml").write_text(table, encoding="utf-8")
    (isolated_home / "file.txt").write_text("a file, not a directory\n")
    return isolated_home


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``root`` (the cache dir aside) with its size and modification time."""
    cache = root / ".cache"
    found = {}
    for path in root.rglob("*"):
        if cache in path.parents or path == cache:
            continue
        stat = path.lstat()
        found[str(path.relative_to(root))] = (stat.st_size, stat.st_mtime_ns)
    return found


def flat(text: str) -> str:
    """Text with Rich's box borders and all line wrapping removed."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_is_an_error_not_a_traceback(home: Path, config_dir: Path, name: str) -> None:
    bad = CASES[name]
    plant(home, config_dir, bad.setup)
    before = snapshot(home)
    argv = [arg.replace("{home}", str(home)) for arg in bad.argv]
    done = run_cli(*argv, cwd=home, env={"COLUMNS": "100"})
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == bad.code, (done.returncode, done.stdout, done.stderr)
    if bad.code == 1:
        assert done.stderr.count("tackroom: error: ") == 1, done.stderr
        assert done.stderr.startswith("tackroom: error: ")
    else:
        assert "Usage: tackroom" in done.stderr
    assert flat(bad.says) in flat(done.stderr), done.stderr
    assert snapshot(home) == before  # nothing written, nothing deleted, no run directory


def test_names_and_values_with_markup_are_printed_as_written(home: Path, config_dir: Path) -> None:
    drop_in = config_dir / "adapters.d" / "20-markup.toml"
    drop_in.write_text('[adapter."x[bold]y"]\nextends = "fake"\n', encoding="utf-8")
    refused = run_cli("adapters", "list", cwd=home, env={"COLUMNS": "300"})
    assert refused.returncode == 1 and "'x[bold]y' cannot be an adapter's name" in refused.stderr
    drop_in.write_text(
        '[adapter.xy]\nextends = "fake"\nexecutable = "/opt/[/]bin/[red]claude"\n', encoding="utf-8"
    )
    env = {"COLUMNS": "300"}
    for argv in (("adapters", "list"), ("adapters", "show", "xy"), ("adapters", "diff", "xy")):
        done = run_cli(*argv, cwd=home, env=env)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        assert "/opt/[/]bin/[red]claude" in done.stdout, done.stdout
    rendered = run_cli("adapters", "render", "xy", "--prompt", "[/] [b]p", cwd=home, env=env)
    assert rendered.returncode == 0 and "[/] [b]p" in rendered.stdout, rendered.stderr


def test_a_lone_surrogate_from_argv_is_printed_as_an_escape(home: Path) -> None:
    prompt = b"p \xed\xa0\xbd q"  # undecodable bytes: Python sees the lone surrogates \udced\udca0\udcbd
    done = subprocess.run(
        [sys.executable, "-m", "tackroom", "adapters", "render", "fake", "--json", "--prompt", prompt],
        capture_output=True,
        cwd=home,
        env=os.environ,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    argv = json.loads(done.stdout)["argv"]
    assert "p \udced\udca0\udcbd q" in argv  # the escapes read back as the same value
    people = subprocess.run(
        [sys.executable, "-m", "tackroom", "adapters", "render", "fake", "--prompt", prompt],
        capture_output=True,
        cwd=home,
        env=os.environ,
        timeout=60,
        check=False,
    )
    assert people.returncode == 0 and b"Traceback" not in people.stderr
