"""``tackroom adapters``: list, show, diff, render, check and metrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from tackroom.cli import _params
from tackroom.cli._output import console, escape, print_json

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter
    from tackroom.adapters.resolve import AdapterSet
    from tackroom.conformance import Report

app = typer.Typer(help="Explain and render adapters without running them.", no_args_is_help=True)

JSON_OPT = typer.Option(False, "--json", help="Print JSON instead of a table.")
VERSION_OPT = typer.Option(
    None,
    "--version",
    callback=_params.harness_version,
    help="The harness version to resolve the adapter for (default: the one it was verified with).",
)


def _load() -> AdapterSet:
    from tackroom.adapters.resolve import load_adapters

    return load_adapters(project=Path.cwd())


@app.command("list")
def list_(as_json: bool = JSON_OPT) -> None:
    """Every adapter: name, family, extends, source, executable, verified_with, hash."""
    from tackroom.adapters.catalog import catalog

    rows = catalog(project=Path.cwd())
    if as_json:
        print_json(rows)
        return
    from rich.table import Table

    table = Table("name", "family", "extends", "source", "executable", "verified with", "hash")
    for row in rows:
        table.add_row(
            escape(row["name"]),
            escape(row["family"]),
            escape(row["extends"] or ""),
            escape(row["source"]),
            escape(row["executable"]),
            escape(row["verified_with"]) if row["verified_with"] else "[dim]unverified[/]",
            escape(row["hash"][:12]),
        )
    console().print(table)


@app.command()
def show(
    name: str = typer.Argument(..., help="Adapter name."),
    version: str | None = VERSION_OPT,
    as_json: bool = JSON_OPT,
) -> None:
    """The effective table, each field with where it came from (``builtin since 2.1.304``: a since entry)."""
    adapter = _load()[name]
    adapter = adapter.at(version) if version is not None else adapter
    if as_json:
        print_json(_show_json(adapter))
        return
    from rich.table import Table

    from tackroom.families.observability import observability

    out = console()
    since = ", ".join(adapter.since_versions)
    seen = observability(adapter)
    out.print(
        f"[bold]{escape(adapter.name)}[/]  family {escape(adapter.family)}  "
        f"source {escape(adapter.source)}  hash {adapter.hash}\n"
        f"for harness version {escape(adapter.version or 'unknown')}"
        + (f"  (data changes from {escape(since)})" if since else "")
        + f"\nobservability {escape(seen.summary())}  (stream: {escape(seen.stream or 'none')}"
        + (f"; gateway: {escape(seen.gateway)}" if seen.gateway else "; no base URL: no gateway")
        + ")"
    )
    table = Table("field", "value", "from")
    provenance = adapter.provenance
    for key, value in _leaves(adapter.effective):
        table.add_row(
            escape(key), escape(json.dumps(value, ensure_ascii=False)), escape(provenance.get(key, "default"))
        )
    out.print(table)


@app.command()
def diff(name: str = typer.Argument(..., help="Adapter name.")) -> None:
    """The effective table against the built-in it resolves to."""
    adapters = _load()
    adapter = adapters[name]
    base = adapters.builtin(adapter.harness)
    changes = _diff(dict(_leaves(base.effective)), dict(_leaves(adapter.effective)))
    out = console()
    out.print(f"[bold]{escape(name)}[/] against built-in [bold]{escape(base.name)}[/]")
    if not changes:
        out.print("no differences")
    provenance = adapter.provenance
    for sign, key, old, new in changes:
        where, key, old, new = escape(provenance.get(key, "")), escape(key), _shown(old), _shown(new)
        if sign == "~":
            out.print(f"[yellow]~ {key}[/]: {old} -> {new}  [dim]{where}[/]")
        elif sign == "+":
            out.print(f"[green]+ {key}[/]: {new}  [dim]{where}[/]")
        else:
            out.print(f"[red]- {key}[/]: {old}")


@app.command()
def render(
    name: str = typer.Argument(..., help="Adapter name."),
    prompt: str = typer.Option(
        "<prompt>", "--prompt", "-p", callback=_params.prompt, help="The prompt to render."
    ),
    option: list[str] = typer.Option([], "--option", "-o", help="KEY=VALUE; repeat for more."),
    workdir: Path = typer.Option(
        Path(), "--workdir", exists=True, file_okay=False, help="Working directory; selects the project."
    ),
    base_url: str | None = typer.Option(
        None, "--base-url", callback=_params.base_url, help="Point the harness at this model endpoint."
    ),
    api_key_env: str | None = typer.Option(
        None, "--api-key-env", help="Variable holding the key for --base-url (default: the wire's usual one)."
    ),
    auth: str | None = typer.Option(
        None, "--auth", help="How the harness signs in to --base-url: api-key or oauth (as `run --auth`)."
    ),
    credentials: bool = typer.Option(
        False, "--credentials", help="As a run with --credentials: the harness's own sign-in counts."
    ),
    home: str = typer.Option("isolated", "--home", help="'isolated' (the run's own home) or 'real'."),
    version: str | None = VERSION_OPT,
    as_json: bool = JSON_OPT,
) -> None:
    """The argv, environment and adapter hash a run would use, without spawning anything.

    Secret values show as ``<secret>`` and credentials in URLs as ``<redacted>``. The project file
    of --workdir applies as it would to a run: its options under --option.
    """
    from rich.markup import escape

    from tackroom.adapters.plan import Endpoint, plan_run
    from tackroom.adapters.resolve import load_adapters
    from tackroom.options import parse_option_args
    from tackroom.project import load_project

    if home not in ("isolated", "real"):
        raise typer.BadParameter("must be 'isolated' or 'real'", param_hint="--home")
    if auth not in (None, "api-key", "oauth"):
        raise typer.BadParameter("must be 'api-key' or 'oauth'", param_hint="--auth")
    if auth is not None and base_url is None:
        raise typer.BadParameter("--auth says how the harness signs in to --base-url; give it too")
    adapter = load_adapters(project=workdir)[name]
    adapter = adapter.at(version) if version is not None else adapter
    options = parse_option_args(option)
    project = load_project(workdir)
    plan = plan_run(
        adapter,
        prompt,
        options=project.options_with(options) if project is not None else options,
        workdir=workdir,
        home=Path("<run>/home") if home == "isolated" else None,
        endpoint=Endpoint(
            base_url,
            api_key_env=api_key_env,
            auth="oauth" if auth == "oauth" else "api-key" if auth == "api-key" else None,
            credentials=credentials,
        )
        if base_url
        else None,
    )
    data = plan.to_json()
    err = console(stderr=True)
    for note in plan.withheld:
        err.print(f"[yellow]{escape(note)}[/]")
    if as_json:
        print_json(data)
        return
    import shlex

    out = console()
    out.print(f"[bold]{escape(plan.adapter)}[/] ({escape(plan.family)})  hash {plan.adapter_hash}")
    if plan.auth is not None:
        out.print(f"[bold]auth[/] {escape(plan.auth)}")
    out.print("[bold]argv[/]")
    out.print("  " + shlex.join(data["argv"]), markup=False)
    out.print("[bold]env[/]")
    for key, value in sorted(data["env"].items()):
        out.print(f"  {escape(key)}={escape(value)}  [dim]{escape(data['env_sources'][key])}[/]")
    for staged in data["files"]:
        out.print(f"[bold]file[/] {escape(staged['path'])} ({escape(staged['format'])})")


@app.command()
def check(
    targets: list[str] = typer.Argument(
        None,
        metavar="[NAME|FILE]...",
        help="Adapter names, or operator files (a path with '/' or ending in .toml); none: every adapter.",
    ),
    as_json: bool = JSON_OPT,
) -> None:
    """Run the conformance kit; print each failure with its file and line, exit 1 if any.

    A FILE is checked as if installed as adapters.d/<its name> beside the operator's other files.
    """
    from tackroom.conformance import CHECKS, check_targets

    report = check_targets(targets or [], project=Path.cwd())
    if as_json:
        print_json(report.to_json())
        raise typer.Exit(0 if report.ok else 1)
    out = console()
    for finding in report.findings:
        # Keys, paths and messages quote operator files: never read as markup.
        out.print(str(finding), markup=False, highlight=False)
    checked = len(report.checked)
    if report.ok:
        out.print(f"{checked} adapter(s) pass all {len(CHECKS)} checks: {', '.join(CHECKS)}", markup=False)
        return
    out.print(_check_summary(report), markup=False)
    raise typer.Exit(1)


@app.command()
def metrics() -> None:
    """Prometheus text: adapter info, drift of the installed client, and the age of the last proof."""
    from concurrent.futures import ThreadPoolExecutor

    adapters = _load()
    with ThreadPoolExecutor(max_workers=8) as pool:
        versions = dict(zip(adapters, pool.map(_client_version, adapters.values()), strict=True))
    print("# HELP tackroom_adapter_info The effective adapter: its hash and the detected client version.")
    print("# TYPE tackroom_adapter_info gauge")
    for name, adapter in adapters.items():
        version = versions[name]
        labels = {
            "adapter": name,
            "family": adapter.family,
            # The effective adapter is the one for the client that is there (its since entries).
            "hash": adapter.at(version if version != "unknown" else None).hash,
            "client_version": version,
        }
        text = ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items())
        print(f"tackroom_adapter_info{{{text}}} 1")
    _drifts(adapters, versions)
    _proof_ages(adapters)


def _drifts(adapters: AdapterSet, versions: dict[str, str]) -> None:
    """One sample per adapter whose installed client is not a version its facts were proven on."""
    print(
        "# HELP tackroom_adapter_drift The installed client is not a version the adapter was verified with."
    )
    print("# TYPE tackroom_adapter_drift gauge")
    for name, adapter in adapters.items():
        installed, verified = versions[name], adapter.verified_with
        if installed == "unknown" or verified is None or installed in adapter.verified_versions:
            continue
        labels = {"adapter": name, "installed": installed, "verified": verified}
        text = ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items())
        print(f"tackroom_adapter_drift{{{text}}} 1")


def _proof_ages(adapters: AdapterSet) -> None:
    """The age of each adapter's latest capability row; an adapter never probed has no sample (not 0)."""
    from datetime import UTC, datetime

    from tackroom.state import CapabilityRows, StateDB

    latest = CapabilityRows(StateDB.default()).latest_by_adapter()
    now = datetime.now(UTC)
    print("# HELP tackroom_capability_proof_age_seconds Seconds since the adapter's latest capability row.")
    print("# TYPE tackroom_capability_proof_age_seconds gauge")
    for name in adapters:
        row = latest.get(name)
        if row is None:
            continue
        labels = {
            "adapter": name,
            "harness_version": row.harness_version or "unknown",
            "outcome": row.outcome,
        }
        text = ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items())
        print(f"tackroom_capability_proof_age_seconds{{{text}}} {(now - row.probed_at).total_seconds():.0f}")


def _check_summary(report: Report) -> str:
    load = sum(f.check == "load" for f in report.findings)
    failing = len({f.adapter for f in report.findings if f.check != "load"})
    parts = [f"{len(report.findings)} failure(s)"]
    if load:
        parts.append(f"{load} load problem(s), so the tables of that load were not checked")
    parts.append(f"{failing} of {len(report.checked)} adapter(s) checked fail")
    return "; ".join(parts)


def _client_version(adapter: Adapter) -> str:
    from tackroom.harnesses import locate, probe_version

    located = locate(adapter)
    version = probe_version(adapter, located) if located else None
    return version or "unknown"


def _shown(value: Any) -> str:
    return escape(json.dumps(value, ensure_ascii=False))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _show_json(adapter: Adapter) -> dict[str, Any]:
    from tackroom.families.observability import observability

    return {
        "name": adapter.name,
        "family": adapter.family,
        "harness": adapter.harness,
        "extends": adapter.extends,
        "source": adapter.source,
        "hash": adapter.hash,
        "version": adapter.version,
        "since": list(adapter.since_versions),
        "observability": observability(adapter).to_json(),
        "effective": adapter.effective,
        "provenance": {key: adapter.provenance.get(key, "default") for key, _ in _leaves(adapter.effective)},
    }


def _leaves(data: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Flatten nested tables to dotted keys; arrays and scalars are leaves."""
    if isinstance(data, dict) and data:
        out: list[tuple[str, Any]] = []
        for key, value in data.items():
            out += _leaves(value, f"{prefix}.{key}" if prefix else key)
        return out
    return [(prefix, data)]


def _diff(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, str, Any, Any]]:
    changes = []
    for key in sorted({*old, *new}):
        if key not in new:
            changes.append(("-", key, old[key], None))
        elif key not in old:
            changes.append(("+", key, None, new[key]))
        elif old[key] != new[key]:
            changes.append(("~", key, old[key], new[key]))
    return changes
