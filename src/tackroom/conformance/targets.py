"""``tackroom adapters check``: the checks on adapters by name, or on the tables of an operator file."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tackroom.conformance.findings import Finding
from tackroom.conformance.kit import CHECKS, check_adapter_conformance
from tackroom.errors import ConfigError, Problem

if TYPE_CHECKING:
    from tackroom.adapters.resolve import AdapterSet


@dataclass(frozen=True)
class Report:
    """What ``tackroom adapters check`` found: the adapters checked and every failure."""

    checked: tuple[tuple[str, str], ...]
    """(adapter, source) of each adapter checked."""
    findings: tuple[Finding, ...]

    @property
    def ok(self) -> bool:
        return not self.findings

    def to_json(self) -> dict[str, Any]:
        failed = {f.adapter for f in self.findings}
        return {
            "ok": self.ok,
            "checks": list(CHECKS),
            "adapters": [{"name": n, "source": s, "ok": n not in failed} for n, s in self.checked],
            "findings": [f.to_json() for f in self.findings],
        }


def is_file_target(target: str) -> bool:
    """Whether a ``check`` argument names an operator file (a path, or ``*.toml``) rather than an adapter."""
    return "/" in target or os.sep in target or target.endswith(".toml")


def check_targets(
    targets: Sequence[str], *, config: Path | None = None, project: Path | None = None
) -> Report:
    """Run every check on adapters by name and on the tables of operator files; none = every adapter.

    A file is checked as if it were installed as ``adapters.d/<its name>``
    beside the operator's other files (replacing one of that name). A load
    problem is a finding of the ``load`` check, and the checks that follow
    need a load without problems.
    """
    names = [t for t in targets if not is_file_target(t)]
    checked: list[tuple[str, str]] = []
    findings: list[Finding] = []
    if names or not targets:
        found = _check_names(names, config, project)
        checked += found.checked
        findings += found.findings
    for target in (t for t in targets if is_file_target(t)):
        found = check_file(Path(target), config=config)
        checked += found.checked
        findings += found.findings
    return Report(tuple(checked), tuple(findings))


def _check_names(names: Sequence[str], config: Path | None, project: Path | None) -> Report:
    from tackroom.adapters.resolve import load_adapters

    try:
        adapters = load_adapters(config=config, project=project)
    except ConfigError as exc:
        return Report((), tuple(_load_findings(exc.problems, [])))
    return _run(adapters, names or list(adapters))


def check_file(path: Path, *, config: Path | None = None) -> Report:
    """Check the ``[adapter.*]`` tables of an operator file not (yet) installed in the config directory."""
    from tackroom.adapters.resolve import _resolve, config_dir, operator_files
    from tackroom.adapters.tomlsource import load_toml

    try:
        source = load_toml(path)
    except ConfigError as exc:
        return Report((), tuple(_load_findings(exc.problems, [])))
    tables = source.data.get("adapter")
    names = sorted(tables) if isinstance(tables, dict) else []
    if not names:
        problem = Problem(str(path), "adapter", "no [adapter.<name>] tables to check")
        return Report((), tuple(_load_findings([problem], [])))
    installed = [
        f for f in operator_files(config if config is not None else config_dir()) if not _replaced(f, path)
    ]
    try:
        adapters = _resolve([*installed, path], None)
    except ConfigError as exc:
        return Report((), tuple(_load_findings(exc.problems, names)))
    return _run(adapters, names)


def _replaced(installed: Path, path: Path) -> bool:
    """Whether installing ``path`` as ``adapters.d/<name>`` would replace the installed file."""
    try:
        if installed.resolve() == path.resolve():
            return True
    except OSError:
        return False
    return installed.parent.name == "adapters.d" and installed.name == path.name


def _run(adapters: AdapterSet, names: Sequence[str]) -> Report:
    checked = [(adapters[n].name, adapters[n].source) for n in names]
    findings = [f for n in names for f in check_adapter_conformance(adapters[n])]
    return Report(tuple(checked), tuple(findings))


def _load_findings(problems: Sequence[Problem], names: Sequence[str]) -> list[Finding]:
    def owner(key: str) -> str:
        matching = [n for n in names if key == f"adapter.{n}" or key.startswith(f"adapter.{n}.")]
        return max(matching, key=len, default="")

    return [Finding("load", owner(p.key), p.key, p.message, p.file, p.line) for p in problems]
