"""An adapter's external probe: an executable that prints one JSON object, run like a harness.

``[adapter.X] probe = ["~/bin/x-probe", "--all"]`` replaces tackroom's own
probe runs for that adapter. The executable gets its own environment (the
base allowlist's ``PATH`` and locale, a scratch ``HOME`` and ``TMPDIR``, and
``TACKROOM_PROBE_*`` naming what to probe), its own process group, a timeout
(SIGTERM, then SIGKILL to the whole group) and a bounded stdout. It must print
one JSON object holding only ``supports`` and ``notes``, and exit 0. Garbage,
another key, a crash or a hang is a :class:`~tackroom.probe.findings.Trouble`:
the row is ``failed`` or ``timeout`` with a note, and no observation of that
run is kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tackroom.errors import RowError, RunError
from tackroom.probe.findings import Findings, Trouble
from tackroom.probe.rows import MAX_ROW_BYTES, parse_probe_output
from tackroom.run.process import run_process

_PASSED = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")


def probe_env(
    environ: Mapping[str, str],
    scratch: Path,
    *,
    adapter: str,
    executable: Path,
    version: str | None,
    wanted: frozenset[str],
) -> dict[str, str]:
    """The whole environment an external probe gets: nothing of the host beyond ``_PASSED``."""
    env = {name: environ[name] for name in _PASSED if name in environ}
    env |= {
        "HOME": str(scratch),
        "TMPDIR": str(scratch),
        "TACKROOM_PROBE_ADAPTER": adapter,
        "TACKROOM_PROBE_EXECUTABLE": str(executable),
        "TACKROOM_PROBE_VERSION": version or "",
        "TACKROOM_PROBE_CAPABILITIES": " ".join(sorted(wanted)),
    }
    return env


def probe_argv(argv: list[str], environ: Mapping[str, str]) -> list[str]:
    """The probe's argv, a leading ``~`` of its executable meaning the caller's home."""
    first = argv[0]
    if (first == "~" or first.startswith("~/")) and environ.get("HOME"):
        first = environ["HOME"] + first[1:]
    return [first, *argv[1:]]


async def run_external(argv: list[str], env: Mapping[str, str], cwd: Path, timeout_s: float) -> Findings:
    """Run the probe; its observations, or the trouble that cost them."""
    findings = Findings()
    try:
        done = await run_process(argv, env=env, cwd=cwd, timeout_s=timeout_s, output_cap=MAX_ROW_BYTES)
    except RunError as exc:
        findings.troubles.append(Trouble("failed", f"the external probe could not start: {exc}"))
        return findings
    stderr = done.stderr_tail.decode("utf-8", errors="replace").strip()[-300:]
    if done.timed_out:
        findings.troubles.append(Trouble("timeout", f"the external probe {argv[0]} ran past {timeout_s:g}s"))
    elif done.exit_code != 0:
        findings.troubles.append(
            Trouble(
                "failed", f"the external probe {argv[0]} exited {done.exit_code}: {stderr or 'no stderr'}"
            )
        )
    elif done.stdout_truncated:
        findings.troubles.append(
            Trouble("failed", f"the external probe printed more than {MAX_ROW_BYTES} bytes")
        )
    else:
        try:
            supports, notes = parse_probe_output(done.stdout_tail)
        except RowError as exc:
            findings.troubles.append(Trouble("failed", f"the external probe's output was refused: {exc}"))
            return findings
        findings.supports, findings.notes = supports, notes
    return findings
