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
