"""gptme's conversation logs: what the golden files do not show (the folder's files, rewrites, bad lines)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tackroom.adapters.resolve import load_adapters
from tackroom.families import get_family
from tackroom.families.gptme.stream import GptmeStreamParser
from tackroom.families.gptme.transcripts import GptmeTranscripts, split_calls, usage_of
from tackroom.trace.events import UsageReport
from tackroom.trace.model import Cursor, TraceEvent, TraceIssue, TraceItem
from tracekit import the_session, usage_reports

GOLDEN = Path(__file__).parent / "golden" / "gptme" / "transcripts"
NAME = "2026-12-02-some-name"


def _assistant(text: str, at: str = "2026-12-02T10:00:02.000000", **usage: Any) -> dict[str, Any]:
    figures = {
        "input_tokens": 254,
        "output_tokens": 45,
        "cache_read_tokens": 67,
        "reasoning_tokens": 0,
        **usage,
    }
    metadata = {"model": "local/m", "usage": figures, "input_log_digest": "abc"}
    return {"role": "assistant", "content": text, "timestamp": at, "metadata": metadata}


def _write(tmp_path: Path, *lines: dict[str, Any] | str) -> Path:
    path = tmp_path / NAME / "conversation.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8"
    )
    return path


def _read(path: Path, cursor: Cursor | None = None, usage_only: bool = False) -> list[TraceItem]:
    return list(GptmeTranscripts().read(path, cursor or Cursor(), usage_only=usage_only))


def test_the_family_and_adapter_have_this_reader() -> None:
    assert isinstance(get_family("gptme").transcripts(), GptmeTranscripts)
    spec = load_adapters()["gptme"].spec.transcripts
    assert spec is not None and spec.glob == "*/conversation.jsonl"


def test_the_log_says_what_the_stream_said() -> None:
    """The recording's calls, read from the log, are the figures the live stream reported for them."""
    log = next(GOLDEN.glob("gptme-0.35.1-shell/files/*/conversation.jsonl"))
    ours = [i.event.usage for i in usage_reports(_read(log))]  # type: ignore[attr-defined]
    parser = GptmeStreamParser()
    streamed = []
    for line in log.read_text(encoding="utf-8").splitlines():
        streamed += [
            e.usage
            for e in parser.feed(json.dumps({"type": "message", **json.loads(line)}))
            if isinstance(e, UsageReport)
        ]
    assert ours == streamed
    # The mock sent 321 in (67 cached), 45 out, then 500 in (100 cached), 20 out, 5 reasoning.
    assert [u.to_json() for u in ours] == [
        {"input": 254, "output": 45, "cache_read": 67, "cache_write": "not_reported", "reasoning": 0},
        {"input": 400, "output": 20, "cache_read": 100, "cache_write": "not_reported", "reasoning": 5},
    ]


def test_figures_that_are_not_counts_are_unknown() -> None:
    usage = usage_of({"usage": {"input_tokens": 1.5, "output_tokens": None, "cache_read_tokens": 3}})
    assert usage.to_json() == {
        "input": "unknown",
        "output": "unknown",
        "cache_read": 3,
        "cache_write": "not_reported",
        "reasoning": "not_reported",
    }
    assert not usage_of({"usage": "lots"}).reported
    assert not usage_of(None).reported


def test_tool_calls_after_text_split_from_it() -> None:
    text, calls = split_calls('Sure.\n@shell(c1): {"command": "ls"}\n@save(): not json\n')
    assert text == "Sure.\n"
    assert [(c.name, c.call_id, c.input) for c in calls] == [
        ("shell", "c1", {"command": "ls"}),
        ("save", None, "not json"),
    ]
    assert split_calls("an @mention(x): mid-line is text") == ("an @mention(x): mid-line is text", [])


def test_the_workspace_link_is_read_not_followed(tmp_path: Path) -> None:
    path = _write(tmp_path, {"role": "user", "content": "hi", "timestamp": "t"})
    (path.parent / "workspace").symlink_to("/nowhere/project")
    (path.parent / "config.toml").write_text('[chat]\nname = "named"\nworkspace = "/other"\n')
    meta = the_session(_read(path))
    assert (meta.cwd, meta.title) == ("/nowhere/project", "named")


def test_a_broken_or_huge_config_is_no_title(tmp_path: Path) -> None:
    path = _write(tmp_path, {"role": "user", "content": "hi", "timestamp": "t"})
    (path.parent / "config.toml").write_text("[chat\nname = ")
    assert (the_session(_read(path)).title, the_session(_read(path)).cwd) == (None, None)
    (path.parent / "config.toml").write_text('[chat]\nname = "x"\n' + "#" * (300 * 1024))
    assert the_session(_read(path)).title is None
    (path.parent / "config.toml").write_text('[chat]\nname = 7\nworkspace = ["a"]\n')
    assert (the_session(_read(path)).title, the_session(_read(path)).cwd) == (None, None)


def test_a_call_without_a_digest_is_keyed_by_its_time(tmp_path: Path) -> None:
    line = _assistant("hi")
    del line["metadata"]["input_log_digest"]
    untimed = _assistant("hi")
    del untimed["timestamp"]
    path = _write(tmp_path, line, untimed)
    assert [u.key for u in usage_reports(_read(path))] == ["2026-12-02T10:00:02.000000", None]


def test_bad_lines_are_issues_and_the_rest_is_read(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "{broken",
        '"a string"',
        json.dumps({"role": "assistant", "content": ["not", "text"], "metadata": []}),
        json.dumps({"role": "system", "call_id": "c", "content": 5}),
        _assistant("TRACED"),
    )
    items = _read(path)
    assert [i.line for i in items if isinstance(i, TraceIssue)] == [1, 2]
    assert [u.key for u in usage_reports(items)] == ["2026-12-02T10:00:02.000000#abc"]
    results = [i.event for i in items if isinstance(i, TraceEvent) and i.event.kind == "tool_result"]
    assert [(r.call_id, r.output) for r in results] == [("c", None)]  # type: ignore[attr-defined]
    assert usage_reports(_read(path, usage_only=True)) == usage_reports(items)


def test_a_log_rewritten_after_an_undo_is_read_again_whole(tmp_path: Path) -> None:
    """gptme replaces the file on an undo: read from the start, the undone call is gone."""
    path = _write(tmp_path, _assistant("one"), _assistant("two", at="2026-12-02T10:00:03.000000"))
    assert len(usage_reports(_read(path))) == 2
    path.unlink()
    path = _write(tmp_path, _assistant("one"))
    assert [u.key for u in usage_reports(_read(path))] == ["2026-12-02T10:00:02.000000#abc"]
