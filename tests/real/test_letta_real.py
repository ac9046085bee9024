"""Letta Code's hooks beyond what the probe proves, against the real binary and the mock.

The probe proves ``before-tool`` and ``after-tool`` firing, a refuse and an inject
(``docs/capabilities.md``); these tests prove what the adapter claims besides: a failed tool
call fires ``after-tool-failure`` (PostToolUseFailure) and ``after-tool`` both, an inject there
reaches the model, and a hook's timeout is written in the milliseconds letta reads it in (a
hook given seconds that took them as milliseconds would be killed at once).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from realkit import RunFn

from tackroom.adapters.resolve import Adapter
from tackroom.mock import Script, Turn
from tackroom.profile.model import Hook, Profile

pytestmark = [pytest.mark.real, pytest.mark.parametrize("harness", ["letta"], indirect=True)]
CONTEXT = "LETTA_FAILURE_CONTEXT_7c1"


def turn_texts(log: Path) -> list[str]:
    """The conversation requests the mock received, each as its JSON text."""
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    found = [json.loads(line) for line in lines if line.strip()]
    return [json.dumps(r.get("body"), ensure_ascii=False) for r in found if r.get("turn") is not None]


def test_a_failed_call_fires_its_hooks_and_their_inject_reaches_the_model(
    harness: Adapter, run_harness: RunFn, workdir: Path, tmp_path: Path
) -> None:
    fired = tmp_path / "fired.txt"
    hooks = (
        Hook("failed", "after-tool-failure", "command", command=f"echo after-tool-failure >> {fired}"),
        # 2 s of work under a 10 s timeout: written as 10 (ms), letta would kill it.
        Hook("slow", "after-tool", "command", command=f"sleep 2; echo after-tool >> {fired}", timeout=10.0),
        Hook("context", "after-tool-failure", "inject", text=CONTEXT),
    )
    script = Script([Turn.call("read_file", {"file_path": str(workdir / "missing.txt")}), Turn.reply("DONE")])
    log = tmp_path / "mock.jsonl"
    result = run_harness(
        "read it", mock=script, mock_log=log, profile=Profile(hooks=hooks), options={"auto_accept": True}
    )
    assert result.ok, result.error
    assert not result.dropped, result.dropped
    seen = fired.read_text().split() if fired.exists() else []
    assert sorted(seen) == ["after-tool", "after-tool-failure"], seen
    first, second = turn_texts(log)
    assert CONTEXT not in first
    assert CONTEXT in second
