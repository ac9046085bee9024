"""A transcript whose file name is not UTF-8 (one byte a file system allows and no text encoding
reads) is skipped and said, never a traceback for every later ``trace`` and ``usage`` command."""

from __future__ import annotations

import json
import os
from pathlib import Path

from clikit import run_cli
from tackroom.trace.api import Where, scan
from tracekit import CLAUDE_LINE

LINE = CLAUDE_LINE


def test_a_transcript_name_that_is_not_utf8_is_skipped_and_said(tmp_path: Path) -> None:
    home = tmp_path / "home"
    projects = home / ".claude" / "projects" / "-work"
    projects.mkdir(parents=True)
    (projects / "good.jsonl").write_text(json.dumps(LINE) + "\n", encoding="utf-8")
    bad = projects / os.fsdecode(b"sess\xff\xfe.jsonl")  # the bytes, as the file system gives them
    bad.write_bytes(json.dumps({**LINE, "sessionId": "s-2"}).encode() + b"\n")
    env = {"HOME": str(home), "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "c")}
    for args in (("usage", "daily", "--json"), ("trace", "list", "--json"), ("usage", "daily")):
        done = run_cli(*args, env=env)
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
    sessions = json.loads(run_cli("trace", "list", "--json", env=env).stdout)
    assert [s["session_id"] for s in sessions] == ["s-1"]  # the readable one is read
    report = scan(where=Where.of(env={**os.environ, **env}, home=home))
    said = [str(issue) for issue in report.issues]
    assert any("sess\\xff\\xfe.jsonl: its name is not UTF-8: skipped" in line for line in said), said
