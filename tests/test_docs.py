"""The documentation's generated reference pages are what the code makes of itself, now."""

from __future__ import annotations

from pathlib import Path

import pytest

from tackroom._docs import pages

ROOT = Path(__file__).resolve().parent.parent
GENERATED = pages(ROOT)


@pytest.mark.parametrize("rel", sorted(GENERATED))
def test_a_generated_page_is_fresh(rel: str) -> None:
    committed = (ROOT / rel).read_text(encoding="utf-8")
    assert committed == GENERATED[rel], f"{rel} is stale: run scripts/gen-docs"


def test_the_cli_page_holds_every_command_and_option() -> None:
    """Every command and subcommand, and every option of `run`, is on the page (so a new command or
    option cannot go undocumented: the page is remade from the application)."""
    from tackroom.cli.app import COMMANDS

    page = GENERATED["docs/reference/cli.md"]
    for name in COMMANDS:
        assert f"### `tackroom {name}`" in page
    assert "#### `tackroom profile import`" in page and "#### `tackroom eval run`" in page
    for option in ("--mock-text", "--sandbox", "--network", "--auth", "--capture", "--timeout"):
        assert f"`{option}`" in page


def test_the_errors_page_holds_every_error_class() -> None:
    from tackroom import errors

    page = GENERATED["docs/reference/errors.md"]
    base = errors.TackroomError
    classes = [v for v in vars(errors).values() if isinstance(v, type) and issubclass(v, base)]
    names = [c.__name__ for c in classes]
    assert names and all(f"`{name}`" in page for name in names)


def test_every_key_the_profile_page_shows_is_one_the_reader_takes(tmp_path: Path) -> None:
    """Each frontmatter key and TOML key on the page is read (a value may be wrong; the key is known),
    and one the page does not show is refused: the page and the reader cannot part."""
    from tackroom import load_profile
    from tackroom.errors import ConfigError
    from tackroom.profile import format as fmt

    page = GENERATED["docs/reference/profile.md"]
    files = {
        fmt.RULE: "rules/r.md",
        fmt.SKILL: "skills/s/SKILL.md",
        fmt.AGENT: "agents/a.md",
        fmt.COMMAND: "commands/c.md",
        fmt.SERVER: "mcp.toml",
        fmt.HOOK: "hooks.toml",
        fmt.PERMISSIONS: "permissions.toml",
    }
    for table, rel in files.items():
        assert f"## `{table.where}`" in page
        for key in (*table.names(), "no-such-key"):
            assert key == "no-such-key" or f"| `{key}` |" in page
            root = tmp_path / f"{len(list(tmp_path.iterdir()))}"
            path = root / rel
            path.parent.mkdir(parents=True)
            if rel.endswith(".md"):
                path.write_text(f"---\n{key}: x\n---\nbody\n")
            else:
                header = (
                    "[permissions]"
                    if "permissions" in rel
                    else f"[{rel.split('.')[0].replace('mcp', 'servers')}.x]"
                )
                path.write_text(f'{header}\n"{key}" = "x"\n')
            try:
                load_profile([root])
                said = ""
            except ConfigError as exc:
                said = str(exc)
            assert ("unknown key" in said) == (key == "no-such-key"), (rel, key, said)


@pytest.mark.parametrize("page_name", ["matrix", "task"])
def test_every_key_the_matrix_and_task_pages_show_is_one_the_reader_takes(
    page_name: str, tmp_path: Path
) -> None:
    from tackroom.errors import ConfigError
    from tackroom.eval import matrix, tasks

    page = GENERATED[f"docs/reference/{page_name}.md"]
    module = matrix if page_name == "matrix" else tasks
    table = module.MATRIX if page_name == "matrix" else module.ENVIRONMENT
    task = tmp_path / "t"
    (task / "tests").mkdir(parents=True)
    (task / "instruction.md").write_text("Do it.\n")
    (task / "tests" / "test.sh").write_text("true\n")
    for key in (*table.names(), "no-such-key"):
        assert key == "no-such-key" or f"| `{key}` |" in page
        if page_name == "matrix":
            (task / "task.toml").write_text("")
            path = tmp_path / "matrix.toml"
            lines = {"tasks": '["t"]', "harnesses": '["oracle"]', key: '"x"'}
            path.write_text("[matrix]\n" + "".join(f'"{k}" = {v}\n' for k, v in lines.items()))
            try:
                matrix.load_matrix(path)
                said = ""
            except ConfigError as exc:
                said = str(exc)
        else:
            (task / "task.toml").write_text(f'[environment]\n"{key}" = "x"\n')
            _, problems, notes = tasks.check_task(task)
            said = " ".join(p.message for p in (*problems, *notes))
        assert ("unknown key" in said) == (key == "no-such-key"), (key, said)
