"""Every capability each installable harness declares, proven against the real binary: one probe row
per harness and version, at every version its adapter names (``verified_with`` and each of
``previously_verified``).

The row comes from ``tackroom.probe`` exactly as ``tackroom probe NAME --sandbox bwrap --network
none`` makes it: four real runs against the mock, each in bubblewrap with nothing reachable but the
mock (issue 24; where bwrap cannot run and ``TACKROOM_TEST_REQUIRE_BWRAP`` is not set, on the host).
Its one test per harness version: the probe ran cleanly; every capability the adapter declares is
``true``; and ``docs/capabilities.json`` (the rows ``docs/capabilities.md`` is rendered from) claims
nothing for this harness and version that this probe did not prove. With ``--update-golden`` the probe's row
replaces the committed one and the Markdown is rendered again: that is how the committed matrix is
made, from real proofs only.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from realkit import REAL

from tackroom.adapters.resolve import Adapter, load_adapters, resolve_builtins
from tackroom.errors import InstallError
from tackroom.install import install
from tackroom.probe.doctor import adoctor, declared_capabilities
from tackroom.probe.matrix import adapter_lacks, latest_per_version, markdown
from tackroom.probe.rows import OUTCOME_NOTE, Row, row_from_json
from tackroom.probe.runner import installed, probe
from tackroom.sandboxes.bwrap import BwrapSandbox
from tackroom.state import CapabilityRows, StateDB

pytestmark = pytest.mark.real

SANDBOX = (
    "bwrap" if BwrapSandbox.available() is None or os.environ.get("TACKROOM_TEST_REQUIRE_BWRAP") else "none"
)
"""Where the probes run: in bwrap, offline, wherever it can run (CI requires it)."""
DOCS = Path(__file__).resolve().parents[2] / "docs"
ROWS_FILE = DOCS / "capabilities.json"


def versions(adapter: Adapter) -> list[str]:
    """The versions an adapter claims to work with: the verified one, then the previously verified."""
    listed = [adapter.verified_with, *adapter.effective.get("previously_verified", [])]
    return [str(v) for v in dict.fromkeys(listed) if v]


#: Known defects a probe shows, with why: the test expects them to fail (strictly: a fix must
#: remove the entry).
KNOWN: dict[tuple[str, str], str] = {}

CASES = [
    pytest.param(
        (name, version),
        id=f"{name}-{version}",
        marks=[pytest.mark.xfail(strict=True, reason=KNOWN[(name, version)])]
        if (name, version) in KNOWN
        else [],
    )
    for name in REAL
    for version in versions(resolve_builtins()[name])
]


@dataclass(frozen=True)
class Proven:
    """One harness version and its probe row."""

    adapter: Adapter
    version: str
    row: Row


_rows: dict[tuple[str, str], Proven] = {}


@pytest.fixture
def proven(
    request: pytest.FixtureRequest, harness_data: Path, tmp_path_factory: pytest.TempPathFactory
) -> Proven:
    """The probe row of the parameter's harness and version (probed once per session)."""
    name, version = request.param
    if (name, version) not in _rows:
        adapter = resolve_builtins()[name]
        environ = {**os.environ, "XDG_DATA_HOME": str(harness_data)}
        try:
            install(adapter, version, env=environ)
        except InstallError as exc:
            pytest.skip(f"{name} {version} cannot be installed on this machine: {exc}")
        located = installed(adapter, version, environ)
        assert located is not None
        scratch = tmp_path_factory.mktemp(f"probe-{name}")
        row = probe(
            adapter,
            executable=located,
            environ=environ,
            scratch=scratch,
            timeout_s=120,
            sandbox=SANDBOX,
            network="none" if SANDBOX == "bwrap" else "host",
        )
        _rows[(name, version)] = Proven(adapter, version, row)
        if request.config.getoption("--update-golden"):
            _record(row)
    return _rows[(name, version)]


@pytest.mark.parametrize("proven", CASES, indirect=True)
def test_the_probe_proves_what_is_declared_and_committed(proven: Proven) -> None:
    """One test per harness version, so its probe runs once and on one worker (three tests of one
    probe were split across the workers, which then probed the same harness twice)."""
    adapter, row = proven.adapter, proven.row
    assert row.outcome == "ok", row.notes.get(OUTCOME_NOTE)
    assert row.harness_version == proven.version
    missing = {
        c: row.notes.get(c, "absent")
        for c in declared_capabilities(adapter.at(proven.version))
        if row.supports.get(c) is not True
    }
    assert not missing, f"{adapter.name} {row.harness_version}: {json.dumps(missing, indent=1)}"
    committed = {(r.adapter, r.harness_version): r for r in committed_rows()}
    ours = committed.get((row.adapter, row.harness_version))
    assert ours is not None, (
        f"{ROWS_FILE} has no row for {row.adapter} {row.harness_version}: run with --update-golden"
    )
    overclaimed = {c: v for c, v in ours.supports.items() if v is True and row.supports.get(c) is not True}
    assert not overclaimed, f"{ROWS_FILE} claims {sorted(overclaimed)}; this probe: {row.to_json()}"


def test_a_wrong_rules_path_makes_doctor_say_what_to_change(harness_data: Path, tmp_path: Path) -> None:
    if "claude-code" not in REAL:
        pytest.skip("claude-code is not installable here")
    config = tmp_path / "config"
    (config / "adapters.d").mkdir(parents=True)
    override = config / "adapters.d" / "10-rules.toml"
    # A path claude-code does not read: the rules are written, and never reach the model.
    override.write_text('[adapter.claude-code.capabilities.rules]\npath = "~/.claude/RULES-NOT-READ.md"\n')
    adapter = load_adapters(config=config)["claude-code"]
    environ = {**os.environ, "XDG_DATA_HOME": str(harness_data)}
    try:
        install(adapter, env=environ)
    except InstallError as exc:
        pytest.skip(f"claude-code cannot be installed on this machine: {exc}")
    store = CapabilityRows(StateDB(tmp_path / "state.db"))
    report = asyncio.run(
        adoctor(adapter, store, environ=environ, prove=True, capabilities=["rules.read"], workdir=tmp_path)
    )
    assert not report.ok
    [check] = [c for c in report.checks if c.name == "rules.read"]
    assert check.status == "fail" and "rules.read is false" in check.message
    assert f"capabilities.rules.path = '~/.claude/RULES-NOT-READ.md' is set in {override}:2" in check.fix
    assert "(the built-in says '${CLAUDE_CONFIG_DIR:-~/.claude}/CLAUDE.md')" in check.fix


def committed_rows() -> list[Row]:
    """The rows ``docs/capabilities.json`` holds, parsed strictly."""
    if not ROWS_FILE.exists():
        return []
    return [row_from_json(data) for data in json.loads(ROWS_FILE.read_text(encoding="utf-8"))]


def _record(row: Row) -> None:
    """Replace this harness version's committed row with ``row``; render the Markdown again."""
    rows = [
        r for r in committed_rows() if (r.adapter, r.harness_version) != (row.adapter, row.harness_version)
    ]
    rows = latest_per_version([*rows, row])
    ROWS_FILE.write_text(json.dumps([r.to_json() for r in rows], indent=1) + "\n", encoding="utf-8")
    (DOCS / "capabilities.md").write_text(markdown(rows, adapter_lacks(resolve_builtins())), encoding="utf-8")
