"""The interface every family implements."""

from __future__ import annotations


class Family:
    """The code that knows one kind of harness.

    Subclasses set :attr:`name` and override the hooks they need; an adapter's
    data supplies everything else.
    """

    name: str = ""
    """The family name adapters select with ``family = ...``."""
    reader: str = ""
    """What this family reads: the structured output the runner parses."""

    def __repr__(self) -> str:
        return f"<family {self.name}>"
