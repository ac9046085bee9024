"""The sandbox seam: sandboxes register and are checked like families; bwrap runs a harness with the
host read-only, the user's homes hidden, and, offline, nothing reachable but its model endpoint.

The bwrap tests run the real ``bwrap`` (Debian's bubblewrap, which ``scripts/test`` installs) around
the scripted fake harness, a real subprocess; they skip, saying why, only where bwrap cannot run and
``TACKROOM_TEST_REQUIRE_BWRAP`` is not set (CI sets it, so there a missing bwrap fails).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prockit import children, processes_in
from runkit import RECORDED, fake_adapter
from tackroom.errors import FamilyError, RunSpecError, SandboxError
from tackroom.families.base import Family
from tackroom.mock import Script
from tackroom.run.runner import run
from tackroom.run.sandbox import (
    LocalSandbox,
    Places,
    Sandbox,
    check_capabilities,
    check_sandbox,
    get_sandbox,
    sandbox_names,
)
from tackroom.run.spec import RunSpec
from tackroom.sandboxes.bwrap import BwrapSandbox

_UNAVAILABLE = BwrapSandbox.available()
needs_bwrap = pytest.mark.skipif(
    _UNAVAILABLE is not None and not os.environ.get("TACKROOM_TEST_REQUIRE_BWRAP"),
    reason=f"bwrap cannot run here: {_UNAVAILABLE}",
)


def test_the_sandboxes_register_through_their_entry_point_group() -> None:
    assert sandbox_names() == ["bwrap", "docker", "none", "podman"]
    assert get_sandbox("none") is LocalSandbox and get_sandbox("bwrap") is BwrapSandbox
    with pytest.raises(SandboxError, match="no sandbox 'jail' is registered"):
        get_sandbox("jail")


def test_a_sandbox_missing_a_primitive_is_a_named_error() -> None:
    class Half(Sandbox):
        name = "half"

        def stage(self, files: Any, home: Any) -> None: ...

        def visible_url(self, url: str) -> str:
            return url

    with pytest.raises(SandboxError, match="lacks the primitive\\(s\\) read_back, spawn, stop, visible_path"):
        check_sandbox("half", "plugin:Half", Half)
    with pytest.raises(SandboxError, match="is not a tackroom Sandbox class"):
        check_sandbox("thing", "plugin:thing", object())

    class Vague(LocalSandbox):
        name = "vague"
        isolates_network = "maybe"  # type: ignore[assignment]

    with pytest.raises(SandboxError, match="must say isolates_network as true or false"):
        check_sandbox("vague", "plugin:Vague", Vague)
    with pytest.raises(SandboxError, match="loads a sandbox named 'none'"):
        check_sandbox("other", "plugin:LocalSandbox", LocalSandbox)


def test_a_family_without_a_parser_cannot_be_made() -> None:
    class Mute(Family):
        name = "mute"

    with pytest.raises(TypeError, match="parser"):
        Mute()  # type: ignore[abstract]
    assert issubclass(FamilyError, Exception)  # get_family turns that TypeError into a FamilyError


def test_a_spec_names_a_registered_sandbox_and_a_network(tmp_path: Path) -> None:
    with pytest.raises(RunSpecError, match="no sandbox 'jail'; sandboxes: bwrap, docker, none, podman"):
        RunSpec(prompt="p", workdir=tmp_path, sandbox="jail")
    with pytest.raises(RunSpecError, match="network must be 'host' or 'none'"):
        RunSpec(prompt="p", workdir=tmp_path, network="lan")  # type: ignore[arg-type]
    with pytest.raises(RunSpecError, match="hides the real home"):
        RunSpec(prompt="p", workdir=tmp_path, sandbox="bwrap", home="real")
    spec = RunSpec(prompt="p", workdir=tmp_path, sandbox="bwrap", network="none")
    assert RunSpec.from_json(spec.to_json()) == spec


def test_no_network_on_the_host_is_refused_before_anything_starts(config_dir: Path, tmp_path: Path) -> None:
    fake_adapter(config_dir, "--replay", str(RECORDED))
    with pytest.raises(RunSpecError, match="sandbox 'none' cannot keep the harness off the network"):
        run("fake", "p", workdir=tmp_path, network="none", runs_dir=tmp_path / "runs")
    assert not (tmp_path / "runs").exists()


def test_the_bwrap_command_line(tmp_path: Path) -> None:
    run_dir, workdir, home = tmp_path / "run", tmp_path / "work", tmp_path / "real-home"
    for path in (run_dir, workdir, home):
        path.mkdir()
    places = Places(run_dir, workdir, run_dir / "home", real_home=home)
    online = BwrapSandbox(places).argv(["claude", "-p", "hi"], workdir, {"PATH": "/usr/bin"})
    assert online[:6] == ["bwrap", "--die-with-parent", "--unshare-pid", "--ro-bind", "/", "/"]
    assert "--unshare-net" not in online and online[-4:] == ["--", "claude", "-p", "hi"]
    assert "npm_config_offline" not in online  # with the network, npm fetches as it would
    joined = " ".join(online)
    # The homes hidden first, then the run's places bound back writable, in that order.
    assert joined.index(f"--tmpfs {home}") < joined.index(f"--bind {run_dir} {run_dir}")
    assert f"--bind {workdir} {workdir}" in joined and f"--chdir {workdir}" in joined
    # A PATH entry under a hidden home is bound back read-only: a tool manager's tree, but of
    # ~/.local only its bin (its share/ holds the user's data).
    tools = home / ".pyenv" / "shims"
    local_bin = home / ".local" / "bin"
    for path in (tools, local_bin, home / ".local" / "share" / "tackroom"):
        path.mkdir(parents=True)
    bound = BwrapSandbox(places).argv(["claude"], workdir, {"PATH": f"{tools}:{local_bin}:/usr/bin"})
    ro = {bound[i + 1] for i, item in enumerate(bound) if item == "--ro-bind"}
    assert str(home / ".pyenv") in ro and str(local_bin) in ro
    assert str(home / ".local") not in ro and str(home) not in ro
    offline = BwrapSandbox(places, "none")
    assert offline.visible_url("http://127.0.0.1:4321/v1") == "http://127.0.0.1:4321/v1"
    with pytest.raises(RunSpecError, match="reaches only a model endpoint on this host's loopback"):
        offline.visible_url("https://api.example.com")
    argv = offline.argv(["claude"], workdir, {})
    try:
        assert "--unshare-net" in argv and "--tmpfs" in argv and "/run" in argv
        # npm is told there is no network, or it waits out its retries (opencode acp did, and hung)
        assert " --setenv npm_config_offline true " in " ".join(argv)
        relay = argv.index(str(run_dir / "sandbox" / "relay.py"))
        assert argv[relay + 1 : relay + 3] == ["4321=/run/tackroom-model/4321.sock", "--"]
        sockets = Path(argv[argv.index("/run/tackroom-model") - 1])
        assert sockets.is_dir() and len(str(sockets / "4321.sock")) < 108
    finally:
        offline.stop()
    assert not sockets.exists()


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP port on the host's loopback that nothing in an offline sandbox may reach."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                conn.close()
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    server.close()


def _recorded(directory: Path) -> str:
    """The recorded stream, copied where a sandboxed fake can read it: a checkout under /tmp is not
    there inside (its /tmp is its own), while the workdir is bound in."""
    copy = directory / "recorded-stream.jsonl"
    copy.write_bytes(RECORDED.read_bytes())
    return str(copy)


def _attempts(run_dir: Path) -> dict[str, dict[str, Any]]:
    lines = (run_dir / "stderr.log").read_text().splitlines()
    found = [json.loads(line) for line in lines if line.startswith('{"try"')]
    return {f"{a['try']}:{a['target']}": a for a in found}


@needs_bwrap
def test_binds_make_a_fresh_root_and_the_harness_works_where_the_task_says(tmp_path: Path) -> None:
    run_dir, app, logs = tmp_path / "run", tmp_path / "root" / "app", tmp_path / "root" / "logs"
    places = Places(run_dir, app, None, binds=(("/app", app), ("/logs", logs)))
    sandbox = BwrapSandbox(places, "none")
    argv = sandbox.argv(["claude"], app, {"PATH": "/usr/bin"})
    assert argv[:5] == ["bwrap", "--die-with-parent", "--unshare-pid", "--tmpfs", "/"]
    joined = " ".join(argv)
    # the host's system read-only under the fresh root, never its homes, its /tmp or (offline) its /run
    assert "--ro-bind /usr /usr" in joined and "--ro-bind /etc /etc" in joined
    assert "--ro-bind /home /home" not in joined and "--ro-bind /tmp /tmp" not in joined
    assert "--ro-bind /run /run" not in joined and "--ro-bind / /" not in joined
    if Path("/bin").is_symlink():  # a merged /usr: the links are made again
        assert f"--symlink {Path('/bin').readlink()} /bin" in joined
    assert f"--bind {app} /app" in joined and f"--bind {logs} /logs" in joined
    assert argv[argv.index("--chdir") + 1] == "/app"  # the harness finds itself in /app
    assert sandbox.visible_path(app / "src" / "x.py") == Path("/app/src/x.py")
    assert sandbox.visible_path(run_dir / "home") == run_dir / "home"
    with pytest.raises(
        RunSpecError, match=r"cannot show a directory at another path.*choose one that can: bwrap"
    ):
        check_capabilities(LocalSandbox, "host", binds=True)


def test_a_harness_in_bwrap_runs_and_keeps_to_its_places(config_dir: Path, tmp_path: Path) -> None:
    real_home = Path(os.environ["HOME"])
    (real_home / ".ssh").mkdir(exist_ok=True)
    (real_home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
    outside = tmp_path / "outside.txt"  # under /tmp, which is the sandbox's own
    inside = tmp_path / "work" / "inside.txt"
    inside.parent.mkdir()
    refused = [f"read:{real_home / '.ssh' / 'id_ed25519'}", "write:/usr/tackroom-escape"]
    # The checkout: read-only where it is on the host's disk, the sandbox's own /tmp where it is
    # under /tmp (as a CI checkout may be). Either way the host's file is never written.
    checkout = Path(__file__).parent / "escape.txt"
    attempts = [f"write:{outside}", f"write:{inside}", f"write:{checkout}", *refused]
    args = [arg for a in attempts for arg in ("--try", a)]
    fake_adapter(config_dir, *args, "--replay", _recorded(inside.parent))
    result = run("fake", "hello", workdir=inside.parent, sandbox="bwrap", runs_dir=tmp_path / "runs")
    assert result.ok and result.final_text == "TACKROOM-TEXT-claude-code"
    tried = _attempts(result.run_dir)
    assert tried[f"write:{inside}"]["ok"] and inside.read_text().startswith("written")
    for attempt in refused:
        assert not tried[attempt]["ok"], tried[attempt]
    assert tried[f"write:{outside}"]["ok"] and not outside.exists()  # it wrote into its private /tmp
    assert not checkout.exists()


@needs_bwrap
def test_offline_bwrap_reaches_the_mock_and_nothing_else(
    config_dir: Path, tmp_path: Path, listener: int
) -> None:
    from tackroom.mock import MockServer

    with MockServer(Script.text("hi")) as mock:
        endpoint = f"http:{mock.base_url}/v1/models"
        other = f"connect:127.0.0.1:{listener}"
        args = ["--try", endpoint, "--try", other, "--try", "connect:1.1.1.1:443"]
        fake_adapter(config_dir, *args, "--replay", _recorded(tmp_path))
        result = run(
            "fake",
            "hello",
            workdir=tmp_path,
            mock=mock,
            sandbox="bwrap",
            network="none",
            runs_dir=tmp_path / "runs",
        )
    assert result.ok, result.error
    tried = _attempts(result.run_dir)
    assert tried[endpoint]["ok"], tried
    assert not tried[other]["ok"] and not tried["connect:1.1.1.1:443"]["ok"]
    # Reached on the host the same way, the other port answers: the sandbox is what refused it.
    socket.create_connection(("127.0.0.1", listener), timeout=3).close()


@needs_bwrap
def test_a_sandbox_that_dies_mid_run_is_a_failed_result_with_its_reason(
    config_dir: Path, tmp_path: Path
) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    pids = workdir / "pids"
    started = '{"type": "system", "subtype": "init", "session_id": "s-1"}'
    fake_adapter(
        config_dir, "--announce", "--pid-file", str(pids), "--emit", started, "--hang", "--lifetime", "60"
    )

    def kill_the_sandbox() -> None:
        for _ in range(300):
            if pids.exists() and (outer := children(lambda argv: argv[0] == b"bwrap")):
                os.kill(outer[0], signal.SIGKILL)
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_the_sandbox)
    killer.start()
    began = time.monotonic()
    result = run("fake", "hello", workdir=workdir, sandbox="bwrap", timeout_s=60, runs_dir=tmp_path / "runs")
    killer.join()
    assert time.monotonic() - began < 30
    assert not result.ok and result.exit_code == -signal.SIGKILL
    assert result.error is not None
    assert result.error.startswith("the bwrap sandbox died mid-run (bwrap was killed by SIGKILL)"), (
        result.error
    )
    assert result.session_id == "s-1"  # what the harness said before is kept
    assert json.loads((result.run_dir / "result.json").read_text())["error"] == result.error
    assert processes_in(workdir) == []


def _available_with(path: str) -> str:
    code = "from tackroom.sandboxes.bwrap import BwrapSandbox; print(BwrapSandbox.available())"
    done = subprocess.run(
        [sys.executable, "-c", code], env={"PATH": path}, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_a_bwrap_that_cannot_run_says_why_and_the_fix(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no bwrap on PATH: install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap)" in (
        _available_with(str(empty))
    )
    # A bwrap the kernel gives no user namespaces: its own words, then the setting to change.
    jailed = tmp_path / "bin"
    jailed.mkdir()
    (jailed / "bwrap").write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace, likely because the kernel does "
        "not allow non-privileged user namespaces.' >&2\nexit 1\n"
    )
    (jailed / "bwrap").chmod(0o755)
    said = _available_with(f"{jailed}:/usr/bin:/bin")
    assert "bwrap cannot create namespaces here (bwrap: No permissions to create new namespace" in said
    assert "kernel.unprivileged_userns_clone=1" in said and "user.max_user_namespaces" in said


def test_a_project_file_asks_for_a_sandbox_and_a_flag_wins(
    config_dir: Path, tmp_path: Path, listener: int
) -> None:
    why = BwrapSandbox.available()
    if why is not None and not os.environ.get("TACKROOM_TEST_REQUIRE_BWRAP"):
        pytest.skip(f"bwrap cannot run here: {why}")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "tackroom.toml").write_text('sandbox = "bwrap"\nnetwork = "none"\n')
    other = f"connect:127.0.0.1:{listener}"
    fake_adapter(config_dir, "--try", other, "--replay", _recorded(repo))
    boxed = run("fake", "hello", workdir=repo, runs_dir=tmp_path / "runs")
    assert boxed.ok and not _attempts(boxed.run_dir)[other]["ok"]
    # A flag (here: the host's network) wins over the project file's choice.
    online = run("fake", "hello", workdir=repo, network="host", runs_dir=tmp_path / "runs")
    assert online.ok and _attempts(online.run_dir)[other]["ok"]


def test_a_project_file_with_an_unknown_sandbox_names_the_line(config_dir: Path, tmp_path: Path) -> None:
    from tackroom.errors import ConfigError

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "tackroom.toml").write_text('harness = "fake"\nsandbox = "jail"\nnetwork = "lan"\n')
    fake_adapter(config_dir, "--replay", str(RECORDED))
    with pytest.raises(ConfigError) as caught:
        run(None, "hello", workdir=repo, runs_dir=tmp_path / "runs")
    said = str(caught.value)
    assert "tackroom.toml:2" in said and "must name a sandbox: bwrap, docker, none, podman" in said
    assert "tackroom.toml:3" in said and 'must be "host" or "none"' in said
    assert not (tmp_path / "runs").exists()


GOLDEN = Path(__file__).parent / "golden" / "sandboxes" / "docker.json"


@pytest.mark.parametrize("engine", ["docker", "podman"])
def test_container_command_lines_match_the_recorded_ones(engine: str) -> None:
    """No engine can pull an image here: the argv is held to recorded command lines instead."""
    recorded = json.loads(GOLDEN.read_text())

    def filled(argv: list[str]) -> list[str]:
        ids = {"{engine}": engine, "{uid}": str(os.getuid()), "{gid}": str(os.getgid())}
        out = []
        for item in argv:
            for key, value in ids.items():
                item = item.replace(key, value)
            out.append(item)
        return out

    places = Places(Path(recorded["places"]["run_dir"]), Path(recorded["places"]["workdir"]), None)
    sandbox = get_sandbox(engine)(places, "host", recorded["image"])
    assert sandbox.create_argv() == filled(recorded["create"])  # type: ignore[attr-defined]
    workdir = Path(recorded["places"]["workdir"])
    assert sandbox.exec_argv(recorded["argv"], workdir, recorded["env"]) == filled(recorded["exec"])  # type: ignore[attr-defined]
    assert sandbox.remove_argv() == filled(recorded["remove"])  # type: ignore[attr-defined]
    for url, seen in recorded["urls"].items():
        assert sandbox.visible_url(url) == seen
    # The values travel in the client's environment, never in a command line (ps shows those).
    assert "sk-tackroom-mock" not in " ".join(sandbox.exec_argv(recorded["argv"], workdir, recorded["env"]))  # type: ignore[attr-defined]
    # An evaluation cell's paths: the cell's directories mounted where the task expects them.
    app = workdir / "root" / "app"
    cell = get_sandbox(engine)(Places(places.run_dir, app, None, binds=(("/app", app),)), "host", "img")
    created = cell.create_argv()  # type: ignore[attr-defined]
    assert created[created.index(f"{app}:/app") - 1] == "--volume"
    executed = cell.exec_argv(["claude"], app, {})  # type: ignore[attr-defined]
    assert executed[executed.index("--workdir") + 1] == "/app"


def test_a_container_sandbox_asks_for_what_it_needs_before_anything_starts(
    config_dir: Path, tmp_path: Path
) -> None:
    fake_adapter(config_dir, "--replay", str(RECORDED))
    runs = tmp_path / "runs"
    with pytest.raises(RunSpecError, match="a docker sandbox runs the harness in an image: name one"):
        run("fake", "p", workdir=tmp_path, sandbox="docker", runs_dir=runs)
    with pytest.raises(RunSpecError, match="sandbox 'bwrap' runs no image"):
        run("fake", "p", workdir=tmp_path, sandbox="bwrap", image="x", runs_dir=runs)
    with pytest.raises(RunSpecError, match="cannot keep the harness off the network"):
        run("fake", "p", workdir=tmp_path, sandbox="podman", image="x", network="none", runs_dir=runs)
    with pytest.raises(RunSpecError, match="a gateway holding your key must not listen beyond it"):
        run("fake", "p", workdir=tmp_path, sandbox="docker", image="x", capture=True, runs_dir=runs)
    assert not runs.exists()


def test_a_missing_container_engine_names_what_to_install(config_dir: Path, tmp_path: Path) -> None:
    from tackroom.sandboxes.docker import DockerSandbox, PodmanSandbox

    code = (
        "from tackroom.sandboxes.docker import DockerSandbox, PodmanSandbox; "
        "print(DockerSandbox.available()); print(PodmanSandbox.available())"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env={"PATH": str(tmp_path)}, capture_output=True, text=True, check=True
    )
    docker, podman = done.stdout.strip().splitlines()
    assert docker == f"no docker on PATH: install {DockerSandbox.requires}"
    assert podman == f"no podman on PATH: install {PodmanSandbox.requires}"
