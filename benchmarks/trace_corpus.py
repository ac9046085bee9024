"""Generate a Claude Code transcript corpus in the shape Claude Code 1.x/2.x writes it.

    python benchmarks/trace_corpus.py OUT_DIR --size-mb 100 [--seed 1] [--jobs N]

writes ``OUT_DIR/projects/<project>/<session>.jsonl`` and, for sessions that spawned
subagents, ``OUT_DIR/projects/<project>/<session>/subagents/agent-<id>.jsonl`` (every line
``isSidechain: true`` with an ``agentId``). Lines are compact JSON (ccusage only sees
``"usage":{``), one per record: summary, file-history-snapshot, user prompts, assistant
messages (thinking, text and tool_use blocks), user tool_result lines with their
``toolUseResult`` (a Task result carries the subagent's usage summary, a trap for readers that
look for ``"usage"`` anywhere), system lines, ``<synthetic>`` zero-usage API-error lines and,
in the parent, ``agent_progress`` copies of subagent messages (same message and request id, so
they must be counted once). Timestamps span 60 days from 2026-09-01 (sessions cross midnight).
5 % of assistant messages are streamed as 2-4 lines with the same ``message.id``/``requestId``
and growing usage (the last line is the largest); 1 % have no ``requestId``; 5 % of sessions
resume the one before (its lines copied first under the new session id: counted once where
they have a ``requestId``, again where they do not, as ccusage does).

The same seed and size give the same bytes, on any number of cores (8 fixed chunks, each from
its own seed, written in parallel). ``OUT_DIR/corpus.json`` (outside ``projects/``, so no reader
sees it) records the parameters, how often each tricky shape was written (``features``) and the
expected usage per UTC day and model under ccusage 20.0.24's rules (docs/ccusage-semantics.md).
"""

from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing
import os
import random
import string
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MB = 1024 * 1024
VERSION = 3  # bump when the bytes a seed gives change: cached corpora are regenerated
START = datetime.datetime(2026, 9, 1, tzinfo=datetime.UTC)
WINDOW_S = 60 * 86400
MODELS = (
    ("claude-sonnet-4-5-20250929", 50),
    ("claude-opus-4-1-20250805", 15),
    ("claude-haiku-4-5-20251001", 15),
    ("claude-sonnet-4-20250514", 10),
    ("claude-opus-4-5-20251101", 10),
)
SUBAGENT_MODELS = ("claude-haiku-4-5-20251001", "claude-sonnet-4-5-20250929")
VERSIONS = ("1.0.128", "2.0.14", "2.0.42", "2.0.76", "2.1.3")
TOOLS = ("Bash", "Read", "Edit", "Grep", "Glob", "Write", "TodoWrite", "WebFetch")
_WORDS = (
    "the function returns None when the cache is empty so we check it first and then "
    "import os sys json pathlib def class self return yield async await raise except "
    "TODO fix test passes fails error warning build lint mypy ruff pytest src tests "
    "config value key index file path line column offset buffer stream reader writer "
    "日本語 façade naïve — “quoted” {braces} [brackets] <tags> \\back\\slash tab\tend "
    'said "hello" it\'s fine; a=b && c||d $HOME ~/.claude/projects 0x1f 3.14 -42 '
)
WORDS = _WORDS.split(" ")
B62 = string.ascii_letters + string.digits
JSON = {"separators": (",", ":"), "ensure_ascii": False}


def dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, **JSON)  # type: ignore[arg-type]


@dataclass
class Expected:
    """Usage ccusage should report: {day: {model: [input, output, cache_write, cache_read]}}."""

    days: dict[str, dict[str, list[int]]] = field(default_factory=dict)

    def add(self, ts: datetime.datetime, model: str, usage: dict[str, Any]) -> None:
        day = self.days.setdefault(ts.strftime("%Y-%m-%d"), {})
        row = day.setdefault(model, [0, 0, 0, 0])
        row[0] += usage["input_tokens"]
        row[1] += usage["output_tokens"]
        row[2] += usage["cache_creation_input_tokens"]
        row[3] += usage["cache_read_input_tokens"]


class Gen:
    """Deterministic record factory; every random choice comes from one seeded ``Random``."""

    def __init__(self, seed: int | str, resume: float = 0.05, no_request_id: float = 0.01) -> None:
        self.rng = random.Random(seed)
        self.resume, self.no_request_id = resume, no_request_id
        words = self.rng.choices(WORDS, k=400_000)
        lines = [" ".join(words[i : i + 12]) for i in range(0, len(words), 12)]
        self.text = "\n".join(lines)
        self.expected = Expected()
        self.recounted = Expected()  # what ccusage counts twice: resumed copies without a requestId
        self.features: Counter[str] = Counter()  # how often each tricky shape was written

    def blob(self, mean: int) -> str:
        """A slice of the word pool whose length is roughly exponential around ``mean``."""
        n = min(int(self.rng.expovariate(1 / mean)) + 20, len(self.text) - 1)
        start = self.rng.randrange(0, len(self.text) - n)
        return self.text[start : start + n]

    def uuid(self) -> str:
        h = f"{self.rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"

    def token(self, prefix: str, n: int) -> str:
        return prefix + "".join(self.rng.choices(B62, k=n))

    def usage(self, model: str) -> dict[str, Any]:
        rng = self.rng
        write = rng.choice((0, 0, 0, rng.randrange(50, 30000)))
        five = rng.randrange(0, write + 1) if write else 0
        usage: dict[str, Any] = {
            "input_tokens": rng.randrange(1, 60) if rng.random() < 0.9 else rng.randrange(100, 9000),
            "cache_creation_input_tokens": write,
            "cache_read_input_tokens": rng.randrange(0, 180_000),
            "cache_creation": {"ephemeral_5m_input_tokens": five, "ephemeral_1h_input_tokens": write - five},
            "output_tokens": rng.randrange(1, 4000),
            "service_tier": "standard",
        }
        if rng.random() < 0.05:
            usage["server_tool_use"] = {"web_search_requests": rng.randrange(0, 3), "web_fetch_requests": 0}
        return usage


def ts_str(ts: datetime.datetime) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"


@dataclass
class Session:
    """One transcript file being written: its identity and where its clock stands."""

    gen: Gen
    project: str
    cwd: str
    session_id: str
    version: str
    model: str
    now: datetime.datetime
    branch: str
    agent_id: str | None = None
    parent: str | None = None
    lines: list[str] = field(default_factory=list)
    subagents: list[Session] = field(default_factory=list)

    def tick(self, low: float, high: float) -> str:
        self.now += datetime.timedelta(seconds=self.gen.rng.uniform(low, high))
        return ts_str(self.now)

    def base(self, kind: str) -> dict[str, Any]:
        record: dict[str, Any] = {
            "parentUuid": self.parent,
            "isSidechain": self.agent_id is not None,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": self.version,
            "gitBranch": self.branch,
        }
        if self.agent_id is not None:
            record["agentId"] = self.agent_id
        record["type"] = kind
        return record

    def emit(self, record: dict[str, Any]) -> None:
        uuid = self.gen.uuid()
        record["uuid"] = uuid
        self.parent = uuid
        self.lines.append(dumps(record))

    def user_prompt(self) -> None:
        record = self.base("user")
        record["message"] = {"role": "user", "content": self.gen.blob(300)}
        record["timestamp"] = self.tick(5, 600)
        self.emit(record)

    def assistant(self, blocks: list[dict[str, Any]], model: str | None = None) -> dict[str, Any]:
        """One API response: one line, or (5 %) 2-4 streamed lines with growing usage.

        1 % have no ``requestId`` (one line each: without it ccusage keys on the timestamp).
        """
        gen, model = self.gen, model or self.model
        mid = gen.token("msg_01", 22)
        rid = gen.token("req_011C", 20) if gen.rng.random() >= gen.no_request_id else None
        final = gen.usage(model)
        parts = gen.rng.randint(2, 4) if rid is not None and gen.rng.random() < 0.05 else 1
        gen.features["responses"] += 1
        gen.features["streamed responses"] += parts > 1
        gen.features["responses without requestId"] += rid is None
        ts = self.now
        for i in range(parts):
            usage = dict(final)
            if i < parts - 1:  # an earlier chunk of the stream: fewer output tokens so far
                usage["output_tokens"] = max(1, final["output_tokens"] * (i + 1) // (parts + 1))
            chunk = (
                blocks if parts == 1 else blocks[i * len(blocks) // parts : (i + 1) * len(blocks) // parts]
            )
            record = self.base("assistant")
            record["message"] = {
                "id": mid,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": chunk or [{"type": "text", "text": gen.blob(80)}],
                "stop_reason": "tool_use" if i == parts - 1 and blocks[-1]["type"] == "tool_use" else None,
                "stop_sequence": None,
                "usage": usage,
            }
            if rid is not None:
                record["requestId"] = rid
            record["timestamp"] = self.tick(0.05, 2 if i < parts - 1 else 40)
            ts = self.now
            self.emit(record)
        gen.expected.add(ts, model, final)
        return {"id": mid, "requestId": rid, "model": model, "usage": final, "timestamp": ts_str(ts)}

    def blocks(self) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        gen, rng = self.gen, self.gen.rng
        out: list[dict[str, Any]] = []
        if rng.random() < 0.4:
            out.append({"type": "thinking", "thinking": gen.blob(1200), "signature": gen.token("Eu", 300)})
        if rng.random() < 0.7:
            out.append({"type": "text", "text": gen.blob(400)})
        tool = None
        if rng.random() < 0.75:
            name = rng.choice(TOOLS)
            tool = {
                "type": "tool_use",
                "id": gen.token("toolu_01", 22),
                "name": name,
                "input": self.tool_input(name),
            }
            out.append(tool)
        if not out:
            out.append({"type": "text", "text": gen.blob(200)})
        return out, tool

    def tool_input(self, name: str) -> dict[str, Any]:
        gen = self.gen
        if name == "Bash":
            return {"command": gen.blob(60), "description": gen.blob(30)}
        if name in ("Read", "Write", "Edit"):
            path = f"{self.cwd}/src/{gen.token('', 8)}.py"
            if name == "Read":
                return {"file_path": path}
            if name == "Write":
                return {"file_path": path, "content": gen.blob(2500)}
            return {"file_path": path, "old_string": gen.blob(200), "new_string": gen.blob(220)}
        return {"pattern": gen.blob(20)}

    def tool_result(self, tool: dict[str, Any]) -> None:
        gen = self.gen
        content = gen.blob(2500 if gen.rng.random() < 0.9 else 30000)
        record = self.base("user")
        record["message"] = {
            "role": "user",
            "content": [{"tool_use_id": tool["id"], "type": "tool_result", "content": content}],
        }
        record["timestamp"] = self.tick(0.2, 30)
        if tool["name"] == "Read":
            lines = content.count("\n") + 1
            record["toolUseResult"] = {
                "type": "text",
                "file": {
                    "filePath": tool["input"]["file_path"],
                    "content": content,
                    "numLines": lines,
                    "startLine": 1,
                    "totalLines": lines,
                },
            }
        elif tool["name"] == "Bash":
            record["toolUseResult"] = {
                "stdout": content,
                "stderr": "",
                "interrupted": False,
                "isImage": False,
            }
        else:
            record["toolUseResult"] = {"type": "update", "filePath": tool["input"].get("file_path", "")}
        self.emit(record)

    def system(self) -> None:
        record = self.base("system")
        record["subtype"] = "informational"
        record["content"] = self.gen.blob(120)
        record["isMeta"] = False
        record["level"] = "info"
        record["timestamp"] = self.tick(0.1, 5)
        self.emit(record)

    def synthetic_error(self) -> None:
        """Claude Code's own API-error line: model ``<synthetic>``, zero usage (counted as nothing)."""
        record = self.base("assistant")
        zero = {
            "input_tokens": 0,
            "output_tokens": 0,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        record["message"] = {
            "id": self.gen.uuid(),
            "container": None,
            "model": "<synthetic>",
            "role": "assistant",
            "stop_reason": "stop_sequence",
            "stop_sequence": "",
            "type": "message",
            "usage": {**zero, "server_tool_use": {"web_search_requests": 0}, "service_tier": None},
            "content": [{"type": "text", "text": "API Error: 529 overloaded"}],
        }
        record["isApiErrorMessage"] = True
        record["timestamp"] = self.tick(1, 20)
        self.gen.expected.days.setdefault(self.now.strftime("%Y-%m-%d"), {})
        self.gen.features["<synthetic> error lines"] += 1
        self.emit(record)


def prefix_lines(gen: Gen, session: Session) -> None:
    rng = gen.rng
    if rng.random() < 0.3:
        summary = {"type": "summary", "summary": gen.blob(60), "leafUuid": gen.uuid()}
        session.lines.append(dumps(summary))
    snapshot_id = gen.uuid()
    snapshot = {
        "type": "file-history-snapshot",
        "messageId": snapshot_id,
        "snapshot": {"messageId": snapshot_id, "trackedFileBackups": {}, "timestamp": ts_str(session.now)},
        "isSnapshotUpdate": False,
    }
    session.lines.append(dumps(snapshot))


def run_subagent(gen: Gen, parent: Session, task: dict[str, Any]) -> None:
    """A Task call: the subagent's own file, progress copies in the parent, the parent's result."""
    rng = gen.rng
    agent = Session(
        gen,
        parent.project,
        parent.cwd,
        parent.session_id,
        parent.version,
        rng.choice(SUBAGENT_MODELS),
        parent.now,
        parent.branch,
        agent_id=f"{rng.getrandbits(32):08x}",
    )
    parent.subagents.append(agent)
    gen.features["subagent transcripts"] += 1
    agent.user_prompt()
    totals = {
        "input_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 0,
    }
    for _ in range(rng.randint(2, 12)):
        blocks, tool = agent.blocks()
        sent = agent.assistant(blocks)
        for key in totals:
            totals[key] += sent["usage"][key]
        if sent["requestId"] is not None and rng.random() < 0.5:
            progress = parent.base("progress")
            progress["data"] = {
                "type": "agent_progress",
                "agentId": agent.agent_id,
                "message": {
                    "type": "assistant",
                    "timestamp": sent["timestamp"],
                    "requestId": sent["requestId"],
                    "message": {"id": sent["id"], "model": sent["model"], "usage": sent["usage"]},
                },
            }
            progress["parentToolUseID"] = task["id"]
            gen.features["agent_progress copies"] += 1
            progress["timestamp"] = sent["timestamp"]
            parent.emit(progress)
        if tool is not None:
            agent.tool_result(tool)
    parent.now = agent.now
    record = parent.base("user")
    text = agent.gen.blob(600)
    record["message"] = {
        "role": "user",
        "content": [
            {"tool_use_id": task["id"], "type": "tool_result", "content": [{"type": "text", "text": text}]}
        ],
    }
    record["timestamp"] = parent.tick(0.2, 3)
    record["toolUseResult"] = {
        "status": "completed",
        "prompt": task["input"]["prompt"],
        "agentId": agent.agent_id,
        "content": [{"type": "text", "text": text}],
        "totalDurationMs": rng.randrange(2000, 300000),
        "totalTokens": sum(totals.values()),
        "totalToolUseCount": rng.randrange(0, 12),
        "usage": {**totals, "service_tier": "standard"},
    }
    parent.emit(record)


def run_session(gen: Gen, session: Session, turns: int, tasks: bool = True) -> None:
    rng = gen.rng
    prefix_lines(gen, session)
    for _ in range(turns):
        session.user_prompt()
        for _ in range(rng.randint(1, 6)):
            if tasks and rng.random() < 0.04:
                task = {
                    "type": "tool_use",
                    "id": gen.token("toolu_01", 22),
                    "name": "Task",
                    "input": {
                        "description": gen.blob(30),
                        "prompt": gen.blob(500),
                        "subagent_type": "general-purpose",
                    },
                }
                session.assistant([{"type": "text", "text": gen.blob(150)}, task])
                run_subagent(gen, session, task)
                continue
            blocks, tool = session.blocks()
            session.assistant(blocks)
            if tool is not None:
                session.tool_result(tool)
            if rng.random() < 0.03:
                session.system()
        if rng.random() < 0.01:
            session.synthetic_error()


def new_session(gen: Gen, projects: list[str]) -> Session:
    rng = gen.rng
    project = projects[min(int(rng.paretovariate(1.2)) - 1, len(projects) - 1)]
    start = START + datetime.timedelta(seconds=rng.uniform(0, WINDOW_S))
    model = rng.choices([m for m, _ in MODELS], weights=[w for _, w in MODELS])[0]
    cwd = "/" + project.lstrip("-").replace("-", "/")
    branch = rng.choice(("main", "main", "dev", f"feature/{gen.token('', 6).lower()}"))
    return Session(gen, project, cwd, gen.uuid(), rng.choice(VERSIONS), model, start, branch)


def resume(gen: Gen, session: Session, earlier: Session) -> None:
    """Start ``session`` as a resumed copy of ``earlier``: its lines again, under the new session id.

    Copies with a ``requestId`` count once (ccusage keys those across sessions); a copy without
    one is another session's message (keyed on message id, session and timestamp) and counts again.
    """
    gen.features["resumed sessions"] += 1
    for text in earlier.lines:
        copy = text.replace(earlier.session_id, session.session_id)
        session.lines.append(copy)
        if '"type":"assistant"' in copy and '"requestId"' not in copy:
            record = json.loads(copy)
            message = record["message"]
            if message["model"] != "<synthetic>":
                gen.features["copies without requestId (counted again)"] += 1
                when = datetime.datetime.strptime(record["timestamp"], "%Y-%m-%dT%H:%M:%S.%f%z")
                gen.expected.add(when, message["model"], message["usage"])
                gen.recounted.add(when, message["model"], message["usage"])
    session.now, session.parent = earlier.now, earlier.parent


def project_names(seed: int, size_mb: float) -> list[str]:
    rng = random.Random(f"{seed}/projects")
    count = max(4, int(size_mb / 2.5))
    return [f"-home-dev-code-{''.join(rng.choices(B62, k=6)).lower()}-{i}" for i in range(count)]


def sessions(gen: Gen, projects: list[str], budget: int) -> Iterator[Session]:
    """Sessions until about ``budget`` bytes have been produced; some resume the one before."""
    earlier: Session | None = None  # only the latest is kept: memory stays one session's
    while budget > 0:
        session = new_session(gen, projects)
        if earlier is not None and gen.rng.random() < gen.resume:
            session.project, session.cwd = earlier.project, earlier.cwd
            resume(gen, session, earlier)
        earlier = session
        run_session(gen, session, gen.rng.randint(2, 25))
        budget -= sum(len(x) + 1 for x in session.lines)
        budget -= sum(len(x) + 1 for s in session.subagents for x in s.lines)
        yield session


def write_session(root: Path, session: Session) -> int:
    """Write one session (and its subagents); the bytes written."""
    folder = root / "projects" / session.project
    folder.mkdir(parents=True, exist_ok=True)
    data = ("\n".join(session.lines) + "\n").encode()
    (folder / f"{session.session_id}.jsonl").write_bytes(data)
    total = len(data)
    for agent in session.subagents:
        sub = folder / session.session_id / "subagents"
        sub.mkdir(parents=True, exist_ok=True)
        blob = ("\n".join(agent.lines) + "\n").encode()
        (sub / f"agent-{agent.agent_id}.jsonl").write_bytes(blob)
        total += len(blob)
    return total


CHUNKS = 8  # fixed, so the corpus is the same whatever the number of cores


@dataclass(frozen=True)
class Chunk:
    out: Path
    seed: int
    index: int
    size_mb: float
    resume: float
    no_request_id: float


Days = dict[str, dict[str, list[int]]]


def write_chunk(chunk: Chunk) -> tuple[int, int, Days, Counter[str], Days]:
    """One of the ``CHUNKS`` independent parts: (bytes, files, expected usage, features, recounted)."""
    gen = Gen(f"{chunk.seed}/{chunk.index}", chunk.resume, chunk.no_request_id)
    projects = project_names(chunk.seed, chunk.size_mb)
    files = written = 0
    for session in sessions(gen, projects, int(chunk.size_mb * MB / CHUNKS)):
        written += write_session(chunk.out, session)
        files += 1 + len(session.subagents)
    return written, files, gen.expected.days, gen.features, gen.recounted.days


def generate(
    out: Path,
    size_mb: float,
    seed: int = 1,
    *,
    resume: float = 0.05,
    no_request_id: float = 0.01,
    jobs: int | None = None,
) -> dict[str, Any]:
    """Write the corpus under ``out``; returns (and writes to ``corpus.json``) its manifest.

    ``resume`` is the share of sessions that resume the one before, ``no_request_id`` the share
    of responses written without a ``requestId``: raise them to see these shapes in a small
    corpus. ``jobs`` processes (default: the cores) write the chunks; the bytes do not depend on it.
    """
    chunks = [Chunk(out, seed, i, size_mb, resume, no_request_id) for i in range(CHUNKS)]
    jobs = jobs or os.cpu_count() or 1
    if jobs == 1 or size_mb < 16:
        parts = [write_chunk(c) for c in chunks]
    else:
        with multiprocessing.get_context("fork").Pool(min(jobs, CHUNKS)) as pool:
            parts = pool.map(write_chunk, chunks, chunksize=1)
    expected, recounted = Expected(), Expected()
    features: Counter[str] = Counter()
    for _, _, days, counted, again in parts:
        features.update(counted)
        for total, part in ((expected, days), (recounted, again)):
            for day, models in part.items():
                target = total.days.setdefault(day, {})
                for model, counts in models.items():
                    row = target.setdefault(model, [0, 0, 0, 0])
                    target[model] = [a + b for a, b in zip(row, counts, strict=True)]
    manifest = {
        "generator": "benchmarks/trace_corpus.py",
        "version": VERSION,
        "seed": seed,
        "resume": resume,
        "no_request_id": no_request_id,
        "size_mb": size_mb,
        "bytes": sum(p[0] for p in parts),
        "files": sum(p[1] for p in parts),
        "features": dict(sorted(features.items())),
        "expected_daily_utc": {day: expected.days[day] for day in sorted(expected.days)},
        # Counted by ccusage again (in expected_daily_utc), by tackroom once: expected minus this.
        "recounted_daily_utc": {day: recounted.days[day] for day in sorted(recounted.days)},
    }
    (out / "corpus.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return manifest


def append_session(path: Path, seed: int, turns: int = 10) -> dict[str, dict[str, list[int]]]:
    """Append one more session's lines (no subagents) to an existing transcript.

    Returns the usage the appended lines add, per UTC day and model.
    """
    gen = Gen(seed)
    session = new_session(gen, [path.parent.name])
    run_session(gen, session, turns, tasks=False)
    with path.open("a", encoding="utf-8") as handle:
        handle.write("\n".join(session.lines) + "\n")
    return gen.expected.days


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("out", type=Path)
    parser.add_argument("--size-mb", type=float, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=None, help="processes (default: the cores)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    manifest = generate(args.out, args.size_mb, args.seed, jobs=args.jobs)
    elapsed = time.perf_counter() - started
    print(
        f"{args.out}: {manifest['bytes'] / MB:.1f} MB in {manifest['files']} files, {elapsed:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
