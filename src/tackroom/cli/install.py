"""``tackroom install``: install harnesses from their adapter's recipe."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from tackroom.cli._output import console, escape, print_json


def install_command(
    names: list[str] = typer.Argument(None, help="Adapter names to install."),
    version: str | None = typer.Option(
        None, "--version", help="Version to install (default: verified_with)."
    ),
    all_: bool = typer.Option(False, "--all", help="Every adapter with a pinned, verified install recipe."),
    as_json: bool = typer.Option(False, "--json", help="Print the outcome as JSON."),
) -> None:
    """Install harnesses into tackroom's managed prefix (idempotent)."""
    from tackroom.adapters.resolve import load_adapters
    from tackroom.errors import InstallError

    adapters = load_adapters(project=Path.cwd())
    if all_ == bool(names):
        raise typer.BadParameter("name one or more adapters, or pass --all")
    if all_ and version:
        raise typer.BadParameter("--version applies to one named adapter, not --all")
    if version is not None:
        _check_version(version)
    targets = list(adapters.values()) if all_ else [adapters[name] for name in names]
    out = console(stderr=True)
    results: list[dict[str, Any]] = []
    failed = 0
    for adapter in targets:
        if all_ and (adapter.spec.install is None or adapter.spec.verified_with is None):
            why = "no install recipe" if adapter.spec.install is None else "never verified: no pinned version"
            results.append({"adapter": adapter.name, "skipped": why})
            out.print(f"[dim]- {escape(adapter.name)}: skipped ({why})[/]")
            continue
        try:
            results.append(_one(adapter, version, out).to_json())
        except InstallError as exc:
            if not all_:
                raise
            failed += 1
            results.append({"adapter": adapter.name, "error": str(exc)})
            out.print(f"[red]x {escape(adapter.name)}[/]: {escape(exc)}")
    if as_json:
        print_json(results)
    if failed:
        raise typer.Exit(1)


def _check_version(version: str) -> None:
    """A version becomes a directory name: refuse one that is not a single safe name (exit 2)."""
    from tackroom.errors import UnsafePathError
    from tackroom.paths import check_name

    try:
        check_name(version, "version")
    except UnsafePathError as exc:
        raise typer.BadParameter(str(exc), param_hint="--version") from exc


def _one(adapter: Any, version: str | None, out: Any) -> Any:
    from tackroom.install import install

    name = escape(adapter.name)
    with out.status(f"installing {name}") as status:
        done = install(adapter, version, progress=lambda line: status.update(f"{name}: {escape(line[:100])}"))
    what = f"{escape(done.adapter)} {escape(done.version)}"
    if done.already:
        out.print(f"[green]✓[/] {what} already installed ({escape(done.executable)})")
    else:
        out.print(f"[green]✓[/] {what} installed in {done.seconds:.1f}s ({escape(done.executable)})")
    return done
