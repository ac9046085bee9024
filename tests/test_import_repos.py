"""Real repositories' shapes, imported end to end through the CLI.

Each directory under ``tests/fixtures/repos`` is a project laid out as public
repositories lay out their agent configuration, with an ``EXPECT.toml`` giving
the harness it is imported as and the native items it holds, counted by hand
(see the README there). For each one, these checks:

- ``cli``: ``tackroom profile import H --from DIR --scope project --into TMP --json``
  exits 0 with no traceback, prints JSON, and leaves the source tree as it was;
- ``strict``: with ``--strict`` it exits 1 exactly when something was dropped;
- ``counts``: every item found ends imported, passthrough or dropped by name, and
  what was found is what ``EXPECT.toml`` counts;
- ``summary``: the ``--json`` summary's per-kind table (found, imported,
  passthrough, dropped) says the same as the import did;
- ``loads``: the profile written loads, and is the profile imported;
- ``render_all``: it renders (``--scope project``) for every built-in adapter;
- ``roundtrip``: rendered back for its own harness and imported again, every
  imported item comes back the same (``import(render(import(x))) == import(x)``);
- ``report``: without ``--json`` the CLI names every item it dropped;
- ``never_widen`` (fixtures with ``[denied]``): an agent the native files deny
  tools is imported with at least those tools denied, or dropped by name, and
  keeps them denied when rendered back and imported again;
- ``secrets`` (fixtures that list some): no literal secret of the source reaches
  the CLI's output or the profile written.

A check that waits for work not yet on this branch is named in the fixture's
``[pending]`` table and runs as ``xfail(strict=True)``: it must still fail, and
the merge that makes it pass turns it red until the entry is removed.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from clikit import run_cli
from tackroom.adapters.resolve import Adapter, resolve_builtins
from tackroom.profile.load import load_profile
from tackroom.profile.model import Profile
from tackroom.profile.render import Imported, import_native, plan_render, write

REPOS = Path(__file__).resolve().parent / "fixtures" / "repos"
CHECKS = (
    "cli",
    "strict",
    "report",
    "counts",
    "summary",
    "loads",
    "render_all",
    "roundtrip",
    "never_widen",
    "secrets",
)
OPTIONAL = {"never_widen": "denied", "secrets": "secrets"}
"""Checks that run only for fixtures whose EXPECT.toml has the key."""
KINDS = ("rules", "skills", "agents", "commands", "mcp", "hooks", "permissions", "env", "native")
ALIASES = {
    "rules": ("rule", "rules", "path-scoped rule", "scoped_rules", "scoped-rules", "scoped rule"),
    "skills": ("skill", "skills"),
    "agents": ("subagent", "subagents", "agent", "agents"),
    "commands": ("command", "commands"),
    "mcp": ("mcp server", "mcp servers", "mcp", "server"),
    "hooks": ("hook", "hooks"),
    "permissions": ("permission rule", "permission rules", "permissions", "permission"),
    "env": ("env variable", "env variables", "env", "environment variable"),
    "native": ("native setting", "native file", "native", "settings", "setting", "files", "file"),
}
"""Each EXPECT kind and the labels the import's report may use for it."""
CANONICAL = {label: kind for kind, labels in ALIASES.items() for label in labels}
PROFILE_ATTRS = ("rules", "skills", "agents", "commands", "mcp", "hooks", "env", "native")


def _repos() -> list[str]:
    return sorted(p.name for p in REPOS.iterdir() if (p / "EXPECT.toml").is_file())


def _expect(repo: str) -> dict[str, Any]:
    data = tomllib.loads((REPOS / repo / "EXPECT.toml").read_text(encoding="utf-8"))
    unknown = set(data) - {"harness", "found", "pending", "secrets", "denied"}
    assert not unknown, f"{repo}/EXPECT.toml: unknown keys {sorted(unknown)}"
    assert set(data["found"]) <= set(KINDS), f"{repo}/EXPECT.toml: unknown kinds in [found]"
    assert set(data.get("pending", {})) <= set(CHECKS), f"{repo}/EXPECT.toml: unknown checks in [pending]"
    return data


def _cases() -> Iterator[Any]:
    for repo in _repos():
        pending = _expect(repo).get("pending", {})
        for check in CHECKS:
            if check in OPTIONAL and not _expect(repo).get(OPTIONAL[check]):
                continue
            marks = [pytest.mark.xfail(strict=True, reason=pending[check])] if check in pending else []
            yield pytest.param(repo, check, marks=marks, id=f"{repo}-{check}")


def _canonical(label: str) -> str:
    kind = CANONICAL.get(label.lower())
    assert kind is not None, f"the import reported an item of kind {label!r}, which no EXPECT kind names"
    return kind


def _digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@dataclass
class Run:
    """One fixture imported: through the CLI (into ``into``) and through the library."""

    repo: str
    harness: str
    adapter: Adapter
    expect: dict[str, Any]
    into: Path
    scratch: Path
    returncode: int
    stdout: str
    stderr: str
    source_before: dict[str, str]

    def library(self) -> Imported:
        return import_native(self.adapter, root=REPOS / self.repo, scope="project")


_RUNS: dict[str, Run] = {}


@pytest.fixture
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The fixture ``repo`` imported once through the real CLI (cached for all its checks)."""
    repo: str = request.node.callspec.params["repo"]
    if repo not in _RUNS:
        expect = _expect(repo)
        harness = expect["harness"]
        adapters = resolve_builtins()
        assert harness in adapters, f"{repo}: no built-in adapter {harness!r}"
        scratch = tmp_path_factory.mktemp(f"import-{repo}")
        into = scratch / "profile"
        before = _digest(REPOS / repo)
        done = run_cli(
            "profile",
            "import",
            harness,
            "--from",
            str(REPOS / repo),
            "--scope",
            "project",
            "--into",
            str(into),
            "--json",
            cwd=scratch,
        )
        _RUNS[repo] = Run(
            repo,
            harness,
            adapters[harness],
            expect,
            into,
            scratch,
            done.returncode,
            done.stdout,
            done.stderr,
            before,
        )
    return _RUNS[repo]


def test_there_are_fifteen_repository_shapes() -> None:
    repos = _repos()
    assert len(repos) >= 15, repos
    harnesses = {_expect(r)["harness"] for r in repos}
    assert {"claude-code", "gemini", "opencode", "kiro", "codex", "cursor", "copilot"} <= harnesses


@pytest.mark.parametrize(("repo", "check"), list(_cases()))
def test_import_repo(repo: str, check: str, run: Run) -> None:
    CHECK[check](run)


def check_cli(run: Run) -> None:
    assert "Traceback" not in run.stderr, run.stderr
    assert run.returncode == 0, f"exit {run.returncode}: {run.stderr[-2000:]}"
    summary = json.loads(run.stdout)
    assert isinstance(summary, dict)
    assert _digest(REPOS / run.repo) == run.source_before, "import changed the tree it read"


def check_strict(run: Run) -> None:
    lost = bool(run.library().dropped)
    done = run_cli(
        "profile",
        "import",
        run.harness,
        "--from",
        str(REPOS / run.repo),
        "--scope",
        "project",
        "--into",
        str(run.scratch / "strict"),
        "--strict",
        "--json",
        cwd=run.scratch,
    )
    assert "Traceback" not in done.stderr, done.stderr
    why = f"lost={lost}, exit {done.returncode}: {done.stderr[-2000:]}"
    assert done.returncode == (1 if lost else 0), why


def _table(imported: Imported) -> dict[str, Counter[str]]:
    """Per EXPECT kind: found, imported, passthrough, dropped (item drops; a dropped field is not an item)."""
    table = {kind: Counter[str]() for kind in KINDS}
    profile = imported.profile
    for attr in ("rules", "skills", "agents", "commands", "mcp", "hooks", "env"):
        table[attr]["imported"] += len(getattr(profile, attr))
    permissions = profile.permissions
    table["permissions"]["imported"] += len(permissions.allow) + len(permissions.ask) + len(permissions.deny)
    for entry in imported.passthrough:
        table[_canonical(entry.kind)]["passthrough"] += 1
    for drop in imported.dropped:
        if drop.field is None:
            table[_canonical(drop.kind)]["dropped"] += 1
    for row in table.values():
        row["found"] = row["imported"] + row["passthrough"] + row["dropped"]
    return table


def check_counts(run: Run) -> None:
    table = _table(run.library())
    found = {kind: row["found"] for kind, row in table.items() if row["found"]}
    expected = {kind: n for kind, n in run.expect["found"].items() if n}
    assert found == expected, _explain(table, run.library())


def _explain(table: dict[str, Counter[str]], imported: Imported) -> str:
    rows = [f"{k}: {dict(v)}" for k, v in table.items() if v["found"]]
    drops = [str(d) for d in imported.dropped]
    kept = [f"{p.kind} {p.name}" for p in imported.passthrough]
    return "\n".join(["table:", *rows, "dropped:", *drops, "passthrough:", *kept])


def _summary_table(summary: Any) -> dict[str, dict[str, int]] | None:
    """The per-kind table in the CLI's ``--json`` output, wherever it sits, by EXPECT kind."""
    columns = {"found", "imported", "passthrough", "dropped"}

    def rows(value: Any) -> dict[str, dict[str, int]] | None:
        if (
            isinstance(value, dict)
            and value
            and all(isinstance(v, dict) and columns <= set(v) for v in value.values())
        ):
            return {str(k): {c: int(v[c]) for c in columns} for k, v in value.items()}
        if (
            isinstance(value, list)
            and value
            and all(isinstance(v, dict) and columns | {"kind"} <= set(v) for v in value)
        ):
            return {str(v["kind"]): {c: int(v[c]) for c in columns} for v in value}
        return None

    if not isinstance(summary, dict):
        return None
    for value in (summary, *summary.values()):
        found = rows(value)
        if found is not None:
            merged: dict[str, dict[str, int]] = {}
            for label, row in found.items():
                kind = _canonical(label)
                merged[kind] = {c: merged.get(kind, {}).get(c, 0) + row[c] for c in columns}
            return merged
    return None


def check_summary(run: Run) -> None:
    assert run.returncode == 0, run.stderr[-2000:]
    table = _summary_table(json.loads(run.stdout))
    assert table is not None, f"no per-kind found/imported/passthrough/dropped table in: {run.stdout[:1500]}"
    theirs = {k: v for k, v in table.items() if v["found"]}
    for row in theirs.values():
        assert row["found"] == row["imported"] + row["passthrough"] + row["dropped"], theirs
    expected = {kind: n for kind, n in run.expect["found"].items() if n}
    assert {k: v["found"] for k, v in theirs.items()} == expected
    columns = ("found", "imported", "passthrough", "dropped")
    ours = {k: {c: v[c] for c in columns} for k, v in _table(run.library()).items() if v["found"]}
    assert theirs == ours


def _written(run: Run) -> Profile:
    assert run.returncode == 0, run.stderr[-2000:]
    return load_profile([run.into], harnesses=[a.harness for a in resolve_builtins().values()])


def check_loads(run: Run) -> None:
    loaded = _written(run)
    imported = run.library().profile
    for attr in (*PROFILE_ATTRS, "permissions"):
        assert getattr(loaded, attr) == getattr(imported, attr), f"{attr} changed through the profile"


def check_render_all(run: Run) -> None:
    profile = _written(run)
    failures = []
    for name, adapter in sorted(resolve_builtins().items()):
        root = run.scratch / "render-all" / name
        root.mkdir(parents=True, exist_ok=True)
        try:
            write(plan_render(profile, adapter, root=root, scope="project"))
        except Exception as exc:
            failures.append(f"{name}: {type(exc).__name__}: {str(exc)[:300]}")
    assert not failures, "\n".join(failures)


def check_roundtrip(run: Run) -> None:
    first = _written(run)
    root = run.scratch / "roundtrip"
    root.mkdir(exist_ok=True)
    rendered = write(plan_render(first, run.adapter, root=root, scope="project"))
    assert not rendered.drops, "rendering back for its own harness dropped: " + "; ".join(
        str(d) for d in rendered.drops
    )
    again = import_native(run.adapter, root=root, scope="project").profile
    problems = []
    for attr in PROFILE_ATTRS:
        before = {getattr(i, "name", i): i for i in getattr(first, attr)}
        after = {getattr(i, "name", i): i for i in getattr(again, attr)}
        for key in sorted(set(before) | set(after), key=str):
            if before.get(key) != after.get(key):
                problems.append(
                    f"{attr} {key!r}:\n  imported {before.get(key)!r}\n  came back {after.get(key)!r}"
                )
    if first.permissions != again.permissions:
        problems.append(f"permissions:\n  imported {first.permissions!r}\n  came back {again.permissions!r}")
    assert not problems, "\n".join(problems)


def check_report(run: Run) -> None:
    dropped = sorted({d.name for d in run.library().dropped if d.field is None})
    done = run_cli(
        "profile",
        "import",
        run.harness,
        "--from",
        str(REPOS / run.repo),
        "--scope",
        "project",
        "--into",
        str(run.scratch / "report"),
        cwd=run.scratch,
        env={"COLUMNS": "250"},
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr[-2000:]
    said = " ".join((done.stdout + done.stderr).split())
    unnamed = [name for name in dropped if " ".join(name.split()) not in said]
    assert not unnamed, f"dropped without being named: {unnamed}\n{said[:2000]}"


def _denied(profile: Profile, agent: str) -> set[str] | None:
    found = next((a for a in profile.agents if a.name == agent), None)
    return None if found is None else set(found.disallowed_tools)


def check_never_widen(run: Run) -> None:
    imported = run.library()
    dropped = {d.name for d in imported.dropped if d.field is None}
    root = run.scratch / "never-widen"
    root.mkdir(exist_ok=True)
    write(plan_render(imported.profile, run.adapter, root=root, scope="project"))
    again = import_native(run.adapter, root=root, scope="project").profile
    for agent, tools in run.expect["denied"].items():
        denied = _denied(imported.profile, agent)
        if denied is None:
            assert agent in dropped, f"agent {agent!r} was neither imported nor dropped by name"
            continue
        assert set(tools) <= denied, f"{agent!r}: denied {sorted(denied)}, natively {tools}"
        back = _denied(again, agent)
        assert back is not None, f"agent {agent!r} did not come back from its own harness"
        assert set(tools) <= back, f"agent {agent!r} came back denying only {sorted(back)}"


def check_secrets(run: Run) -> None:
    secrets = run.expect["secrets"]
    assert "Traceback" not in run.stderr, run.stderr
    written = [p for p in run.into.rglob("*") if p.is_file()] if run.into.exists() else []
    for secret in secrets:
        assert secret not in run.stdout and secret not in run.stderr, "a literal secret reached the output"
        leaked = [str(p) for p in written if secret.encode() in p.read_bytes()]
        assert not leaked, f"a literal secret was written into the profile: {leaked}"


CHECK = {
    "cli": check_cli,
    "strict": check_strict,
    "counts": check_counts,
    "summary": check_summary,
    "loads": check_loads,
    "render_all": check_render_all,
    "roundtrip": check_roundtrip,
    "report": check_report,
    "never_widen": check_never_widen,
    "secrets": check_secrets,
}
