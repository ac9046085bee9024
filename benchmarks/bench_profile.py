"""Render one realistic profile for every adapter, side by side with ``rulesync generate``.

The profile: 10 rules, 10 skills, 5 subagents, 5 commands, 5 MCP servers, 8 hooks,
written once in tackroom's layout and once in rulesync's (``.rulesync/``). Both
sides run as whole processes, alternating, for the targets both support; tackroom
also renders for every adapter whose renderers exist. rulesync is installed from
npm at a pinned version into ``.cache/bench``. Writes the ``profile`` section of
RESULTS.md.

    .venv/bin/python benchmarks/bench_profile.py [--runs 10]
"""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, write_section

from tackroom.adapters.resolve import resolve_builtins
from tackroom.profile.engines import engines
from tackroom.profile.model import Agent, Command, Hook, McpServer, Profile, Rule, Skill
from tackroom.profile.write import write_profile
from tackroom.vocabulary import MOMENTS

ROOT = Path(__file__).resolve().parent.parent
RULESYNC = "rulesync@15.0.0"  # the newest release that runs on this machine's Node.js 20
#: tackroom adapter -> rulesync target, for the harnesses both know.
PEERS = {
    "claude-code": "claudecode",
    "codex": "codexcli",
    "copilot": "copilotcli",
    "opencode": "opencode",
    "pi": "pi",
    "qwen": "qwencode",
    "goose": "goose",
    "kiro": "kiro-cli",
    "cursor": "cursor",
}
RENDER = """
import sys, pathlib
from tackroom.adapters.resolve import resolve_builtins
from tackroom.profile.load import load_profile
from tackroom.profile.render import plan_render, write
profile = load_profile([pathlib.Path(sys.argv[1])])
out = pathlib.Path(sys.argv[2])
for name in sys.argv[3:]:
    write(plan_render(profile, resolve_builtins()[name], root=out / name))
"""


def realistic() -> Profile:
    text = "Prefer small functions. Name things for what they mean. " * 8 + "\n"
    return Profile(
        rules=tuple(Rule(f"{i:02d}-rule", f"# Rule {i}\n\n{text}") for i in range(10)),
        skills=tuple(
            Skill(f"skill-{i}", f"Skill {i} does a thing.", f"Steps for skill {i}.\n{text}")
            for i in range(10)
        ),
        agents=tuple(
            Agent(f"agent-{i}", f"Agent {i} reviews.", f"You are agent {i}.\n{text}") for i in range(5)
        ),
        commands=tuple(Command(f"cmd-{i}", f"Command {i}.", f"Do {i} with $ARGUMENTS\n") for i in range(5)),
        mcp=tuple(McpServer(f"srv-{i}", command="npx", args=("-y", f"server-{i}")) for i in range(5)),
        hooks=tuple(
            Hook(f"hook-{i}", MOMENTS[i % len(MOMENTS)], "command", command=f"echo hook {i}")
            for i in range(8)
        ),
    )


def rulesync_tree(profile: Profile, root: Path) -> None:
    base = root / ".rulesync"
    for i, rule in enumerate(profile.rules):
        root_flag = "true" if i == 0 else "false"
        head = f"---\nroot: {root_flag}\ntargets: ['*']\ndescription: '{rule.name}'\nglobs: ['**/*']\n---\n"
        _put(base / "rules" / f"{rule.name}.md", head + rule.text)
    for skill in profile.skills:
        head = f"---\nname: {skill.name}\ndescription: '{skill.description}'\ntargets: ['*']\n---\n"
        _put(base / "skills" / skill.name / "SKILL.md", head + skill.body)
    for agent in profile.agents:
        head = f"---\nname: {agent.name}\ntargets: ['*']\ndescription: '{agent.description}'\n---\n"
        _put(base / "subagents" / f"{agent.name}.md", head + agent.body)
    for command in profile.commands:
        head = f"---\ntargets: ['*']\ndescription: '{command.description}'\n---\n"
        _put(base / "commands" / f"{command.name}.md", head + command.body)
    servers = {s.name: {"type": "stdio", "command": s.command, "args": list(s.args)} for s in profile.mcp}
    _put(base / "mcp.jsonc", json.dumps({"mcpServers": servers}, indent=2))
    events = {"session-start": "sessionStart", "before-tool": "preToolUse", "after-tool": "postToolUse"}
    hooks: dict[str, list[dict[str, str]]] = {}
    for hook in profile.hooks:
        if hook.moment in events:
            hooks.setdefault(events[hook.moment], []).append({"command": hook.command or ""})
    _put(base / "hooks.jsonc", json.dumps({"version": 1, "hooks": hooks}, indent=2))


def _put(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def rulesync_bin() -> Path:
    prefix = ROOT / ".cache" / "bench" / "rulesync"
    binary = prefix / "node_modules" / ".bin" / "rulesync"
    if not binary.exists():
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(prefix), RULESYNC], check=True
        )
    return binary


def timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:3]} failed: {done.stderr.decode()[-1500:]}")
    return elapsed


def renderable() -> list[str]:
    return sorted(
        name
        for name, adapter in resolve_builtins().items()
        if all(c is None or c.render in engines() for _, c in adapter.spec.capabilities)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    profile = realistic()
    ours = renderable()
    common = [name for name in ours if name in PEERS]
    binary = rulesync_bin()
    features = "rules,mcp,subagents,commands,skills,hooks"
    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        write_profile(profile, scratch / "profile")
        rulesync_tree(profile, scratch / "rs")
        targets = ",".join(PEERS[n] for n in common)
        sides = {
            "tackroom, common targets": [
                sys.executable,
                "-c",
                RENDER,
                str(scratch / "profile"),
                "OUT",
                *common,
            ],
            "rulesync generate, common targets": [
                str(binary),
                "generate",
                "-t",
                targets,
                "-f",
                features,
                "-s",
            ],
            "tackroom, every renderable adapter": [
                sys.executable,
                "-c",
                RENDER,
                str(scratch / "profile"),
                "OUT",
                *ours,
            ],
        }
        times: dict[str, list[float]] = {k: [] for k in sides}
        for run in range(args.runs + 1):
            for name, argv in sides.items():
                out = scratch / f"out-{run}-{len(times[name])}"
                argv = [str(out) if a == "OUT" else a for a in argv]
                cwd = scratch / "rs"
                if argv[0] == str(binary):
                    shutil.rmtree(cwd / ".claude", ignore_errors=True)
                elapsed = timed(argv, cwd)
                if run:  # the first round warms the page cache
                    times[name].append(elapsed)
    medians = {k: statistics.median(v) * 1000 for k, v in times.items()}
    ratio = medians["tackroom, common targets"] / medians["rulesync generate, common targets"]
    rows = "\n".join(f"| {k} | {v:.0f} |" for k, v in medians.items())
    body = f"""## Profile rendering vs rulesync (issue 4)

Measured {datetime.date.today()} on {machine()}, {args.runs} alternating rounds, whole processes, median.
Profile: 10 rules, 10 skills, 5 subagents, 5 commands, 5 MCP servers, 8 hooks. Common targets
(both render them; tackroom's renderers exist): {", ".join(common)}.
rulesync: {RULESYNC}, features {features}.
tackroom renders for every adapter whose renderers exist: {", ".join(ours)}.

| side | median ms |
|---|---|
{rows}

tackroom / rulesync on the common targets: **{ratio:.2f}x**.
"""
    write_section("profile", body)
    print(body)


if __name__ == "__main__":
    main()
