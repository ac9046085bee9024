"""Drift: the newest release is found, installed beside the verified one, probed and compared.

The registry and the installer are a scripted ``npm`` on PATH (a real
subprocess); what it installs is a wrapper around the fake agent (a real
subprocess talking to the real mock), so each release behaves as the test
scripts it: the same as the verified one, or ignoring its profile.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from clikit import run_cli
from probekit import AGENT
from runkit import SLOTS
from tackroom.adapters.resolve import Adapter, load_adapters
from tackroom.probe.drift import Drift, adrift, compare
from tackroom.probe.rows import Row
from tackroom.state import CapabilityRows, StateDB

VERIFIED, NEWEST = "2.1.197", "2.1.400"
WANTED = ("rules.read", "usage.exact")


def npm(bin_dir: Path) -> None:
    """A scripted npm: `view` answers bin/newest; `install` makes a wrapper that runs the fake agent
    with the flags in bin/flags-<version>; bin/fail-install or bin/offline make it fail as npm does."""
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "npm").write_text(
        textwrap.dedent(
            f"""\
            #!/bin/sh
            here=$(dirname "$0")
            if [ "$1" = view ]; then
              [ -e "$here/offline" ] && {{ echo 'npm error code ENOTFOUND' >&2; exit 1; }}
              echo "\\"$(cat "$here/newest")\\""; exit 0
            fi
            [ "$1" = install ] || exit 9
            [ -e "$here/fail-install" ] && {{ echo 'npm error code ETARGET' >&2; exit 1; }}
            prefix=$3
            for last; do :; done
            version=${{last##*@}}
            mkdir -p "$prefix/node_modules/.bin"
            flags=$(cat "$here/flags-$version" 2>/dev/null)
            cat > "$prefix/node_modules/.bin/claude" <<EOF
            #!/bin/sh
            if [ "\\$1" = --version ]; then echo "$version (Claude Code)"; exit 0; fi
            exec {sys.executable} {AGENT} "\\$@" $flags
            EOF
            chmod +x "$prefix/node_modules/.bin/claude"
            """
        ),
        encoding="utf-8",
    )
    (bin_dir / "npm").chmod(0o755)


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The scripted npm, first on PATH for this test and the CLI processes it starts."""
    bin_dir = tmp_path / "bin"
    npm(bin_dir)
    (bin_dir / "newest").write_text(NEWEST)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return bin_dir


@pytest.fixture
def adapter(config_dir: Path) -> Adapter:
    """claude-code's data and install recipe, verified with 2.1.197, run the way the fake agent is."""
    table = (
        '[adapter.fake]\nextends = "claude-code"\npreviously_verified = []\n'
        f'verified_with = "{VERIFIED}"\none_shot = ["-p", "{{{{prompt}}}}", {SLOTS}]\n'
    )
    (config_dir / "adapters.d" / "fake.toml").write_text(table, encoding="utf-8")
    return load_adapters(config=config_dir)["fake"]


def check(adapter: Adapter, store: CapabilityRows, tmp_path: Path) -> list[Drift]:
    return asyncio.run(adrift([adapter], store, capabilities=WANTED, timeout_s=30, scratch=tmp_path))


@pytest.fixture
def store(tmp_path: Path) -> CapabilityRows:
    return CapabilityRows(StateDB(tmp_path / "state.db"))


def test_a_newest_release_that_loses_a_capability_is_a_regression(
    registry: Path, adapter: Adapter, store: CapabilityRows, tmp_path: Path
) -> None:
    (registry / f"flags-{NEWEST}").write_text("--ignore-profile")
    [drift] = check(adapter, store, tmp_path)
    assert (drift.status, drift.verified, drift.newest) == ("regressed", VERIFIED, NEWEST)
    assert [c.capability for c in drift.changes if c.lost] == ["rules.read"]
    # Both releases are installed side by side, and both rows are kept with their history.
    assert {r.harness_version for r in store.history("fake")} == {VERIFIED, NEWEST}
    assert drift.row is not None and drift.row.supports["usage.exact"] is True


def test_a_newest_release_that_proves_the_same_is_unchanged(
    registry: Path, adapter: Adapter, store: CapabilityRows, tmp_path: Path
) -> None:
    [drift] = check(adapter, store, tmp_path)
    assert (drift.status, drift.changes) == ("unchanged", ())
    # The verified release's row is taken from the store when there is one: probed once only.
    again = check(adapter, store, tmp_path)[0]
    assert again.status == "unchanged"
    assert [r.harness_version for r in store.history("fake")].count(VERIFIED) == 1


def test_when_the_verified_release_is_the_newest_nothing_is_installed(
    registry: Path, adapter: Adapter, store: CapabilityRows, tmp_path: Path
) -> None:
    (registry / "newest").write_text(VERIFIED)
    [drift] = check(adapter, store, tmp_path)
    assert drift.status == "current" and store.history() == []


@pytest.mark.parametrize(
    ("switch", "said"), [("offline", "could not be reached"), ("fail-install", "ETARGET")]
)
def test_what_cannot_be_checked_says_why(
    registry: Path, adapter: Adapter, store: CapabilityRows, tmp_path: Path, switch: str, said: str
) -> None:
    (registry / switch).write_text("")
    [drift] = check(adapter, store, tmp_path)
    assert drift.status == "unknown" and drift.note is not None and said in drift.note
    assert not drift.regressed


def test_the_cli_prints_the_changes_and_exits_1_on_a_regression(
    registry: Path, adapter: Adapter, config_dir: Path
) -> None:
    (registry / f"flags-{NEWEST}").write_text("--ignore-profile")
    done = run_cli("drift", "fake", "-c", "rules.read", "-c", "usage.exact", "--json")
    assert done.returncode == 1, done.stderr
    [data] = json.loads(done.stdout)
    assert (data["status"], data["lost"], data["newest"]) == ("regressed", ["rules.read"], NEWEST)
    assert "Traceback" not in done.stderr and f"{NEWEST} regressed against {VERIFIED}" in done.stderr
    (registry / "offline").write_text("")
    people = run_cli("drift", "fake", "-c", "rules.read")
    assert people.returncode == 0 and "unknown" in people.stdout and "Traceback" not in people.stderr


def test_probe_version_latest_installs_and_probes_the_newest(registry: Path, adapter: Adapter) -> None:
    done = run_cli("probe", "fake", "--version", "latest", "-c", "rules.read", "--json")
    assert done.returncode == 0, done.stderr
    row = json.loads(done.stdout)
    assert (row["harness_version"], row["supports"]) == (NEWEST, {"rules.read": True})
    bad = run_cli("probe", "fake", "--version", "../x")
    assert bad.returncode == 1 and "cannot be used as a file name" in bad.stderr
    assert run_cli("probe", "--all", "--version", "1.0").returncode == 2


def row(supports: dict[str, object], outcome: str = "ok") -> Row:
    from tackroom.probe.rows import row_from_json

    return row_from_json(
        {
            "adapter": "a",
            "adapter_hash": "0" * 64,
            "harness_version": "1.0",
            "probed_at": "2026-12-01T00:00:00Z",
            "outcome": outcome,
            "supports": supports,
            "notes": {"outcome": "it crashed"} if outcome != "ok" else {},
        }
    )


def test_compare_counts_only_lost_proofs_and_broken_runs_as_regressions() -> None:
    base = row({"rules.read": True, "mcp.offered": "n/o"})
    assert compare(base, row({"rules.read": True, "mcp.offered": True}))[0] == "changed"
    assert compare(base, row({"rules.read": False, "mcp.offered": "n/o"}))[0] == "regressed"
    assert compare(base, row({"mcp.offered": "n/o"}))[0] == "regressed"  # untested now is not proven
    assert compare(base, row(dict(base.supports), outcome="failed"))[0] == "regressed"
    assert compare(base, row(dict(base.supports))) == ("unchanged", ())
