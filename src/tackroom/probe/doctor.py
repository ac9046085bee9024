"""``tackroom doctor``: is each adapter in use set up, and is what it claims still proven?

For each adapter, in order: the executable resolves (managed install, then
PATH); ``version_argv`` reports at least ``min_version``; the installed version
against ``verified_with`` (drift is a warning naming both); its home and
transcript roots exist or can be created; the credentials it would pass are
present (names only, never values); the latest capability row, its age and
outcome; and each capability the adapter declares that the row found false,
with the adapter keys behind it and where each was set, so the fix is named.
``prove=True`` probes first, so the row is fresh.

A check is ``ok``, ``warn`` (worth knowing, not broken) or ``fail``; every
``warn`` and ``fail`` says how to fix it. A report passes when nothing failed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tackroom.adapters.versions import at_least
from tackroom.errors import TackroomError
from tackroom.probe.declared import declared_capabilities as declared_capabilities
from tackroom.probe.rows import OUTCOME_NOTE, Row
from tackroom.values import Known, Stale, Value, age, known, show, to_json, unknown

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter
    from tackroom.adapters.resolve import AdapterSet
    from tackroom.harnesses import Located
    from tackroom.state import CapabilityRows

Status = Literal["ok", "warn", "fail"]


@dataclass(frozen=True)
class Check:
    """One check of one adapter: its status, what was found, and how to fix it."""

    name: str
    status: Status
    message: str
    fix: str = ""

    def to_json(self) -> dict[str, str]:
        return {"check": self.name, "status": self.status, "message": self.message, "fix": self.fix}


@dataclass
class Report:
    """Every check of one adapter."""

    adapter: str
    checks: list[Check] = field(default_factory=list)
    version: Value[str] = field(default_factory=lambda: unknown("not checked"))
    row: Row | None = None

    @property
    def ok(self) -> bool:
        """Nothing failed (warnings are allowed)."""
        return all(c.status != "fail" for c in self.checks)

    def add(self, name: str, status: Status, message: str, fix: str = "") -> None:
        self.checks.append(Check(name, status, message, fix))

    def to_json(self) -> dict[str, Any]:
        return {
            "adapter": self.adapter,
            "ok": self.ok,
            "harness_version": to_json(self.version),
            "row": self.row.to_json() if self.row is not None else None,
            "checks": [c.to_json() for c in self.checks],
        }


def adapters_in_use(
    adapters: AdapterSet, workdir: Path, environ: Mapping[str, str]
) -> tuple[list[Adapter], str]:
    """The adapters a repository uses, and why: the project file's ``harness``, else what detection
    finds (every top scorer: a tie is checked whole, not guessed), else every installed harness."""
    from tackroom.detect import detect
    from tackroom.harnesses import locate
    from tackroom.project import load_project

    project = load_project(workdir)
    if project is not None and project.harness:
        return [adapters[project.harness]], f'harness = "{project.harness}" in {project.file}'
    found = detect(workdir, adapters)
    if found.matches:
        top = [m.adapter for m in found.matches if m.score == found.score]
        return [adapters[n] for n in top], f"detected in {found.root} (score {found.score})"
    installed = []
    for adapter in adapters.values():
        try:
            if locate(adapter, environ) is not None:
                installed.append(adapter)
        except TackroomError:
            installed.append(adapter)  # a broken install is in use, and doctor will say what is wrong
    return installed, "no harness named, none detected here: every installed one"


async def adoctor(
    adapter: Adapter,
    store: CapabilityRows,
    *,
    environ: Mapping[str, str] | None = None,
    workdir: Path | None = None,
    prove: bool = False,
    capabilities: Iterable[str] | None = None,
    timeout_s: float = 120.0,
) -> Report:
    """Check one adapter (probing it first with ``prove``: every capability, or ``capabilities``)."""
    environ = os.environ if environ is None else environ
    report = Report(adapter.name)
    located = _executable(report, adapter, environ)
    if located is not None:
        report.version = _version(report, adapter, located)
    _paths(report, adapter, environ, (workdir or Path.cwd()).resolve())
    _credentials(report, adapter, environ)
    if prove and located is not None:
        from tackroom.probe.runner import aprobe

        await aprobe(
            adapter,
            executable=located,
            capabilities=capabilities,
            store=store,
            environ=environ,
            timeout_s=timeout_s,
        )
    _proof(report, adapter, store, located)
    return report


def _executable(report: Report, adapter: Adapter, environ: Mapping[str, str]) -> Located | None:
    from tackroom.harnesses import locate

    install = f"tackroom install {adapter.name}" + (
        f" (installs {adapter.verified_with})" if adapter.verified_with else ""
    )
    try:
        located = locate(adapter, environ)
    except TackroomError as exc:
        report.add("executable", "fail", str(exc), f"run `{install}`")
        return None
    if located is None and "/" in adapter.executable:
        report.add(
            "executable",
            "fail",
            f"{adapter.executable} (the adapter's executable) does not exist",
            f"install the harness there, or set [adapter.{adapter.name}] executable to where it is",
        )
        return None
    if located is None:
        report.add(
            "executable",
            "fail",
            f"{adapter.executable!r} is not installed by tackroom and not on PATH",
            f"run `{install}`, put {adapter.executable!r} on PATH, or set the adapter's executable to a path",
        )
        return None
    where = {"managed": "installed by tackroom", "path": "on PATH", "configured": "the adapter's executable"}
    report.add("executable", "ok", f"{located.path} ({where[located.origin]})")
    return located


def _version(report: Report, adapter: Adapter, located: Located) -> Value[str]:
    from tackroom.harnesses import probe_version

    version = located.version or probe_version(adapter, located)
    shown = " ".join([located.path.name, *adapter.version_argv])
    if version is None:
        report.add(
            "version", "fail", f"`{shown}` printed no version", f"check that `{shown}` runs and prints one"
        )
        return unknown(f"`{shown}` printed no version")
    minimum = adapter.effective.get("min_version")
    if minimum is not None and at_least(version, str(minimum)) is False:
        report.add(
            "version",
            "fail",
            f"{version} is older than {minimum}, the oldest this adapter works with",
            f"run `tackroom install {adapter.name}` or point the adapter's executable at a newer one",
        )
    else:
        report.add("version", "ok", f"{version}" + (f" (at least {minimum})" if minimum else ""))
    _drift(report, adapter, version)
    return known(version)


def _drift(report: Report, adapter: Adapter, version: str) -> None:
    verified = adapter.verified_with
    if verified is None:
        report.add(
            "verified",
            "warn",
            "the adapter records no verified_with: its facts were never proven on a harness",
            f"prove them: `tackroom doctor {adapter.name} --prove`",
        )
    elif version in adapter.verified_versions and version != verified:
        report.add("verified", "ok", f"{version} was verified too (the newest verified is {verified})")
    elif version != verified:
        report.add(
            "verified",
            "warn",
            f"drift: {version} is installed, the adapter was verified with {verified}",
            f"prove this version (`tackroom doctor {adapter.name} --prove`) or install the verified one "
            f"(`tackroom install {adapter.name} --version {verified}`)",
        )
    else:
        report.add("verified", "ok", f"{version} is the version the adapter was verified with")


def _paths(report: Report, adapter: Adapter, environ: Mapping[str, str], workdir: Path) -> None:
    """Home relocation defaults and transcript roots, resolved as a run in the real home would."""
    from tackroom.adapters.templates import expand_path

    home = environ.get("HOME", str(Path.home()))
    places = [("home", f"{name} ({default})", default) for name, default in adapter.spec.home.items()]
    if adapter.spec.transcripts is not None:
        places += [("transcripts", root, root) for root in adapter.spec.transcripts.roots]
    for check, label, template in places:
        path = expand_path(template, env=environ, home=home, workdir=str(workdir))
        problem = _not_creatable(path)
        if problem is None:
            state = "exists" if path.is_dir() else "can be created"
            report.add(check, "ok", f"{label}: {path} {state}")
        else:
            report.add(check, "fail", f"{label}: {path} {problem}", f"make {path} a writable directory")


def _not_creatable(path: Path) -> str | None:
    """Why ``path`` is neither a directory nor creatable (None when it is fine)."""
    if path.is_dir():
        return None if os.access(path, os.W_OK) else "is not writable"
    if path.exists():
        return "exists and is not a directory"
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return f"cannot be created: {parent} is not a directory"
    return None if os.access(parent, os.W_OK) else f"cannot be created: {parent} is not writable"


def _credentials(report: Report, adapter: Adapter, environ: Mapping[str, str]) -> None:
    names = list(adapter.spec.env.pass_)
    if not names:
        report.add("credentials", "ok", "the adapter passes no credentials")
        return
    present = [n for n in names if environ.get(n)]
    if present:
        report.add("credentials", "ok", f"set: {', '.join(present)} (values not shown)")
        return
    report.add(
        "credentials",
        "warn",
        f"none of {', '.join(names)} is set: runs against the mock need none; a real endpoint does",
        f"export one of {', '.join(names)}, or run with --credentials to use the harness's own login",
    )


def _proof(report: Report, adapter: Adapter, store: CapabilityRows, located: Located | None) -> None:
    from tackroom.probe.matrix import row_version

    version = report.version.value if isinstance(report.version, Known) else None
    row = (store.latest(adapter.name, version) if version else None) or store.latest(adapter.name)
    report.row = row
    prove = _prove(adapter)
    if row is None:
        report.add("proof", "warn", "never probed: nothing it claims is proven here", f"run {prove}")
        return
    on = row.harness_version or "an unknown version"
    when = f"probed {age(row.probed_at)} ago ({row.probed_at:%Y-%m-%d %H:%M} UTC) on {on}"
    if row.outcome != "ok":
        why = row.notes.get(OUTCOME_NOTE, "no reason recorded")
        report.add(
            "proof", "fail", f"{when}: outcome {row.outcome}: {why}", f"fix what it says, then run {prove}"
        )
    else:
        shown = row_version(adapter, row, report.version)
        if isinstance(shown, Stale):
            report.add("proof", "warn", f"{when}: {show(shown)}: {shown.why}", f"run {prove}")
        else:
            report.add("proof", "ok", f"{when}: outcome ok")
    _capabilities(report, adapter, row)


def _capabilities(report: Report, adapter: Adapter, row: Row) -> None:
    # What the adapter claims for the version the row is of (its since entries applied).
    declared = declared_capabilities(adapter.at(row.harness_version) if row.harness_version else adapter)
    proven = [c for c in declared if row.supports.get(c) is True]
    for capability in declared:
        value = row.supports.get(capability)
        note = row.notes.get(capability, "")
        if value is False:
            report.add(
                capability, "fail", f"{capability} is false: {note}", what_to_change(adapter, capability)
            )
        elif value == "n/o":
            report.add(
                capability,
                "warn",
                f"{capability}: the harness showed nothing either way ({note})",
                f"nothing to change unless you rely on it; {what_to_change(adapter, capability)}",
            )
    untested = [c for c in declared if c not in row.supports]
    message = f"{len(proven)} of {len(declared)} declared capabilities proven"
    if untested:
        report.add(
            "capabilities", "warn", f"{message}; untested: {', '.join(untested)}", f"run {_prove(adapter)}"
        )
    else:
        report.add("capabilities", "ok", message)


def _prove(adapter: Adapter) -> str:
    return f"`tackroom doctor {adapter.name} --prove`"


#: The adapter keys each capability rests on, to name what to change when it stopped holding.
KEYS: Mapping[str, Sequence[str]] = {
    "rules": ("capabilities.rules",),
    "skills": ("capabilities.skills",),
    "agents": ("capabilities.subagents",),
    "commands": ("capabilities.commands", "options.command"),
    "mcp": ("capabilities.mcp", "tools.mcp", "tools.mcp_call", "tools.mcp_load"),
    "hooks": ("capabilities.hooks", "tools"),
    "usage": ("model_endpoint",),
    "endpoint": ("options.model", "model_endpoint"),
    "error": ("model_endpoint",),
    "process": (),
    "transcripts": ("transcripts", "home"),
}


def what_to_change(adapter: Adapter, capability: str) -> str:
    """The fix for a capability that no longer holds: the operator settings behind it, or the built-in."""
    from tackroom.adapters.resolve import resolve_builtins

    prefixes = KEYS.get(capability.split(".", 1)[0], ())
    overridden = [
        (key, origin)
        for key, origin in sorted(adapter.origins.items())
        if origin.label != "builtin"
        and not origin.label.startswith("extends ")
        and any(key == p or key.startswith(p + ".") for p in prefixes)
    ]
    builtin = resolve_builtins()[adapter.harness]  # the built-in at the root of its extends chain
    if overridden:
        said = []
        for key, origin in overridden:
            now = _lookup(adapter.effective, key)
            was = _lookup(builtin.effective, key)
            said.append(
                f"{key} = {now!r} is set in {origin.label}"
                + (f" (the built-in says {was!r})" if was is not None else " (not in the built-in)")
            )
        return (
            "change what your operator file sets: " + "; ".join(said) + (", or remove it to use the built-in")
        )
    verified = adapter.verified_with
    return (
        f"the built-in adapter's claim no longer holds on this version: install the verified one "
        f"(`tackroom install {adapter.name} --version {verified}`) or report it"
        if verified
        else "the adapter's claim does not hold: fix the adapter's data for this capability"
    )


def _lookup(data: Mapping[str, Any], dotted: str) -> Any:
    value: Any = data
    for part in dotted.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value
