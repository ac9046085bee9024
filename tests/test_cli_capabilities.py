"""``tackroom probe`` stores rows; ``tackroom capabilities`` shows the latest, stale ones marked, never
a blank; ``adapters metrics`` gives each proof's age; a broken state file is one error line."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from clikit import run_cli
from probekit import agent_adapter
from tackroom.probe.matrix import markdown
from tackroom.probe.rows import Row
from tackroom.state import CapabilityRows, StateDB, state_path

PATH = {"PATH": "/usr/bin:/bin"}  # no harness of this machine's PATH gets probed by --all


def stored() -> CapabilityRows:
    return CapabilityRows(StateDB(state_path()))


def test_probe_stores_the_row_and_capabilities_shows_it(config_dir: Path) -> None:
    agent_adapter(config_dir)
    done = run_cli("probe", "fake", "-c", "rules.read", "-c", "usage.exact", "--json", env=PATH)
    assert done.returncode == 0, done.stderr
    row = json.loads(done.stdout)
    assert row["adapter"] == "fake" and row["outcome"] == "ok"
    assert row["supports"] == {"rules.read": True, "usage.exact": True}
    assert [r.to_json() for r in stored().history("fake")] == [row]
    listing = json.loads(run_cli("capabilities", "--json", env=PATH).stdout)
    fake = next(e for e in listing if e["adapter"] == "fake")
    assert fake["harness_version"] == {"kind": "known", "value": "2.1.197"}
    assert fake["installed"] == {"kind": "known", "value": "2.1.197"}
    assert fake["age_s"]["kind"] == "known" and fake["row"] == row
    never = next(e for e in listing if e["adapter"] == "kiro")
    assert never["row"] is None and never["age_s"] == {"kind": "unknown", "why": "never probed"}


def test_probe_exits_1_when_a_declared_capability_is_false(config_dir: Path) -> None:
    agent_adapter(config_dir, "--ignore-profile")
    done = run_cli("probe", "fake", "-c", "rules.read", env=PATH)
    assert done.returncode == 1
    assert "rules.read" in done.stdout and "no" in done.stdout
    assert stored().latest("fake") is not None  # a failing probe is stored too


def test_probe_all_probes_what_is_installed_and_lists_the_rest(config_dir: Path) -> None:
    agent_adapter(config_dir)
    done = run_cli("probe", "--all", "-c", "rules.read", "--jobs", "2", "--json", env=PATH)
    assert done.returncode == 0, done.stderr
    rows = {r["adapter"]: r for r in json.loads(done.stdout)}
    assert rows["fake"]["outcome"] == "ok" and rows["fake"]["supports"] == {"rules.read": True}
    assert rows["codex"]["outcome"] == "not_installed"
    assert "codex: not_installed" in done.stderr


def test_bad_probe_arguments_are_usage_errors(config_dir: Path) -> None:
    agent_adapter(config_dir)
    for args in (
        ("probe",),
        ("probe", "fake", "--all"),
        ("probe", "fake", "-c", "rules.reed"),
        ("probe", "--all", "--jobs", "0"),
        ("capabilities", "--json", "--markdown"),
    ):
        done = run_cli(*args, env=PATH)
        assert done.returncode == 2, (args, done.stderr)
        assert "Traceback" not in done.stderr


def _row(adapter: str, version: str, ago: timedelta, adapter_hash: str, **supports: object) -> Row:
    found = {k.replace("_", ".", 1): v for k, v in supports.items()}
    return Row(adapter, adapter_hash, version, datetime.now(UTC) - ago, "ok", found, {})  # type: ignore[arg-type]


def test_a_row_older_than_the_installed_harness_is_marked_stale(config_dir: Path) -> None:
    adapter = agent_adapter(config_dir)  # the fake agent says it is 2.1.197
    stored().add(_row("fake", "2.1.100", timedelta(days=3), adapter.hash, rules_read=True))
    listing = json.loads(run_cli("capabilities", "--json", env=PATH).stdout)
    fake = next(e for e in listing if e["adapter"] == "fake")
    assert fake["harness_version"]["kind"] == "stale"
    assert fake["harness_version"]["why"] == "2.1.197 is installed now"
    shown = run_cli("capabilities", env={**PATH, "COLUMNS": "250"}).stdout
    assert "2.1.100 (stale, as of" in shown and "3d" in shown


def test_a_row_of_another_adapter_hash_is_stale(config_dir: Path) -> None:
    agent_adapter(config_dir)
    stored().add(_row("fake", "2.1.197", timedelta(hours=1), "0" * 64, rules_read=True))
    fake = next(
        e for e in json.loads(run_cli("capabilities", "--json", env=PATH).stdout) if e["adapter"] == "fake"
    )
    assert fake["harness_version"]["kind"] == "stale" and "adapter changed" in fake["harness_version"]["why"]


def test_markdown_is_the_rows_rendered(config_dir: Path) -> None:
    agent_adapter(config_dir)
    rows = [
        _row("fake", "2.1.197", timedelta(hours=2), "a" * 64, rules_read=True, mcp_offered=False),
        _row("fake", "2.1.332", timedelta(hours=1), "a" * 64, rules_read="n/o"),
    ]
    for r in rows:
        stored().add(r)
    done = run_cli("capabilities", "--markdown", env=PATH)
    assert done.returncode == 0
    assert done.stdout == markdown(rows)
    assert "| capability | fake 2.1.197 | fake 2.1.332 |" in done.stdout
    assert "| `mcp.offered` | **no** | - |" in done.stdout


def test_metrics_give_the_age_of_each_proof_and_nothing_for_the_unproven(config_dir: Path) -> None:
    adapter = agent_adapter(config_dir)
    stored().add(_row("fake", "2.1.197", timedelta(seconds=100), adapter.hash, rules_read=True))
    text = run_cli("adapters", "metrics", env=PATH).stdout
    ages = [line for line in text.splitlines() if line.startswith("tackroom_capability_proof_age_seconds{")]
    assert len(ages) == 1
    labels, value = ages[0].rsplit(" ", 1)
    assert 'adapter="fake",harness_version="2.1.197",outcome="ok"' in labels and 99 <= int(value) <= 160


def test_a_broken_state_file_is_one_error_line_naming_it(config_dir: Path) -> None:
    path = state_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(os.urandom(4096))
    for args in (("capabilities",), ("adapters", "metrics"), ("doctor", "claude-code")):
        done = run_cli(*args, env=PATH)
        assert done.returncode == 1, args
        assert "Traceback" not in done.stderr
        assert done.stderr.startswith(f"tackroom: error: {path}") and "move it aside" in done.stderr


def test_notes_from_a_harness_are_printed_as_written_not_as_markup(config_dir: Path) -> None:
    adapter = agent_adapter(config_dir)
    note = "[bold red]the harness said [/] \x1b[31m[link=file:///etc]x[/link]"
    row = Row(
        "fake", adapter.hash, "2.1.197", datetime.now(UTC), "ok", {"rules.read": False}, {"rules.read": note}
    )
    stored().add(row)
    done = run_cli("doctor", "fake", env={**PATH, "COLUMNS": "400"})
    assert done.returncode == 1
    assert "[bold red]the harness said [/]" in done.stdout and "[link=file:///etc]x[/link]" in done.stdout


def test_each_adapter_says_how_it_is_seen_at_work(config_dir: Path) -> None:
    """Seed 002's observability tiers: stream, transcripts, gateway, from each adapter's data."""
    listing = {e["adapter"]: e["observability"] for e in json.loads(run_cli("capabilities", "--json").stdout)}
    assert listing["claude-code"] == {
        "tier": "full",
        "stream": "claude stream-json",
        "stream_usage": ["cache_read", "cache_write", "input", "output"],
        "transcripts": True,
        "gateway": "anthropic-messages",
    }
    # An ACP server reports no usage of its own and writes no logs tackroom reads: its calls, only.
    assert listing["codex-acp"]["tier"] == "partial" and listing["codex-acp"]["gateway"] == "openai-responses"
    assert not listing["codex-acp"]["transcripts"] and listing["codex-acp"]["stream_usage"] == []
    # No base URL to point at a gateway: it calls its provider itself.
    assert listing["kiro"]["tier"] == "minimal" and listing["kiro"]["gateway"] is None
    for name, seen in listing.items():
        effective = json.loads(run_cli("adapters", "show", name, "--json").stdout)["effective"]
        assert seen["gateway"] == (effective.get("model_endpoint") or {}).get("wire_api"), name
        if seen["transcripts"]:
            assert effective.get("transcripts"), name
    shown = run_cli("adapters", "show", "kiro", env={"COLUMNS": "250"}).stdout
    assert "observability minimal: text only" in shown and "no base URL: no gateway" in shown
    table = run_cli("capabilities", env={"COLUMNS": "250"}).stdout
    assert "full: stream, transcripts, gateway" in table
