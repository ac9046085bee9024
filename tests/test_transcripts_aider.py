"""Aider's markdown chat history: answers read once whole, rounded counts, sessions, bad bytes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tackroom.families import get_family
from tackroom.families.aider.transcripts import AiderTranscripts, tokens_usage
from tackroom.mock.script import Script, Turn, Usage
from tackroom.trace.model import Cursor, SessionMeta, TraceEvent, TraceIssue, TraceItem

GOLDEN = Path(__file__).parent / "golden" / "aider" / "transcripts"
RECORDED = GOLDEN / "three-chats-0.86.2" / "files" / ".aider.chat.history.md"
HEAD = (
    "\n# aider chat started at 2026-12-02 09:00:00\n\n> Model: gpt-5 with diff edit format  \n\n#### hi  \n"
)


def _read(path: Path, cursor: Cursor | None = None, usage_only: bool = False) -> list[TraceItem]:
    return list(AiderTranscripts().read(path, cursor or Cursor(), usage_only=usage_only))


def _events(items: list[TraceItem]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for item in items:
        if isinstance(item, TraceEvent):
            data = item.event.to_json()
            out.append((item.event.kind, data.get("text") or data.get("usage") or data.get("message")))
    return out


def test_the_family_has_this_reader() -> None:
    reader = get_family("aider").transcripts()
    assert isinstance(reader, AiderTranscripts)
    assert reader.suffixes == (".md",)


def test_an_answer_is_read_once_something_follows_it(tmp_path: Path) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(HEAD + "\npart one\n\npart", encoding="utf-8")
    cursor = Cursor()
    first = _events(_read(path, cursor))
    assert first[-1] == ("user_text", "hi")  # the answer may still be being written
    with path.open("a") as handle:
        handle.write(" two\n\n> Tokens: 10 sent, 2 received.  \n")
    later = _events(_read(path, cursor))
    assert later[0] == ("assistant_text", "part one\n\npart two")
    assert later[1][0] == "usage"
    assert cursor.offset == path.stat().st_size


def test_an_answer_at_the_end_of_the_log_is_read_when_the_log_ends_in_a_blank_line(tmp_path: Path) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(HEAD + "\nthe last answer, no usage after it\n\n", encoding="utf-8")
    assert _events(_read(path))[-1] == ("assistant_text", "the last answer, no usage after it")


def test_rounded_counts_are_unknown_never_a_guess() -> None:
    usage = tokens_usage("Tokens: 1.2k sent, 56 received.")
    assert usage is not None
    assert usage.to_json() == {
        "input": "unknown",
        "output": 56,
        "cache_read": "not_reported",
        "cache_write": "not_reported",
        "reasoning": "not_reported",
    }
    exact = tokens_usage("Tokens: 999 sent, 100 cache write, 200 cache hit, 12k received.")
    assert exact is not None and exact.input == 699 and exact.state("output") == "unknown"
    hit_only = tokens_usage("Tokens: 900 sent, 200 cache hit, 5 received.")
    assert hit_only is not None and (hit_only.input, hit_only.cache_write) == (700, 0)
    none = tokens_usage("Tokens: 900 sent, 5 received.")
    assert (
        none is not None and none.state("input") == "unknown" and none.state("cache_read") == "not_reported"
    )
    assert tokens_usage("Tokens: lots sent") is None


def test_each_exchange_has_its_own_key_and_sessions_are_apart() -> None:
    items = _read(RECORDED)
    usage = [i for i in items if isinstance(i, TraceEvent) and i.event.kind == "usage"]
    assert len({u.key for u in usage}) == 3
    assert len({u.session_id for u in usage}) == 3
    assert [m.started for m in items if isinstance(m, SessionMeta)] == [
        "2026-12-01T13:22:27",
        "2026-12-01T13:23:32",
        "2026-12-01T13:23:55",
    ]


def test_a_session_started_in_an_earlier_read_keeps_its_id(tmp_path: Path) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(HEAD, encoding="utf-8")
    cursor = Cursor()
    [started] = [
        i for i in _read(path, cursor) if isinstance(i, TraceEvent) and i.event.kind == "session_started"
    ]
    with path.open("a") as handle:
        handle.write("\nok\n\n> Tokens: 5 sent, 1 received.  \n")
    [usage] = [i for i in _read(path, cursor) if isinstance(i, TraceEvent) and i.event.kind == "usage"]
    assert usage.session_id == started.session_id
    assert usage.model == "gpt-5" and usage.timestamp == "2026-12-02T09:00:00"


def test_a_log_whose_start_was_cut_off_is_still_read(tmp_path: Path) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text("> Tokens: 5 sent, 1 received.  \n", encoding="utf-8")
    [usage] = [i for i in _read(path) if isinstance(i, TraceEvent)]
    assert usage.session_id == "aider-headless" and usage.timestamp is None


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=300), st.integers(min_value=0, max_value=1700))
def test_random_bytes_never_crash_and_the_fast_path_agrees(
    tmp_path_factory: Any, junk: bytes, cut: int
) -> None:
    path = tmp_path_factory.mktemp("aider") / ".aider.chat.history.md"
    data = RECORDED.read_bytes()
    path.write_bytes(data[:cut] + junk + b"\n" + data[cut:])
    full = _read(path)
    assert all(isinstance(i, TraceEvent | SessionMeta | TraceIssue) for i in full)

    def usage(items: list[TraceItem]) -> list[Any]:
        return [
            (i.key, i.event.to_json()) for i in items if isinstance(i, TraceEvent) and i.event.kind == "usage"
        ]

    assert usage(_read(path, usage_only=True)) == usage(full)


def test_a_huge_answer_is_read_in_bounded_pieces(tmp_path: Path, monkeypatch: Any) -> None:
    import tackroom.families.aider.transcripts as module

    monkeypatch.setattr(module, "MAX_TEXT", 100)
    path = tmp_path / ".aider.chat.history.md"
    body = "\n".join(f"line {n:03d} of a long answer" for n in range(30))
    path.write_text(HEAD + "\n" + body + "\n\n\n\n> Tokens: 5 sent, 1 received.  \n", encoding="utf-8")
    answers = [text for kind, text in _events(_read(path)) if kind == "assistant_text"]
    assert len(answers) > 1 and all(len(a) < 200 for a in answers)
    assert "\n".join(answers) == body


def _installed(harness: str) -> str:
    """The data dir where the real harness is installed (as tests/real has it), else the test is skipped."""
    root = Path(__file__).resolve().parents[1]
    data = os.environ.get("TACKROOM_TEST_DATA") or str(root / ".cache" / "tackroom-test")
    if not (Path(data) / "tackroom" / "harnesses" / harness).is_dir():
        pytest.skip(f"{harness} is not installed under {data}")
    return data


@pytest.mark.real
def test_the_real_harness_history_holds_the_usage_it_printed(tmp_path: Path) -> None:
    data = _installed("aider")
    from tackroom.run.runner import run

    workdir = tmp_path / "work"
    workdir.mkdir()
    small = Usage(input=700, output=20, cache_read=0, cache_write=0)
    script = Script([Turn.reply("first paragraph\n\nsecond paragraph", usage=small)])
    environ = {**os.environ, "XDG_DATA_HOME": data}
    result = run(
        "aider",
        "say it",
        workdir=workdir,
        mock=script,
        runs_dir=tmp_path / "runs",
        environ=environ,
        timeout_s=180,
    )
    assert result.ok, result.error
    items = _read(workdir / ".aider.chat.history.md")
    [usage] = [i for i in items if isinstance(i, TraceEvent) and i.event.kind == "usage"]
    figures = usage.event.usage  # type: ignore[attr-defined]
    assert figures.state("output") == result.usage.state("output") == 20
    assert figures.state("input") == "unknown"  # "700 sent" may hold cached tokens aider did not print
    assert ("assistant_text", "first paragraph\n\nsecond paragraph") in _events(items)
