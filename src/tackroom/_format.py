"""A file format's keys as data: what its reader accepts, and what the reference page says.

A reader takes its key sets from its format's :class:`Table` values (so it accepts exactly what
they list, in the order its errors name them), and ``scripts/gen-docs`` writes the reference page
from the same values: the page cannot say a key the reader refuses, or miss one it reads.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Key:
    """One key of a table: its name, the kind of value it takes, and what it does."""

    name: str
    kind: str
    """A word from the format's own kinds (``str``, ``list``, ``seconds``, ...), shown as its page says."""
    what: str
    required: bool = False


@dataclass(frozen=True)
class Table:
    """One table (or frontmatter block) of a format: where it is written, and its keys."""

    where: str
    """How a user writes it: ``[servers.<name>]`` in ``mcp.toml``, ``agents/<name>.md`` frontmatter."""
    what: str
    keys: tuple[Key, ...]
    free: str | None = None
    """For a table whose keys are the user's own (``[env]``, ``[options]``): what each one is."""

    def names(self) -> tuple[str, ...]:
        """Its keys' names, in the order errors list them."""
        return tuple(key.name for key in self.keys)

    def kinds(self) -> dict[str, str]:
        """Each key's kind, by name."""
        return {key.name: key.kind for key in self.keys}
