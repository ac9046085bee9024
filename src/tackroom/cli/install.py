"""``tackroom install``: install harnesses from their adapter's recipe."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import typer

from tackroom.cli._output import console, escape, print_json


def install_command(
    names: list[str] = typer.Argument(None, help="Adapter names to install."),
    version: str | None = typer.Option(
        None,
        "--version",
        help="Version to install beside the others (default: verified_with); 'latest' asks the registry.",
    ),
    all_: bool = typer.Option(
        False, "--all", help="Every adapter with an install recipe, at each version it was verified with."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the outcome as JSON."),
    jobs: int = typer.Option(
        3, "--jobs", "-j", min=1, max=16, help="Installs run at once (npm and pip wait on the network)."
    ),
) -> None:
    """Install harnesses into tackroom's managed prefix (idempotent)."""
    from tackroom.adapters.resolve import load_adapters
    from tackroom.errors import InstallError

    adapters = load_adapters(project=Path.cwd())
    if all_ == bool(names):
        raise typer.BadParameter("name one or more adapters, or pass --all")
    if all_ and version:
        raise typer.BadParameter("--version applies to named adapters, not --all")
    if version is not None and version != LATEST:
        _check_version(version)
    targets = _targets(adapters, names, version) if not all_ else _verified(adapters)
    out = console(stderr=True)
    results: list[dict[str, Any]] = [{} for _ in targets]

    def one(index: int) -> None:
        adapter, wanted = targets[index]
        if isinstance(wanted, Skip):
            results[index] = {"adapter": adapter.name, "skipped": wanted.why}
            out.print(f"[dim]- {escape(adapter.name)}: skipped ({escape(wanted.why)})[/]")
            return
        try:
            results[index] = _one(adapter, wanted, out, live=jobs == 1).to_json()
        except InstallError as exc:
            if not all_:
                raise
            results[index] = {"adapter": adapter.name, "version": wanted, "error": str(exc)}
            out.print(f"[red]x {escape(adapter.name)} {escape(wanted or '')}[/]: {escape(exc)}")

    _in_parallel(targets, one, jobs)
    if as_json:
        print_json(results)
    if any("error" in result for result in results):
        raise typer.Exit(1)


def _in_parallel(targets: list[tuple[Any, Any]], one: Any, jobs: int) -> None:
    """``one(i)`` for every target, ``jobs`` at a time; installs into one prefix (the same harness at the
    same version, from two adapters) run one after the other. The first error is raised at the end."""
    from concurrent.futures import ThreadPoolExecutor

    lanes: dict[tuple[str, str], list[int]] = {}
    for index, (adapter, wanted) in enumerate(targets):
        lanes.setdefault((adapter.harness, str(wanted)), []).append(index)

    def lane(indices: list[int]) -> None:
        for index in indices:
            one(index)

    if jobs == 1:
        for indices in lanes.values():
            lane(indices)
        return
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="tackroom-install") as pool:
        for future in [pool.submit(lane, indices) for indices in lanes.values()]:
            future.result()


LATEST = "latest"


class Skip(NamedTuple):
    """An adapter ``--all`` leaves alone, and why."""

    why: str


def _targets(adapters: Any, names: list[str], version: str | None) -> list[tuple[Any, str | None]]:
    """(adapter, version) for each named adapter; ``latest`` is asked of the registry first."""
    chosen = [adapters[name] for name in names]
    if version != LATEST:
        return [(adapter, version) for adapter in chosen]
    from tackroom.registry import latest_version

    out = console(stderr=True)
    targets: list[tuple[Any, str | None]] = []
    for adapter in chosen:
        with out.status(f"asking the registry for the newest {escape(adapter.name)}"):
            newest = latest_version(adapter)
        out.print(f"{escape(adapter.name)}: newest release {escape(newest)}")
        targets.append((adapter, newest))
    return targets


def _verified(adapters: Any) -> list[tuple[Any, str | Skip]]:
    """Every adapter at ``verified_with`` and each ``previously_verified`` (or why it is skipped)."""
    targets: list[tuple[Any, str | Skip]] = []
    for adapter in adapters.values():
        if adapter.spec.install is None or adapter.spec.verified_with is None:
            why = "no install recipe" if adapter.spec.install is None else "never verified: no pinned version"
            targets.append((adapter, Skip(why)))
            continue
        targets += [(adapter, version) for version in adapter.verified_versions]
    return targets


def _check_version(version: str) -> None:
    """A version becomes a directory name: refuse one that is not a single safe name (exit 2)."""
    from tackroom.errors import UnsafePathError
    from tackroom.paths import check_name

    try:
        check_name(version, "version")
    except UnsafePathError as exc:
        raise typer.BadParameter(str(exc), param_hint="--version") from exc


def _one(adapter: Any, version: str | None, out: Any, *, live: bool = True) -> Any:
    """Install one; ``live`` shows its progress on a status line (only one can be live at a time)."""
    from tackroom.install import install

    name = escape(adapter.name)
    if live:
        with out.status(f"installing {name}") as status:
            done = install(
                adapter, version, progress=lambda line: status.update(f"{name}: {escape(line[:100])}")
            )
    else:
        out.print(f"[dim]… installing {name} {escape(version or adapter.spec.verified_with or '')}[/]")
        done = install(adapter, version)
    what = f"{escape(done.adapter)} {escape(done.version)}"
    if done.already:
        out.print(f"[green]✓[/] {what} already installed ({escape(done.executable)})")
    else:
        out.print(f"[green]✓[/] {what} installed in {done.seconds:.1f}s ({escape(done.executable)})")
    return done
