"""A FIFO (or any file that is not a regular file) where a harness keeps its logs: never opened as a
file, skipped and said by every reader, and no hang in ``usage``, ``trace`` or a run past its timeout.

A plain ``open`` of a FIFO waits for a writer that never comes: one named like a subagent's
``agent-<id>.meta.json`` hung ``usage``, ``trace`` and a run's trace attribution for good.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from clikit import run_cli
from runkit import RECORDED, script_adapter
from tackroom.adapters.resolve import load_adapters
from tackroom.families import get_family
from tackroom.paths import glob_regex
from tackroom.run.runner import run
from tackroom.trace.model import Cursor
from tracekit import CLAUDE_LINE

pytestmark = pytest.mark.timeout(60)

GOLDEN = Path(__file__).parent.parent / "golden"
CASES = sorted(p.parent for p in GOLDEN.glob("*/transcripts/*/meta.json"))


def _glob(case: Path) -> str:
    spec = load_adapters()[json.loads((case / "meta.json").read_text())["adapter"]].spec.transcripts
    assert spec is not None
    return spec.glob


def _side_files(case: Path) -> list[Path]:
    """The files beside the case's logs that are not logs (sidecars, metadata its reader opens)."""
    root, pattern = case / "files", glob_regex(_glob(case))
    return [
        p for p in root.rglob("*") if p.is_file() and not pattern.fullmatch(p.relative_to(root).as_posix())
    ]


WITH_SIDE_FILES = [case for case in CASES if _side_files(case)]

LINE = CLAUDE_LINE


@pytest.mark.parametrize(
    "case", WITH_SIDE_FILES, ids=[f"{c.parent.parent.name}/{c.name}" for c in WITH_SIDE_FILES]
)
def test_every_file_beside_a_log_made_a_fifo_is_read_around_not_waited_on(case: Path, tmp_path: Path) -> None:
    meta = json.loads((case / "meta.json").read_text())
    adapter = load_adapters()[meta["adapter"]]
    reader = get_family(adapter.family).transcripts()
    assert reader is not None and adapter.spec.transcripts is not None
    pattern = glob_regex(adapter.spec.transcripts.glob)
    root = tmp_path / "files"
    shutil.copytree(case / "files", root)
    logs, fifos = [], []
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        if pattern.fullmatch(path.relative_to(root).as_posix()):
            logs.append(path)
        else:
            path.unlink()
            os.mkfifo(path)
            fifos.append(path)
    assert logs and fifos
    for log in logs:
        items = list(reader.read(log, Cursor()))  # the test's timeout is the hang
        assert items, log


def test_a_fifo_named_like_a_log_or_its_metadata_is_skipped_and_said_by_usage_and_trace(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-work"
    subagents = project / "s-1" / "subagents"
    subagents.mkdir(parents=True)
    (project / "s-1.jsonl").write_text(json.dumps(LINE) + "\n", encoding="utf-8")
    (subagents / "agent-a1.jsonl").write_text(
        json.dumps(
            {**LINE, "isSidechain": True, "agentId": "a1", "message": {**LINE["message"], "id": "m-2"}}
        )
        + "\n",
        encoding="utf-8",
    )
    os.mkfifo(subagents / "agent-a1.meta.json")
    os.mkfifo(project / "s-2.jsonl")
    env = {"HOME": str(home), "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "c")}

    for repeat in (1, 2):  # the second is answered from the index, and says the same
        done = run_cli("usage", "daily", "--json", env=env)
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["totals"]["input"] == 20, repeat
        assert report["skipped"] == [
            {"path": str(project / "s-2.jsonl"), "why": "a FIFO, not a regular file: skipped"}
        ], repeat
    human = run_cli("usage", "daily", env=env)
    assert human.returncode == 0 and "1 file(s) under the log roots were not read" in human.stderr
    assert "s-2.jsonl: a FIFO, not a regular file: skipped" in human.stderr
    listed = run_cli("trace", "list", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    assert {s["session_id"] for s in json.loads(listed.stdout)} >= {"s-1"}
    assert "s-2.jsonl: a FIFO" in listed.stderr
    shown = run_cli("trace", "show", "s-1", env=env)
    assert shown.returncode == 0 and "Traceback" not in shown.stderr


def test_a_run_whose_harness_leaves_fifos_in_its_home_ends_within_its_timeout(
    config_dir: Path, tmp_path: Path
) -> None:
    # The harness makes its transcript directory hold FIFOs named like its logs, then answers as
    # Claude Code does: the run's trace attribution reads that home after it.
    body = (
        'p="${CLAUDE_CONFIG_DIR:-$HOME/.claude}/projects/-work"\n'
        'mkdir -p "$p/s-1/subagents"\n'
        'mkfifo "$p/s-9.jsonl" "$p/s-1/subagents/agent-a1.meta.json"\n'
        f"printf '%s\\n' '{json.dumps(LINE)}' > \"$p/s-1.jsonl\"\n"
        f"printf '%s\\n' '{json.dumps(LINE)}' > \"$p/s-1/subagents/agent-a1.jsonl\"\n"
        f"exec cat '{RECORDED}'\n"
    )
    adapter = script_adapter(config_dir, "fifo", tmp_path / "fifo-harness", body)
    workdir = tmp_path / "work"
    workdir.mkdir()
    started = time.monotonic()
    result = run(
        adapter,
        "p",
        workdir=workdir,
        runs_dir=tmp_path / "runs",
        timeout_s=20,
    )
    assert time.monotonic() - started < 20
    assert result.ok, result.error
    saved = json.loads((result.run_dir / "result.json").read_text())
    said = " ".join(str(issue) for issue in saved["trace"]["issues"])
    assert "s-9.jsonl" in said and "a FIFO" in said, saved["trace"]
