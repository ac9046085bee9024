"""``tackroom profile``: render a neutral profile natively for a harness, or import one back."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from tackroom.cli._output import console, escape, print_json
from tackroom.cli._render import load, report

if TYPE_CHECKING:
    from tackroom.profile.render import Imported, Rendered

app = typer.Typer(help="Render a neutral profile into a harness's native files, or import them back.")

PROFILE_OPT = typer.Option(
    [], "--profile", help="Profile directory; repeat to layer (default: global, then .tackroom/profile)."
)


NAME_ARG = typer.Argument(None, help="Adapter name (default: the project's harness, else the one detected).")
NAMES_ARG = typer.Argument(
    None, help="Adapter names (default: the project's harness, else the one detected).", show_default=False
)


@app.command()
def render(
    names: list[str] | None = NAMES_ARG,
    every: bool = typer.Option(False, "--all", help="Render for every adapter."),
    profile: list[Path] = PROFILE_OPT,
    into: Path | None = typer.Option(
        None,
        "--into",
        file_okay=False,
        help="Write under this directory (a home's layout; with --scope project, a project's).",
    ),
    scope: str = typer.Option(
        "home", "--scope", help="'home' (default) or 'project' (the repo's own files)."
    ),
    check: bool = typer.Option(
        False, "--check", help="Write nothing; exit 1 when the files differ from a render (for CI)."
    ),
    gitignore: bool = typer.Option(
        False, "--gitignore", help="With --scope project: list the files tackroom owns in .gitignore."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print what was rendered as JSON."),
) -> None:
    """Render the profile for harnesses; without --into or --scope project, only show the plan.

    A re-render removes what tackroom wrote before and the profile no longer
    holds (a file changed since is kept, and said), and leaves unchanged files
    as they are. Several names (or --all) render into the same root together:
    a file two of them write must come out the same.
    """
    from tackroom.adapters.resolve import load_adapters
    from tackroom.cli.detect import chosen_adapter
    from tackroom.profile.render import plan_render

    if scope not in ("home", "project"):
        raise typer.BadParameter("must be 'home' or 'project'", param_hint="--scope")
    if every and names:
        raise typer.BadParameter("name adapters or give --all, not both", param_hint="--all")
    if gitignore and scope != "project":
        raise typer.BadParameter(
            "only with --scope project (the project's .gitignore)", param_hint="--gitignore"
        )
    writes = into is not None or scope == "project"
    if check and not writes:
        raise typer.BadParameter("--check compares files on disk: add --into DIR or --scope project")
    if every:
        adapters = list(load_adapters(project=Path.cwd()).values())
    elif names:
        found = load_adapters(project=Path.cwd())
        adapters = [found[n] for n in dict.fromkeys(names)]
    else:
        adapters = [chosen_adapter(None, Path.cwd(), "`tackroom profile render NAME`")]
    # --into is where files go, for either scope (a project's layout, or a home's), made absolute
    # here: every path planned, written and reported is under the same root.
    if into is not None:
        into = Path.cwd() / into
    root = into or (Path.cwd() if scope == "project" else Path("<home>"))
    loaded = load(profile)
    planned: list[Rendered] = [
        plan_render(loaded, a, root=root, scope="project" if scope == "project" else "home") for a in adapters
    ]
    many = every or len(planned) > 1
    err = console(stderr=True)
    for note in (*(d for r in planned for d in r.drops), *loaded.withheld):
        err.print(f"[yellow]{escape(str(note))}[/]", highlight=False)
    if check:
        _check(planned, gitignore=gitignore, as_json=as_json, many=many)
        return
    rendered = _write(planned, gitignore) if writes else planned
    for note in (n for r in rendered for n in r.kept):
        err.print(f"[yellow]{escape(note)}[/]", highlight=False)
    if as_json:
        reports = [report(r) for r in rendered]
        print_json(reports if many else reports[0])
        return
    out = console()
    for one in rendered:
        if many:
            out.print(f"{one.adapter}:", markup=False)
        written = set(one.written)
        for output in dict.fromkeys(o.path for o in one.outputs):
            merged = any(o.merge for o in one.outputs if o.path == output)
            verb = "would write" if not writes else ("wrote" if output in written else "unchanged")
            # Paths come from the user's directories and repositories: never read as markup.
            out.print(f"{verb} {output}" + (" (merged)" if merged else ""), markup=False)
        for path in one.removed:
            out.print(f"removed {path}", markup=False)


def _write(planned: list[Rendered], gitignore: bool) -> list[Rendered]:
    from tackroom.profile.render import write_all

    return write_all(planned, gitignore=gitignore)


def _check(planned: list[Rendered], *, gitignore: bool, as_json: bool, many: bool) -> None:
    """Print what a render would change; exit 1 when anything would."""
    from tackroom.profile.render import check

    found = check(planned, gitignore=gitignore)
    if as_json:
        reports = [
            {
                "adapter": r.adapter,
                "root": str(r.root),
                "differences": [
                    d.to_json() for d in found if d.adapter == r.adapter or (not d.adapter and i == 0)
                ],
            }
            for i, r in enumerate(planned)
        ]
        print_json(reports if many else reports[0])
    else:
        out = console()
        for difference in found:
            who = f"{difference.adapter}: " if difference.adapter and many else ""
            out.print(f"{who}{difference}", markup=False)
        if not found:
            out.print("in sync: nothing would change", markup=False)
    if found:
        raise typer.Exit(1)


@app.command("import")
def import_(
    name: str | None = NAME_ARG,
    from_: Path = typer.Option(
        Path.home(),
        "--from",
        exists=True,
        file_okay=False,
        help="The home (or project, with --scope) to read.",
    ),
    into: Path = typer.Option(
        Path(".tackroom/profile"), "--into", file_okay=False, help="Profile directory to write."
    ),
    scope: str = typer.Option("home", "--scope", help="'home' (default) or 'project'."),
    strict: bool = typer.Option(
        False, "--strict", help="Fail, writing nothing, when anything found would be dropped."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print what was imported as JSON."),
) -> None:
    """Read a harness's native files back into a neutral profile (never overwriting a profile file).

    Every item found is imported, kept as native passthrough, or dropped by name with the
    reason; one bad file never stops the import. A link that resolves inside the tree is read;
    one that leads out of it, and a FIFO or device, is dropped by name and never opened.
    """
    from tackroom.cli.detect import chosen_adapter
    from tackroom.errors import ProfileError
    from tackroom.profile.render import import_native
    from tackroom.profile.write import write_loadable

    if scope not in ("home", "project"):
        raise typer.BadParameter("must be 'home' or 'project'", param_hint="--scope")
    adapter = chosen_adapter(name, Path.cwd(), "`tackroom profile import NAME`")
    found = import_native(adapter, root=from_, scope="project" if scope == "project" else "home")
    if strict and found.lost:
        listed = "; ".join(str(d) for d in found.dropped[:20])
        more = f"; and {len(found.dropped) - 20} more" if len(found.dropped) > 20 else ""
        raise ProfileError(
            f"not importing (--strict): {len(found.dropped)} item(s) or field(s) would be dropped, "
            f"so nothing was written: {listed}{more}"
        )
    written = write_loadable(found.profile, into)
    profile = found.profile
    counts = {k: len(getattr(profile, k)) for k in ("rules", "skills", "agents", "commands", "mcp", "hooks")}
    if as_json:
        print_json(
            found.to_json() | {"into": str(into), "found": counts, "written": [str(p) for p in written]}
        )
        return
    _import_summary(found, into, len(written))


def _import_summary(found: Imported, into: Path, written: int) -> None:
    """A table per kind (found, imported, passthrough, dropped), then each drop by name with why."""
    from rich.table import Table

    out = console()
    table = Table(title=f"import from {found.adapter}", title_justify="left")
    for column in ("kind", "found", "imported", "passthrough", "dropped", "fields dropped"):
        table.add_column(column, justify="left" if column == "kind" else "right")
    for kind, row in found.counts().items():
        table.add_row(
            escape(kind),
            *(str(row[k]) for k in ("found", "imported", "passthrough", "dropped", "fields")),
        )
    if table.row_count:
        out.print(table)
    for drop in found.dropped:
        # Names and reasons come from the user's files: never read as markup.
        out.print(str(drop), markup=False, highlight=False)
    out.print(f"wrote {written} file(s) under {into}", markup=False, highlight=False)
