"""Import a large Claude Code setup and render it everywhere, side by side with rulesync.

The setup, generated in Claude Code's native project layout: 200 commands (half of
them in namespace directories), 60 subagents, 200 skills (each with one extra
file), 60 hooks in ``.claude/settings.json``, 10 MCP servers in ``.mcp.json`` and a
CLAUDE.md. Each round, on a fresh copy:

- tackroom: ``tackroom profile import claude-code --scope project --json`` (the
  CLI), then one process rendering the imported profile (``--scope project``) for
  every built-in adapter, and again for the targets rulesync also knows;
- rulesync: ``rulesync import -t claudecode`` then ``rulesync generate`` for the
  targets both know.

Whole processes, alternating, median of N rounds after one warm-up round.
rulesync is installed from npm at a pinned version into ``.cache/bench`` (as the
render benchmark does). What each side imported is counted from what it wrote,
so a fast side that reads less says so. Writes the ``import`` section of RESULTS.md.

    .venv/bin/python benchmarks/import_bench.py [--runs 5]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, write_section
from bench_profile import PEERS, RULESYNC, rulesync_bin

from tackroom.adapters.resolve import resolve_builtins

COMMANDS, AGENTS, SKILLS, HOOKS, SERVERS = 200, 60, 200, 60, 10
FEATURES = "rules,mcp,subagents,commands,skills,hooks"
RENDER = """
import sys, pathlib
from tackroom.adapters.resolve import resolve_builtins
from tackroom.profile.load import load_profile
from tackroom.profile.render import plan_render, write
adapters = resolve_builtins()
profile = load_profile([pathlib.Path(sys.argv[1])], harnesses=[a.harness for a in adapters.values()])
out = pathlib.Path(sys.argv[2])
for name in sys.argv[3:]:
    root = out / name
    root.mkdir(parents=True)
    write(plan_render(profile, adapters[name], root=root, scope="project"))
"""
PARAGRAPH = "Keep changes small and explain the trade-offs before writing code. " * 4


def setup(root: Path) -> None:
    """A large Claude Code project, in the shapes real repositories use."""
    claude = root / ".claude"
    _put(root / "CLAUDE.md", f"# Big project\n\n{PARAGRAPH}\n\n## Commands\n- make test\n")
    for i in range(COMMANDS):
        rel = f"ns{i % 10}/cmd-{i:03d}.md" if i % 2 else f"cmd-{i:03d}.md"
        head = f'---\ndescription: Command {i}\nargument-hint: "[target] [mode]"\n'
        head += "allowed-tools: Bash(git status:*), Read, Grep\n---\n\n" if i % 3 == 0 else "---\n\n"
        _put(claude / "commands" / rel, head + f"Do task {i} for $ARGUMENTS.\n\n{PARAGRAPH}\n")
    for i in range(AGENTS):
        head = f"---\nname: agent-{i:03d}\ndescription: Agent {i} reviews one area.\n"
        head += "tools: Read, Grep, Glob\nmodel: sonnet\n---\n\n"
        _put(claude / "agents" / f"agent-{i:03d}.md", head + f"You are agent {i}.\n\n{PARAGRAPH}\n")
    for i in range(SKILLS):
        base = claude / "skills" / f"skill-{i:03d}"
        head = f"---\nname: skill-{i:03d}\ndescription: Skill {i} knows one procedure.\n---\n\n"
        _put(base / "SKILL.md", head + f"# Skill {i}\n\nSee reference.md.\n\n{PARAGRAPH}\n")
        _put(base / "reference.md", f"# Reference {i}\n\n{PARAGRAPH}\n")
    events = ["PreToolUse", "PostToolUse", "SessionStart", "UserPromptSubmit", "Stop"]
    hooks: dict[str, list[dict[str, object]]] = {}
    for i in range(HOOKS):
        event = events[i % len(events)]
        group: dict[str, object] = {
            "hooks": [{"type": "command", "command": f"echo hook {i}", "timeout": 30}]
        }
        if event in ("PreToolUse", "PostToolUse"):
            group = {"matcher": "Bash" if i % 2 else "Edit|Write", **group}
        hooks.setdefault(event, []).append(group)
    _put(claude / "settings.json", json.dumps({"hooks": hooks}, indent=2) + "\n")
    servers = {
        f"srv-{i}": {
            "command": "npx",
            "args": ["-y", f"@example/mcp-server-{i}"],
            "env": {"LOG_LEVEL": "warn"},
        }
        for i in range(SERVERS)
    }
    _put(root / ".mcp.json", json.dumps({"mcpServers": servers}, indent=2) + "\n")


def _put(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:4]} failed ({done.returncode}): {done.stderr.decode()[-1500:]}")
    return elapsed


def tackroom_import(source: Path, into: Path, cwd: Path) -> float:
    argv = [sys.executable, "-m", "tackroom", "profile", "import", "claude-code", "--from", str(source)]
    return timed([*argv, "--scope", "project", "--into", str(into), "--json"], cwd)


def tackroom_render(profile: Path, out: Path, names: list[str], cwd: Path) -> float:
    return timed([sys.executable, "-c", RENDER, str(profile), str(out), *names], cwd)


def rulesync_round(binary: Path, project: Path, out: Path, targets: str) -> tuple[float, float]:
    imported = timed([str(binary), "import", "-t", "claudecode", "-f", FEATURES, "-s"], project)
    out.mkdir(parents=True)
    generate = [str(binary), "generate", "-t", targets, "-f", FEATURES, "-s"]
    generated = timed([*generate, "--input-root", str(project), "-o", str(out)], project)
    return imported, generated


def counted_tackroom(profile: Path) -> dict[str, int]:
    return {
        "commands": sum(1 for _ in (profile / "commands").rglob("*.md"))
        if (profile / "commands").exists()
        else 0,
        "agents": len(list((profile / "agents").glob("*.md"))) if (profile / "agents").exists() else 0,
        "skills": len(list((profile / "skills").glob("*/SKILL.md"))) if (profile / "skills").exists() else 0,
        "hooks": _toml_tables(profile / "hooks.toml", "hooks"),
        "mcp": _toml_tables(profile / "mcp.toml", "servers"),
    }


def _toml_tables(path: Path, key: str) -> int:
    import tomllib

    return len(tomllib.loads(path.read_text(encoding="utf-8")).get(key, {})) if path.exists() else 0


def counted_rulesync(project: Path) -> dict[str, int]:
    base = project / ".rulesync"
    hooks = 0
    for name in ("hooks.json", "hooks.jsonc"):
        if (base / name).exists():
            from tackroom.profile import jsonc

            data = jsonc.loads((base / name).read_text(encoding="utf-8"))
            hooks = sum(len(v) for v in data.get("hooks", {}).values() if isinstance(v, list))
    mcp = 0
    for name in ("mcp.json", "mcp.jsonc"):
        if (base / name).exists():
            from tackroom.profile import jsonc

            mcp = len(jsonc.loads((base / name).read_text(encoding="utf-8")).get("mcpServers", {}))
    return {
        "commands": sum(1 for _ in (base / "commands").rglob("*.md")) if (base / "commands").exists() else 0,
        "agents": len(list((base / "subagents").rglob("*.md"))) if (base / "subagents").exists() else 0,
        "skills": len(list((base / "skills").glob("*/SKILL.md"))) if (base / "skills").exists() else 0,
        "hooks": hooks,
        "mcp": mcp,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    every = sorted(resolve_builtins())
    common = [name for name in every if name in PEERS]
    targets = ",".join(PEERS[n] for n in common)
    binary = rulesync_bin()
    sides = [
        "tackroom import",
        "tackroom render, every adapter",
        "tackroom render, common targets",
        "rulesync import",
        "rulesync generate, common targets",
    ]
    times: dict[str, list[float]] = {k: [] for k in sides}
    counts: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        source = scratch / "source"
        setup(source)
        for run in range(args.runs + 1):
            here = scratch / f"round-{run}"
            here.mkdir()
            project = here / "project"
            shutil.copytree(source, project)
            sample = {
                "tackroom import": tackroom_import(project, here / "profile", here),
                "tackroom render, every adapter": tackroom_render(
                    here / "profile", here / "all", every, here
                ),
                "tackroom render, common targets": tackroom_render(
                    here / "profile", here / "common", common, here
                ),
            }
            sample["rulesync import"], sample["rulesync generate, common targets"] = rulesync_round(
                binary, project, here / "rulesync-out", targets
            )
            if run == 0:  # the first round warms the page cache; its outputs are counted
                counts = {
                    "tackroom": counted_tackroom(here / "profile"),
                    "rulesync": counted_rulesync(project),
                }
            else:
                for name, seconds in sample.items():
                    times[name].append(seconds)
            shutil.rmtree(here)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    medians = {k: statistics.median(v) * 1000 for k, v in times.items()}
    ours_common = medians["tackroom import"] + medians["tackroom render, common targets"]
    ours_every = medians["tackroom import"] + medians["tackroom render, every adapter"]
    theirs = medians["rulesync import"] + medians["rulesync generate, common targets"]
    rows = "\n".join(f"| {k} | {v:.0f} |" for k, v in medians.items())
    kinds = ["commands", "agents", "skills", "hooks", "mcp"]
    imported = "\n".join(
        f"| {side} | " + " | ".join(str(c[k]) for k in kinds) + " |" for side, c in counts.items()
    )
    body = f"""## Import of a large setup (issue 9)

Measured {datetime.date.today()} on {machine()}, {args.runs} alternating rounds after a warm-up,
whole processes, median. The setup, in Claude Code's project layout: {COMMANDS} commands (half in
namespace directories), {AGENTS} subagents, {SKILLS} skills (each with one extra file), {HOOKS} hooks
in .claude/settings.json, {SERVERS} MCP servers, CLAUDE.md. tackroom: `profile import claude-code
--scope project` (CLI), then one process rendering the profile (`--scope project`) for every
built-in adapter ({len(every)}: {", ".join(every)}), or for the targets rulesync also knows
({", ".join(common)}). rulesync: {RULESYNC}, `import -t claudecode` then `generate` for those
targets, features {FEATURES}. Load average (1, 5, 15 min) when the rounds ended: {load}
(the machine is shared: a load above its core count slows both sides).

| step | median ms |
|---|---|
{rows}

| total | ms |
|---|---|
| tackroom import + render, common targets | {ours_common:.0f} |
| tackroom import + render, every adapter | {ours_every:.0f} |
| rulesync import + generate, common targets | {theirs:.0f} |

tackroom / rulesync, import + render on the common targets: **{ours_common / theirs:.2f}x**
(every adapter: {ours_every / theirs:.2f}x).

What each side imported from the setup (counted from what it wrote):

| side | {" | ".join(kinds)} |
|---|{"---|" * len(kinds)}
{imported}
"""
    short = [k for k in kinds if counts["tackroom"][k] < counts["rulesync"][k]]
    if short:
        body += (
            "\ntackroom read less than rulesync here ("
            + ", ".join(f"{k} {counts['tackroom'][k]} of {counts['rulesync'][k]}" for k in short)
            + "): what it did not import it did not spend time on either.\n"
        )
    write_section("import", body)
    print(body)


if __name__ == "__main__":
    main()
