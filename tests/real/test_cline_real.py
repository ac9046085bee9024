"""cline leaves nothing running: without ``CLINE_SESSION_BACKEND_MODE=local`` its first run starts a
detached hub daemon (``cline --cline-hub-daemon --cwd <workdir> ...``, reparented to init) that
outlives the CLI; the adapter sets the variable, and this proves no such process is left."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from realkit import RunFn, processes_in

from tackroom.adapters.resolve import Adapter

pytestmark = pytest.mark.real


def left_running(workdir: Path, home: str) -> list[str]:
    """Command lines of live processes started for this run: in its workdir, or naming it or its home."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if str(workdir) in argv or home in argv or int(entry.name) in processes_in(workdir):
            found.append(f"{entry.name}: {argv}")
    return found


@pytest.mark.parametrize("harness", ["cline"], indirect=True)
def test_a_cline_run_leaves_no_hub_daemon(harness: Adapter, run_harness: RunFn, workdir: Path) -> None:
    result = run_harness("say the magic words", mock_text="TACKROOM-NO-DAEMON")
    assert result.ok, result.error
    home = str(result.run_dir / "home")
    time.sleep(2)  # a detached daemon is started as the CLI ends
    assert left_running(workdir, home) == []
    assert not list((result.run_dir / "home" / ".cline" / "data" / "logs").glob("hub-daemon*"))
