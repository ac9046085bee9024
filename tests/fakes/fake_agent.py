#!/usr/bin/env python3
"""A scripted fake agent: the test double for probes, a real subprocess talking to the real mock.

It behaves like a tiny Claude Code in ``-p`` mode: it reads the profile
rendered into ``$CLAUDE_CONFIG_DIR`` (``CLAUDE.md``, ``skills/*/SKILL.md``,
``agents/*.md``, ``commands/<name>.md`` for a ``/name args`` prompt), asks the
model once over the Anthropic Messages wire at ``$ANTHROPIC_BASE_URL`` with
the ``--model`` it was given, prints a claude ``stream-json`` stream (init,
assistant, result with the usage the model reported) and writes a session
transcript under ``$CLAUDE_CONFIG_DIR/projects/``. A model error is a result
with ``is_error`` and exit 1.

Each flag breaks one of those on purpose, so a probe can be shown to find it.
Stdlib only; every sleep ends after ``--lifetime`` seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fake_agent", description=__doc__.splitlines()[0])
    p.add_argument("-p", dest="prompt", required=True)
    p.add_argument("--model", default="fake-default-model")
    p.add_argument("--ignore-profile", action="store_true", help="read none of the rendered profile")
    p.add_argument("--ignore-model", action="store_true", help="ask for its own default model")
    p.add_argument("--no-usage", action="store_true", help="report no usage at all")
    p.add_argument("--wrong-usage", action="store_true", help="report twice the input tokens")
    p.add_argument("--hide-errors", action="store_true", help="report a model error as success, exit 0")
    p.add_argument("--no-transcript", action="store_true", help="write no session file")
    p.add_argument(
        "--link-transcripts",
        metavar="DIR",
        help="make projects/ a link to DIR and write the session file there",
    )
    p.add_argument("--crash", action="store_true", help="exit 3 before asking the model, printing nothing")
    p.add_argument("--garbage", action="store_true", help="print one line that is not JSON, then exit 0")
    p.add_argument(
        "--leave-child",
        action="store_true",
        help="start a child that leaves the process group and the run's marker, and sleeps",
    )
    p.add_argument(
        "--leave-cgroup",
        action="store_true",
        help="and that child moves itself to the top of every cgroup hierarchy it may (root may): "
        "an escape from everything tackroom can hold",
    )
    p.add_argument("--lifetime", type=float, default=30.0)
    return p


VERSION = "2.1.197 (fake agent)"
"""What ``--version`` prints: the version of the adapter it stands in for (its min_version is checked)."""


def main() -> int:
    if "--version" in sys.argv[1:]:
        print(VERSION)
        return 0
    args, _unknown = _parser().parse_known_args()  # claude's other flags are accepted and ignored
    if args.crash:
        print("fake_agent: crashing on purpose", file=sys.stderr)
        return 3
    if args.garbage:
        print("this is not a stream")
        return 0
    if args.leave_child:
        _leave_child(args.lifetime, leave_cgroup=args.leave_cgroup)
    config = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path(os.environ["HOME"]) / ".claude")
    session = str(uuid.uuid4())
    system, prompt = ("", args.prompt) if args.ignore_profile else _profile(config, args.prompt)
    _emit({"type": "system", "subtype": "init", "session_id": session, "model": args.model})
    model = "fake-default-model" if args.ignore_model else args.model
    try:
        answer = _ask(model, system, prompt)
    except urllib.error.HTTPError as exc:
        message = f"API Error: {exc.code} {exc.read().decode('utf-8', 'replace')[:200]}"
        if args.hide_errors:
            _emit({"type": "result", "subtype": "success", "is_error": False, "result": "ok"})
            return 0
        _emit({"type": "result", "subtype": "success", "is_error": True, "result": message})
        return 1
    text = "".join(b.get("text", "") for b in answer.get("content", []) if isinstance(b, dict))
    usage = dict(answer.get("usage") or {})
    if args.wrong_usage and "input_tokens" in usage:
        usage["input_tokens"] *= 2
    result: dict[str, Any] = {"type": "result", "subtype": "success", "is_error": False, "result": text}
    if not args.no_usage:
        result["usage"] = usage
    _emit(
        {"type": "assistant", "session_id": session, "message": {"content": [{"type": "text", "text": text}]}}
    )
    _emit({**result, "session_id": session})
    if args.link_transcripts:
        config.mkdir(parents=True, exist_ok=True)
        (config / "projects").symlink_to(args.link_transcripts)
    if not args.no_transcript:
        path = config / "projects" / "fake-project" / f"{session}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"session": session, "prompt": prompt, "text": text}) + "\n")
    return 0


def _profile(config: Path, prompt: str) -> tuple[str, str]:
    """The system prompt the rendered profile makes, and the prompt with a command expanded."""
    parts = []
    for path in [
        config / "CLAUDE.md",
        *sorted(config.glob("skills/*/SKILL.md")),
        *sorted(config.glob("agents/*.md")),
    ]:
        if path.is_file():
            parts.append(path.read_text(encoding="utf-8"))
    if prompt.startswith("/"):
        name, _, rest = prompt[1:].partition(" ")
        command = config / "commands" / f"{name}.md"
        if command.is_file():
            body = command.read_text(encoding="utf-8").split("---", 2)[-1]
            prompt = body.replace("$ARGUMENTS", rest).strip()
    return "\n\n".join(parts), prompt


def _ask(model: str, system: str, prompt: str) -> dict[str, Any]:
    base = os.environ["ANTHROPIC_BASE_URL"].rstrip("/")
    body = {
        "model": model,
        "max_tokens": 100,
        "system": system,
        "messages": [{"role": "user", "content": prompt}],
        "tools": [],
    }
    request = urllib.request.Request(
        f"{base}/v1/messages",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "x-api-key": os.environ.get("ANTHROPIC_API_KEY", "")},
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # the mock is local
    with opener.open(request) as response:
        return dict(json.loads(response.read()))


def _leave_child(lifetime: float, *, leave_cgroup: bool = False) -> None:
    """Fork a child that leaves the group and drops the run's marker, then sleeps in the workdir."""
    if os.fork() == 0:
        os.setsid()
        if leave_cgroup:
            for top in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified", "/sys/fs/cgroup/pids"):
                with contextlib.suppress(OSError):
                    Path(top, "cgroup.procs").write_text("0")
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # not the run's pipes: the run ends, this stays
            os.dup2(devnull, fd)
        env = {k: v for k, v in os.environ.items() if k != "TACKROOM_RUN_MARKER"}
        code = f"import time; time.sleep({lifetime})"
        os.execve(sys.executable, [sys.executable, "-c", code], env)


def _emit(data: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(data) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
