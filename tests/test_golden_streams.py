"""Golden streams: recorded real harness output, parsed by the family code, against expected events.

``tests/golden/<family>/<case>/`` holds ``stream.jsonl`` (the harness's stdout,
recorded by ``tests/real`` with ``--update-golden``, secrets and temp paths
scrubbed), optional ``stderr.txt`` and ``meta.json`` (exit code), and
``expected.json`` (the normalized events without their raw lines, and the
summary a Result would carry). ``pytest --update-golden`` rewrites
``expected.json`` from the current parser; review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tackroom.families import get_family
from tackroom.families.base import ClientParser
from tackroom.run.result import summarize
from tackroom.trace.events import Event, Finished

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.parent for p in GOLDEN.glob("*/*/stream.jsonl"))


def parse_case(case: Path) -> dict[str, Any]:
    family = get_family(case.parent.name)
    meta = json.loads((case / "meta.json").read_text()) if (case / "meta.json").exists() else {}
    parser = family.parser()
    if isinstance(parser, ClientParser):  # a client (ACP) answers what the agent asks from the run's options
        parser.begin("", case, meta.get("options", {}))
    events: list[Event] = []
    for line in (case / "stream.jsonl").read_text(encoding="utf-8").splitlines():
        events += parser.feed(line)
    events += parser.close(meta.get("exit_code", 0))
    stderr = case / "stderr.txt"
    if stderr.exists():
        found = family.stderr_error(stderr.read_text(encoding="utf-8"))
        events += [found] if found else []
    summary = summarize(events)
    return {
        "events": [{k: v for k, v in e.to_json().items() if k != "raw"} for e in events],
        "summary": {
            "session_id": summary.session_id,
            "final_text": summary.final_text,
            "usage": summary.usage.to_json(),
            "model_failed": summary.model_failed,
            "error": summary.error,
            "finished": summary.finished,
        },
    }


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.name}/{c.name}" for c in CASES])
def test_golden_stream(case: Path, update_golden: bool) -> None:
    actual = parse_case(case)
    expected_file = case / "expected.json"
    if update_golden:
        expected_file.write_text(json.dumps(actual, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert expected_file.exists(), f"{case}: no expected.json; run pytest --update-golden and review it"
    assert actual == json.loads(expected_file.read_text(encoding="utf-8"))


SUCCESSES = [c for c in CASES if get_family(c.parent.name).terminal and not c.name.endswith("-error")]


@pytest.mark.parametrize("case", SUCCESSES, ids=[f"{c.parent.name}/{c.name}" for c in SUCCESSES])
def test_a_stream_cut_before_its_terminal_line_is_not_finished(case: Path) -> None:
    """A family whose stream has a terminal line makes Finished from it, and only from it."""
    family = get_family(case.parent.name)
    lines = (case / "stream.jsonl").read_text(encoding="utf-8").splitlines()
    parser = family.parser()
    events = [event for line in lines for event in parser.feed(line)] + parser.close(0)
    terminal = {e.raw for e in events if isinstance(e, Finished)}
    assert terminal and all(terminal), f"{case}: Finished must come from {family.terminal}"
    parser = family.parser()
    cut = [event for line in lines if line not in terminal for event in parser.feed(line)] + parser.close(0)
    assert not summarize(cut).finished


def test_every_verified_family_has_golden_streams() -> None:
    from tackroom.families import family_names

    verified = {name for name in family_names() if get_family(name).verified}
    recorded = {case.parent.name for case in CASES}
    assert verified <= recorded, f"verified families without recorded streams: {sorted(verified - recorded)}"
