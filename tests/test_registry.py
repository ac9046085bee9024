"""The newest release of a harness, asked of its package registry through the registry's own client.

The clients here are scripted fakes on PATH (real subprocesses): what a real
npm or pip prints for an answer, an unknown package, an unreachable registry,
garbage, or no answer at all.
"""

from __future__ import annotations

import json
import os
import textwrap
import time
from pathlib import Path

import pytest

from clikit import run_cli
from tackroom.adapters.resolve import load_adapters, resolve_builtins
from tackroom.errors import RegistryError
from tackroom.harnesses import MARKER, data_dir
from tackroom.registry import latest_version

CLAUDE = resolve_builtins()["claude-code"]
AIDER = resolve_builtins()["aider"]


def client(directory: Path, name: str, body: str) -> Path:
    """An executable ``name`` in ``directory`` running the shell ``body``."""
    directory.mkdir(exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\n" + textwrap.dedent(body), encoding="utf-8")
    path.chmod(0o755)
    return path


def env_with(directory: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{directory}{os.pathsep}/usr/bin{os.pathsep}/bin"}


def test_npm_answers_the_newest_version(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    client(
        bin_dir,
        "npm",
        """\
        [ "$1 $3 $4" = "view version --json" ] || exit 9
        echo "\\"$2 asked\\"" > "$(dirname "$0")/asked"
        echo '"2.1.400"'
    """,
    )
    assert latest_version(CLAUDE, env=env_with(bin_dir)) == "2.1.400"
    assert (bin_dir / "asked").read_text().strip() == '"@anthropic-ai/claude-code asked"'


def test_pip_answers_with_the_version_it_would_install(tmp_path: Path) -> None:
    python = client(
        tmp_path / "bin",
        "python",
        """\
        [ "$1 $2 $3 $4 $5" = "-m pip index versions aider-chat" ] || exit 9
        echo "WARNING: pip index is currently an experimental command." >&2
        echo "aider-chat (0.86.3)"
        echo "Available versions: 0.86.3, 0.86.2, 0.86.1"
    """,
    )
    assert latest_version(AIDER, python=str(python)) == "0.86.3"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("echo 'npm error code E404' >&2; echo 'npm error 404 Not Found' >&2; exit 1", "does not know"),
        ("echo 'npm error code ENOTFOUND' >&2; exit 1", "could not be reached"),
        ("echo 'npm error code EAI_AGAIN' >&2; exit 1", "could not be reached"),
        ("exit 3", "its client failed (exit 3)"),
        ("echo '\"../../etc\"'", "not a version"),
        ('echo \'{"version": "1.0.0"}\'', "not a version"),
        ('echo \'["1.0.0", "2.0.0"]\'', "not a version"),
        ("echo 'not json at all'", "not a version"),
        ("echo ''", "answered 'nothing'"),
        ("head -c 200000 /dev/zero | tr '\\0' 'x'", "not a version"),
    ],
)
def test_every_other_answer_is_a_registry_error(tmp_path: Path, body: str, message: str) -> None:
    bin_dir = tmp_path / "bin"
    client(bin_dir, "npm", body + "\n")
    with pytest.raises(RegistryError, match="npm") as caught:
        latest_version(CLAUDE, env=env_with(bin_dir))
    assert message in str(caught.value)
    assert len(str(caught.value)) < 800


def test_a_registry_that_does_not_answer_times_out(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    client(bin_dir, "npm", "exec sleep 30\n")
    started = time.monotonic()
    with pytest.raises(RegistryError, match=r"did not answer within 0\.5s"):
        latest_version(CLAUDE, env=env_with(bin_dir), timeout_s=0.5)
    assert time.monotonic() - started < 5


def test_no_client_or_no_recipe_is_a_registry_error(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="needs npm on PATH"):
        latest_version(CLAUDE, env={"PATH": str(tmp_path)})
    with pytest.raises(RegistryError, match="no install recipe"):
        latest_version(resolve_builtins()["kiro"])
    with pytest.raises(RegistryError, match="could not ask"):
        latest_version(AIDER, python=str(tmp_path / "no-python"))


FAKE_NPM = """\
#!/usr/bin/env python3
# A scripted npm: `view PKG version --json` answers 3.0.0; `install --prefix P ... PKG@V` makes
# P/node_modules/.bin/fakeh, which prints V.
import json, os, sys
args = sys.argv[1:]
if args[:1] == ["view"]:
    print(json.dumps("3.0.0"))
    sys.exit(0)
prefix = args[args.index("--prefix") + 1]
version = next(a for a in args if a.startswith("fake-harness-pkg@")).split("@")[1]
bin_dir = os.path.join(prefix, "node_modules", ".bin")
os.makedirs(bin_dir)
path = os.path.join(bin_dir, "fakeh")
with open(path, "w") as out:
    out.write(f"#!/bin/sh\\necho {version}\\n")
os.chmod(path, 0o755)
"""


def fake_harness(config_dir: Path, tmp_path: Path) -> dict[str, str]:
    """An adapter whose package the scripted npm serves; the environment that finds that npm."""
    (config_dir / "adapters.d" / "fakeh.toml").write_text(
        '[adapter.fakeh]\nextends = "claude-code"\nexecutable = "fakeh"\n'
        'install = { npm = "fake-harness-pkg" }\n',
        encoding="utf-8",
    )
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npm").write_text(FAKE_NPM, encoding="utf-8")
    (bin_dir / "npm").chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "COLUMNS": "200"}


def test_install_latest_installs_the_newest_release_beside_the_others(
    config_dir: Path, tmp_path: Path
) -> None:
    env = fake_harness(config_dir, tmp_path)
    verified = load_adapters(config=config_dir)["fakeh"].verified_with
    done = run_cli("install", "fakeh", "--version", "latest", "--json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)
    assert row["version"] == "3.0.0" and not row["already_installed"]
    assert "newest release 3.0.0" in done.stderr
    prefix = data_dir() / "harnesses" / "claude-code" / "3.0.0"
    assert json.loads((prefix / MARKER).read_text())["version"] == "3.0.0"
    assert not (data_dir() / "harnesses" / "claude-code" / str(verified)).exists()


def test_install_latest_with_an_unreachable_registry_is_an_error_not_a_traceback(
    config_dir: Path, tmp_path: Path
) -> None:
    env = fake_harness(config_dir, tmp_path)
    (tmp_path / "bin" / "npm").write_text("#!/bin/sh\necho 'npm error code ENOTFOUND' >&2\nexit 1\n")
    done = run_cli("install", "fakeh", "--version", "latest", cwd=tmp_path, env=env)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("tackroom: error: could not ask npm (fake-harness-pkg)")
    assert "could not be reached" in done.stderr
    assert not (data_dir() / "harnesses").exists()


def test_install_all_means_every_verified_version() -> None:
    from tackroom.cli.install import Skip, _verified

    targets = {(a.name, v if isinstance(v, str) else "skip") for a, v in _verified(resolve_builtins())}
    assert {("claude-code", "2.1.332"), ("claude-code", "2.1.197")} <= targets
    assert {("qwen", "0.24.4"), ("qwen", "0.15.10"), ("omp", "18.2.3"), ("kiro", "skip")} <= targets
    skipped = {a.name: v for a, v in _verified(resolve_builtins()) if isinstance(v, Skip)}
    assert skipped["kiro"] == Skip("no install recipe")
    assert skipped["crush"] == Skip("never verified: no pinned version")


def test_installs_run_in_parallel_but_never_two_into_one_prefix() -> None:
    import threading
    import time
    from types import SimpleNamespace

    from tackroom.cli.install import _in_parallel

    targets = [
        (SimpleNamespace(harness="a"), "1"),
        (SimpleNamespace(harness="a"), "1"),  # a second adapter of the same harness and version
        (SimpleNamespace(harness="a"), "2"),
        (SimpleNamespace(harness="b"), "1"),
    ]
    lock = threading.Lock()
    running: list[tuple[str, str]] = []
    overlaps: list[list[tuple[str, str]]] = []
    finished: list[int] = []

    def one(index: int) -> None:
        adapter, version = targets[index]
        with lock:
            running.append((adapter.harness, version))
            overlaps.append(list(running))
        time.sleep(0.2)
        with lock:
            running.remove((adapter.harness, version))
            finished.append(index)

    _in_parallel(targets, one, jobs=3)
    assert sorted(finished) == [0, 1, 2, 3]
    assert not any(seen.count(("a", "1")) > 1 for seen in overlaps)  # one prefix, one install at a time
    assert max(len(seen) for seen in overlaps) == 3  # the three prefixes were installed at once
    assert finished.index(0) < finished.index(1)
