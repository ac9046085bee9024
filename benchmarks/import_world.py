"""Issue 26's import figures on real public repositories that no test here uses.

Given a directory of repository trees (default ``/tmp/world``: one directory per
repository, ``<owner>__<repo>``, holding that repository's agent configuration files at
their own paths, and a ``MANIFEST.json`` giving each one's owner/name, commit and
paths), for each repository and each harness whose files it holds (tackroom's own
detection, kept to the harnesses issue 26 names), in a fresh HOME and XDG dirs:

- ``tackroom profile import H --from REPO --scope project --into TMP/profile --json``
  (the console script's entry point, run with an audit hook that lists every file the
  import opened under the repository; 60 s timeout): its exit code, whether stderr holds
  a traceback, what was imported, kept and dropped;
- the profile written loads (``tackroom.profile.load.load_profile``);
- ``tackroom profile render H --profile TMP/profile --scope project --into TMP/out --json``
  and every file the import read compared with the file at the same path in TMP/out:
  the same bytes, changed, or not written back; a non-identical one is explained when a
  drop of the import names that file (or an item named in it);
- nested agents (an agent file below a subdirectory of an agents directory) imported,
  or dropped by name;
- widening: a deny rule of a settings file the import read (``deny`` lists, opencode's
  ``"deny"`` values) missing from the file rendered back and not dropped by name, or an
  agent whose native frontmatter limits its tools imported with no tool limit.

Counts per harness and in total; ``--write`` writes the ``world`` section of RESULTS.md
(the repositories by owner/name at commit, never their contents).

    .venv/bin/python benchmarks/import_world.py [--world /tmp/world] [--only OWNER__REPO] [--write]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, write_section

from tackroom.adapters.resolve import resolve_builtins
from tackroom.detect import detect
from tackroom.profile import jsonc
from tackroom.profile.load import load_profile

ROOT = Path(__file__).resolve().parent.parent
TACKROOM = ROOT / ".venv" / "bin" / "tackroom"
PYTHON = ROOT / ".venv" / "bin" / "python"
HARNESSES = ("claude-code", "cursor", "opencode", "gemini", "qwen", "codex", "copilot", "kiro")
TIMEOUT = 60
OWN = 4
"""A detection marker scored at least this is the harness's own (not AGENTS.md, which many share)."""
WRAP = r"""
import os, sys
log = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
root = os.path.realpath(sys.argv[2]) + os.sep
def hook(event, args):
    if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        try:
            path = os.path.abspath(os.fsdecode(args[0]))
        except Exception:
            return
        if path.startswith(root):
            os.write(log, (path + "\n").encode("utf-8", "surrogateescape"))
sys.addaudithook(hook)
sys.argv = ["tackroom", *sys.argv[3:]]
from tackroom.cli import main
main()
"""
"""The console script's entry point, with an audit hook listing the files opened under the source."""
AGENT_DIRS = re.compile(r"(^|/)(agents?|droids)/")
LIMITS = frozenset(
    {
        "sandbox_mode",
        "permission",
        "permissions",
        "tools",
        "disallowedTools",
        "disallowed-tools",
        "excludeTools",
    }
)
"""Fields of an item that limit what it may do: dropping one from an item kept widens it."""
LIMIT_KEYS = re.compile(r"^(tools|disallowedTools|disallowed-tools|disallowed_tools|permission)\s*:", re.M)


@dataclass
class Case:
    """One repository imported as one harness, and what came of it."""

    repo: str
    harness: str
    seconds: float = 0.0
    import_rc: int | None = None
    render_rc: int | None = None
    tracebacks: list[str] = field(default_factory=list)
    refused: str | None = None
    render_refused: str | None = None
    unloadable: str | None = None
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    drops: list[dict[str, Any]] = field(default_factory=list)
    read: list[str] = field(default_factory=list)
    identical: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    explained: list[str] = field(default_factory=list)
    unexplained: list[str] = field(default_factory=list)
    nested_agents: list[str] = field(default_factory=list)
    nested_imported: list[str] = field(default_factory=list)
    nested_lost: list[str] = field(default_factory=list)
    widened: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)


def env_for(scratch: Path) -> dict[str, str]:
    """A fresh home and XDG dirs: nothing of the real home is read or written."""
    home = scratch / "home"
    dirs = {"XDG_CONFIG_HOME": "config", "XDG_DATA_HOME": "data", "XDG_STATE_HOME": "state"}
    dirs |= {"XDG_CACHE_HOME": "cache"}
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    for key, name in dirs.items():
        (home / name).mkdir(parents=True, exist_ok=True)
        env[key] = str(home / name)
    env["TACKROOM_CONFIG_DIR"] = str(home / "config" / "tackroom")
    return env


def harnesses_of(repo: Path, adapters: Mapping[str, Any]) -> dict[str, list[str]]:
    """The harnesses (of issue 26's) whose markers tackroom's detection finds, and their own markers.

    A harness's own markers are those it scores at least ``OWN`` (its configuration directory,
    its rules file, ``.github/hooks``), not a file several harnesses share (AGENTS.md).
    """
    found = detect(repo, adapters)
    if found.root.resolve() != repo.resolve():
        raise RuntimeError(f"{repo}: detection looked under {found.root}")
    return {
        m.adapter: [k.path for k in m.markers if k.score >= OWN]
        for m in found.matches
        if m.adapter in HARNESSES
    }


def unread(case: Case, repo: Path, markers: list[str]) -> None:
    """Files under the harness's own markers that the import neither opened nor named."""
    for marker in markers:
        top = repo / marker
        files = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file())
        for path in files:
            rel = path.relative_to(repo).as_posix()
            if rel in case.read:
                continue
            named = any(
                str(path) in str(d.get("reason", "")) or rel in str(d.get("reason", "")) for d in case.drops
            )
            if not named:
                case.unread.append(rel)


def run(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[int | None, str, str]:
    try:
        done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, timeout=TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return None, "", f"timed out after {TIMEOUT} s"
    return done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")


def named(repo: Path, manifest: Mapping[str, Any]) -> str:
    """The repository's owner/name, from the manifest or its directory's name (``owner__name``)."""
    return str(manifest.get(repo.name, {}).get("repo") or repo.name.replace("__", "/", 1))


def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:400] if lines else ""


def measure(repo: Path, name: str, harness: str, markers: list[str], every: list[str]) -> Case:
    case = Case(name, harness)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="world-") as scratch_dir:
        scratch = Path(scratch_dir)
        env = env_for(scratch)
        profile, out, log = scratch / "profile", scratch / "out", scratch / "opened.log"
        argv = [str(PYTHON), "-c", WRAP, str(log), str(repo), "profile", "import", harness]
        argv += ["--from", str(repo), "--scope", "project", "--into", str(profile), "--json"]
        rc, stdout, stderr = run(argv, env, scratch)
        case.import_rc = rc
        if "Traceback" in stderr:
            case.tracebacks.append(f"import: {last_line(stderr)}")
        try:
            summary = json.loads(stdout) if stdout.strip() else None
        except json.JSONDecodeError:
            summary = None
        if rc != 0 or not isinstance(summary, dict):
            case.refused = f"exit {rc}: {last_line(stderr) or last_line(stdout)}"
            case.seconds = time.perf_counter() - start
            return case
        case.counts = summary.get("counts", {})
        case.drops = list(summary.get("dropped", []))
        opened = (
            log.read_text(encoding="utf-8", errors="surrogateescape").splitlines() if log.exists() else []
        )
        case.read = sorted({os.path.relpath(p, repo) for p in opened if Path(p).is_file()})
        loaded = None
        if profile.exists():
            try:
                loaded = load_profile([profile], harnesses=every)
            except Exception as error:  # any failure to load is the finding
                case.unloadable = f"{type(error).__name__}: {str(error)[:400]}"
        origins = _origins(profile, harness)
        out.mkdir()
        if profile.exists():
            argv = [str(TACKROOM), "profile", "render", harness, "--profile", str(profile)]
            argv += ["--scope", "project", "--into", str(out), "--json"]
            rc, stdout, stderr = run(argv, env, scratch)
            case.render_rc = rc
            if "Traceback" in stderr:
                case.tracebacks.append(f"render: {last_line(stderr)}")
            if rc != 0:
                case.render_refused = f"exit {rc}: {last_line(stderr) or last_line(stdout)}"
        compare(case, repo, out)
        unread(case, repo, markers)
        agents(case, repo, origins, loaded)
        denials(case, repo, out)
    case.seconds = time.perf_counter() - start
    return case


def _origins(profile: Path, harness: str) -> dict[str, set[tuple[str, str]]]:
    """Each native file imported items came from (relative path) and the items, from origins.json."""
    path = profile / "native" / harness / "origins.json"
    found: dict[str, set[tuple[str, str]]] = {}
    if path.exists():
        for origin in json.loads(path.read_text(encoding="utf-8")).get("origins", []):
            found.setdefault(origin["path"], set()).update((i[0], i[1]) for i in origin.get("items", []))
    return found


def names_file(drop: dict[str, Any], repo: Path, rel: str, text: str) -> bool:
    """Whether a drop of the import names this file, or names an item written in it."""
    reason = str(drop.get("reason", ""))
    if str(repo / rel) in reason or re.search(rf"(^|[\s'\"(/]){re.escape(rel)}($|[\s'\":,)])", reason):
        return True
    named = str(drop.get("name", ""))
    if not named or len(named) < 3 or named not in text:
        return False
    paths = re.findall(rf"{re.escape(str(repo))}/?([^\s:'\"]*)", reason)
    # a drop naming another file is not this file's; one naming a directory above it may be
    return not paths or any(rel == p or rel.startswith(p.rstrip("/") + "/") or not p for p in paths)


def compare(case: Case, repo: Path, out: Path) -> None:
    for rel in case.read:
        source, back = repo / rel, out / rel
        if back.is_file() and back.read_bytes() == source.read_bytes():
            case.identical.append(rel)
            continue
        (case.changed if back.is_file() else case.missing).append(rel)
        text = source.read_text(encoding="utf-8", errors="replace")
        if any(names_file(d, repo, rel, text) for d in case.drops):
            case.explained.append(rel)
        else:
            case.unexplained.append(rel)


def agents(case: Case, repo: Path, origins: dict[str, set[tuple[str, str]]], loaded: Any) -> None:
    """Nested agents imported (or dropped by name); a tool-limited agent imported without a limit."""
    by_name = {a.name: a for a in loaded.agents} if loaded is not None else {}
    for rel in case.read:
        match = AGENT_DIRS.search(rel)
        if not match or not rel.endswith((".md", ".toml", ".yaml", ".yml", ".json")):
            continue
        items = [n for kind, n in origins.get(rel, set()) if kind == "agents"]
        text = (repo / rel).read_text(encoding="utf-8", errors="replace")
        dropped = any(names_file(d, repo, rel, text) for d in case.drops)
        if "/" in rel[match.end() :]:
            case.nested_agents.append(rel)
            (case.nested_imported if items else case.nested_lost if not dropped else []).append(rel)
        head = text.split("\n---", 1)[0] if text.lstrip("\ufeff").startswith("---") else ""
        if LIMIT_KEYS.search(head) and not dropped:
            for item in items:
                agent = by_name.get(item)
                if agent is not None and not agent.tools and not agent.disallowed_tools:
                    case.widened.append(
                        f"{rel}: agent {item!r} limits its tools natively, imported with none"
                    )


def _denied(value: Any, trail: str = "") -> set[str]:
    """Deny rules in a settings document: entries of lists under ``deny``, keys set to "deny"."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{trail}/{key}"
            if key == "deny" and isinstance(item, list):
                found.update(f"{here}:{v}" for v in item if isinstance(v, str))
            elif item == "deny":
                found.add(here)
            else:
                found |= _denied(item, here)
    elif isinstance(value, list):
        for item in value:
            found |= _denied(item, trail)
    return found


def _settings(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".toml":
            return tomllib.loads(text)
        return jsonc.loads(text)
    except Exception:  # a file that does not parse holds no rules
        return None


def denials(case: Case, repo: Path, out: Path) -> None:
    for drop in case.drops:
        if drop.get("field") not in LIMITS:
            continue
        reason = str(drop.get("reason", ""))
        if "has no neutral form: kept without" in reason:
            continue  # narrowed, not widened: the item keeps none of that tool (the engine's tests hold it)
        files = [rel for rel in case.read if str(repo / rel) in reason]
        if not files or any(rel not in case.identical for rel in files):
            what = f"{drop.get('kind')} {drop.get('name')!r}"
            case.widened.append(f"{what} kept without its {drop.get('field')!r}: {reason[:200]}")
    for rel in case.read:
        if rel in case.identical or not rel.endswith((".json", ".jsonc", ".toml")):
            continue
        before = _denied(_settings(repo / rel))
        if not before:
            continue
        after = _denied(_settings(out / rel)) if (out / rel).is_file() else set()
        counted = {str(d.get("name")) for d in case.drops if d.get("field") in LIMITS}
        text = (repo / rel).read_text(encoding="utf-8", errors="replace")
        for rule in sorted(before - after):
            if any(f"/{name}/" in rule for name in counted):
                continue  # the item's dropped limit is counted once, above
            named = rule.rsplit(":", 1)[-1].rsplit("/", 1)[-1]
            said = any(named and named in f"{d.get('name', '')} {d.get('reason', '')}" for d in case.drops)
            said = said or any(
                names_file(d, repo, rel, text) and str(d.get("kind", "")).startswith("perm")
                for d in case.drops
            )
            if not said:
                case.widened.append(f"{rel}: deny rule {rule!r} not rendered back, not dropped by name")


def table(cases: list[Case]) -> tuple[list[str], dict[str, int]]:
    rows = [
        "| harness | repos | files read | same bytes | changed | not written | explained | unexplained "
        "| not read, not named | tracebacks | refusals | unloadable | widening "
        "| nested agents (imported/found) | drops |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    totals: Counter[str] = Counter()
    for harness in [*HARNESSES, "total"]:
        chosen = [c for c in cases if harness in ("total", c.harness)]
        if not chosen:
            continue
        row = {
            "repos": len({c.repo for c in chosen}),
            "read": sum(len(c.read) for c in chosen),
            "identical": sum(len(c.identical) for c in chosen),
            "changed": sum(len(c.changed) for c in chosen),
            "missing": sum(len(c.missing) for c in chosen),
            "explained": sum(len(c.explained) for c in chosen),
            "unexplained": sum(len(c.unexplained) for c in chosen),
            "unread": sum(len(c.unread) for c in chosen),
            "tracebacks": sum(len(c.tracebacks) for c in chosen),
            "refusals": sum(bool(c.refused) + bool(c.render_refused) for c in chosen),
            "unloadable": sum(bool(c.unloadable) for c in chosen),
            "widening": sum(len(c.widened) for c in chosen),
            "nested": sum(len(c.nested_agents) for c in chosen),
            "nested_imported": sum(len(c.nested_imported) for c in chosen),
            "drops": sum(len(c.drops) for c in chosen),
        }
        if harness == "total":
            totals.update(row)
        rows.append(
            f"| {harness} | {row['repos']} | {row['read']} | {row['identical']} | {row['changed']} "
            f"| {row['missing']} | {row['explained']} | {row['unexplained']} | {row['unread']} "
            f"| {row['tracebacks']} "
            f"| {row['refusals']} | {row['unloadable']} | {row['widening']} "
            f"| {row['nested_imported']}/{row['nested']} | {row['drops']} |"
        )
    return rows, dict(totals)


def findings(cases: list[Case]) -> list[str]:
    lines = []
    for c in cases:
        where = f"{c.repo} as {c.harness}"
        lines += [f"- traceback: {where}: {t}" for t in c.tracebacks]
        if c.refused:
            lines.append(f"- import refused: {where}: {c.refused}")
        if c.render_refused:
            lines.append(f"- render refused: {where}: {c.render_refused}")
        if c.unloadable:
            lines.append(f"- unloadable: {where}: {c.unloadable}")
        lines += [f"- widening: {where}: {w}" for w in c.widened]
        lines += [f"- nested agent lost: {where}: `{n}`" for n in c.nested_lost]
        for rel in c.unexplained:
            how = "changed" if rel in c.changed else "not written back"
            lines.append(f"- unexplained difference: {where}: `{rel}` {how}")
        lines += [f"- not read, not named: {where}: `{rel}`" for rel in c.unread]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--world", type=Path, default=Path("/tmp/world"))
    parser.add_argument("--only", action="append", default=[], help="a repository directory name")
    parser.add_argument("--write", action="store_true", help="write the world section of RESULTS.md")
    parser.add_argument("--details", type=Path, help="write every case as JSON here")
    args = parser.parse_args()
    world = args.world.resolve()
    manifest_path = world / "MANIFEST.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.exists() else {}
    adapters = resolve_builtins()
    every = sorted({a.harness for a in adapters.values()})
    repos = sorted(p for p in world.iterdir() if p.is_dir() and (not args.only or p.name in args.only))
    cases: list[Case] = []
    start = time.perf_counter()
    for repo in repos:
        for harness, markers in harnesses_of(repo, adapters).items():
            case = measure(repo, named(repo, manifest), harness, markers, every)
            cases.append(case)
            bad = case.refused or case.render_refused or case.tracebacks or case.unexplained or case.widened
            state = "FINDING" if bad or case.unread or case.unloadable or case.nested_lost else "ok"
            print(
                f"{repo.name:50} {harness:12} read {len(case.read):3} same {len(case.identical):3} "
                f"drops {len(case.drops):3} {case.seconds:5.2f}s {state}",
                flush=True,
            )
    elapsed = time.perf_counter() - start
    rows, totals = table(cases)
    found = findings(cases)
    print("\n".join(["", *rows, "", *found, "", f"{len(cases)} imports in {elapsed:.1f} s"]))
    if args.details:
        args.details.write_text(json.dumps([c.__dict__ for c in cases], indent=1), encoding="utf-8")
    if args.write:
        write_section("world", report(cases, rows, found, totals, manifest, repos, elapsed))
        print("wrote the world section of", Path("benchmarks/RESULTS.md"))


def report(
    cases: list[Case],
    rows: list[str],
    found: list[str],
    totals: dict[str, int],
    manifest: dict[str, Any],
    repos: list[Path],
    elapsed: float,
) -> str:
    files = sum(len(manifest.get(r.name, {}).get("paths", [])) for r in repos)
    listed = []
    for repo in repos:
        entry = manifest.get(repo.name, {})
        commits = sorted(set(entry.get("commits", {}).values())) if entry.get("commits") else []
        at = ", ".join(c[:12] for c in commits) if commits else "commit unknown"
        harnesses = ", ".join(sorted({c.harness for c in cases if c.repo == named(repo, manifest)}))
        listed.append(f"- {named(repo, manifest)} at {at} ({harnesses or 'none detected'})")
    today = datetime.date.today().isoformat()
    lost = totals.get("unexplained", 0) + totals.get("unread", 0)
    head = [
        "## Import on real repositories (issue 26)",
        "",
        f"{today}, {machine()}: `.venv/bin/python benchmarks/import_world.py --write` over "
        f"{len(repos)} public repositories never used in tests here ({files} configuration files, "
        f"copied at their own paths from the commit each was read at, not committed), {len(cases)} "
        "imports (one per repository and "
        f"harness detected), in {elapsed:.0f} s. Each: `tackroom profile import H --from REPO --scope "
        "project --json` in a fresh home, the profile loaded, rendered back with `tackroom profile "
        "render H --scope project` into an empty directory, and every file the import read compared "
        "byte for byte with the file rendered back; a difference is explained when a drop of the "
        "import names that file or an item of it.",
        "",
        f"Tracebacks {totals.get('tracebacks', 0)}, refusals (a whole import or render) "
        f"{totals.get('refusals', 0)}, unloadable profiles {totals.get('unloadable', 0)}, widening "
        f"{totals.get('widening', 0)}, silent losses {lost} "
        f"({totals.get('unexplained', 0)} files rendered back otherwise with no drop naming them, "
        f"{totals.get('unread', 0)} files in the harness's own places neither read nor named); nested "
        f"agents imported {totals.get('nested_imported', 0)} of {totals.get('nested', 0)}; files read "
        f"{totals.get('read', 0)}, rendered back the same bytes {totals.get('identical', 0)}.",
        "",
        *rows,
        "",
    ]
    tail = ["Findings:", "", *found, ""] if found else ["No findings.", ""]
    return "\n".join([*head, *tail, "Repositories:", "", *listed])


if __name__ == "__main__":
    main()
