"""``tackroom profile``: render a neutral profile natively for a harness, or import one back."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from tackroom.cli._output import console, escape, print_json

if TYPE_CHECKING:
    from tackroom.profile.model import Profile

app = typer.Typer(help="Render a neutral profile into a harness's native files, or import them back.")

PROFILE_OPT = typer.Option(
    [], "--profile", help="Profile directory; repeat to layer (default: global, then .tackroom/profile)."
)


def load(dirs: list[Path]) -> Profile:
    """The profile from ``dirs`` (the user's word), or the default global + project layers.

    By default a project's hooks and MCP servers are used only once the user
    trusted the project (``tackroom trust``); ``Profile.withheld`` says what was
    left out.
    """
    from tackroom.adapters.resolve import resolve_builtins
    from tackroom.profile.load import load_profile
    from tackroom.trust import default_profile

    if not dirs:
        return default_profile(Path.cwd(), harnesses=resolve_builtins())
    return load_profile(dirs, harnesses=resolve_builtins())


NAME_ARG = typer.Argument(None, help="Adapter name (default: the project's harness, else the one detected).")


@app.command()
def render(
    name: str | None = NAME_ARG,
    profile: list[Path] = PROFILE_OPT,
    into: Path | None = typer.Option(
        None, "--into", file_okay=False, help="Write under this directory (a home layout)."
    ),
    scope: str = typer.Option(
        "home", "--scope", help="'home' (default) or 'project' (the repo's own files)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print what was rendered as JSON."),
) -> None:
    """Render the profile for one harness; without --into or --scope project, only show the plan."""
    from tackroom.cli.detect import chosen_adapter
    from tackroom.profile.render import plan_render, write

    if scope not in ("home", "project"):
        raise typer.BadParameter("must be 'home' or 'project'", param_hint="--scope")
    adapter = chosen_adapter(name, Path.cwd(), "`tackroom profile render NAME`")
    root = Path.cwd() if scope == "project" else (into or Path("<home>"))
    loaded = load(profile)
    rendered = plan_render(loaded, adapter, root=root, scope="project" if scope == "project" else "home")
    if into is not None or scope == "project":
        rendered = write(rendered)

    err = console(stderr=True)
    for note in (*rendered.drops, *loaded.withheld):
        err.print(f"[yellow]{escape(str(note))}[/]", highlight=False)
    if as_json:
        print_json(rendered.to_json() | {"written": [str(p) for p in rendered.written]})
        return
    out = console()
    verb = "wrote" if rendered.written else "would write"
    for output in rendered.outputs:
        # Paths come from the user's directories and repositories: never read as markup.
        out.print(f"{verb} {output.path}" + (" (merged)" if output.merge else ""), markup=False)


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
    as_json: bool = typer.Option(False, "--json", help="Print what was imported as JSON."),
) -> None:
    """Read a harness's native files back into a neutral profile (never overwriting a profile file)."""
    from tackroom.cli.detect import chosen_adapter
    from tackroom.profile.render import import_profile
    from tackroom.profile.write import write_profile

    if scope not in ("home", "project"):
        raise typer.BadParameter("must be 'home' or 'project'", param_hint="--scope")
    adapter = chosen_adapter(name, Path.cwd(), "`tackroom profile import NAME`")
    found = import_profile(adapter, root=from_, scope="project" if scope == "project" else "home")
    written = write_profile(found, into)
    counts = {k: len(getattr(found, k)) for k in ("rules", "skills", "agents", "commands", "mcp", "hooks")}
    if as_json:
        print_json(
            {
                "adapter": adapter.name,
                "into": str(into),
                "found": counts,
                "written": [str(p) for p in written],
            }
        )
        return
    summary = ", ".join(f"{n} {k}" for k, n in counts.items() if n) or "nothing"
    console().print(
        f"imported {summary} from {adapter.name}; wrote {len(written)} file(s) under {into}", markup=False
    )
