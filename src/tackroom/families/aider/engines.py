"""Engine ``aider-conf``: rules as a document that ``~/.aider.conf.yml`` names under ``read:``.

Aider (0.86.2) finds no rules file by itself: a file reaches the model, as read-only context,
only when named by ``--read``, ``AIDER_READ`` or ``read:`` in a ``.aider.conf.yml`` (the working
directory's, the git root's, the home's). ``main.py`` takes each entry through
``Path(entry).expanduser().resolve()``: ``~`` is the home, a relative entry is relative to the
working directory (not to the file naming it), and a directory stands for every file below it.

Rendering writes the rules as one document, :data:`DOCUMENT` beside the home's config file (each
rule in a marked section, as ``concat`` writes them), and the config file, owned whole, naming it
``~/.aider.rules.md``: the same bytes wherever the home is. Only the home's: a project's config
is the user's (its model, lint command...), YAML tackroom does not merge into.

Import reads ``read:`` (one entry or a list) and every document it names inside the imported
tree: tackroom's sections are rules by name, any other document one rule named after its file
(``CONVENTIONS.md``: ``conventions``). In the home's config (the capability has a ``path``),
``~`` is the imported home and a relative entry, whose meaning depends on where aider runs, is
dropped by name; in a project's (an import-only place: ``project`` alone), a relative entry is
read beside the config file (aider run at the project's root) and one under ``~``, the real home,
is dropped by name. So is an entry naming a directory or a file outside the tree, and every other
key of the config file: aider's own options, not rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tackroom.profile.engines import tree
from tackroom.profile.engines.base import Context, Engine, Kind, Output
from tackroom.profile.engines.files import Concat
from tackroom.profile.model import Rule

DOCUMENT = ".aider.rules.md"
"""The rules document's name, beside the config file (``.aider*``, which aider git-ignores)."""
KEY = "read"
_HEADER = "# Written by tackroom: aider sends the files under read: to the model as read-only context.\n"


class AiderConf(Engine):
    name = "aider-conf"
    kinds: frozenset[Kind] = frozenset({"rules"})

    def render(self, ctx: Context, items: Sequence[Rule]) -> list[Output]:
        if not items:
            return []
        [written] = Concat().render(_at(ctx, ctx.path.with_name(DOCUMENT)), items)
        return [written, Output(ctx.path, conf_text([f"~/{DOCUMENT}"]))]

    def parse(self, ctx: Context) -> list[Rule]:
        if not ctx.path.is_file() or tree.refused(ctx, "rule", ctx.path):
            return []
        conf = read_conf(ctx.path)
        for key in sorted(_said(k) for k in conf if k != KEY):
            ctx.drop("setting", key, f"{ctx.path}: {key} is aider's own option, not a rule")
        rules: list[Rule] = []
        for entry in _entries(ctx, conf.get(KEY)):
            path = self._document(ctx, entry)
            if path is not None:
                # Each rule comes from its document (not the config file naming it), which is not
                # where the adapter renders: a render writes it afresh, config file included.
                rules += [ctx.read_from(rule, path) for rule in Concat().parse(_at(ctx, path))]
        return sorted(rules, key=lambda r: r.name)

    def _document(self, ctx: Context, entry: str) -> Path | None:
        """The file an entry names, when an import may read it; else None after dropping it by name."""
        where = f"{ctx.path}: read: {entry[:120]}"
        home = ctx.capability.path is not None  # the home's config; a project's is an import-only place
        root = ctx.root or ctx.path.parent
        if entry.startswith("~"):
            if not home or not (entry == "~" or entry.startswith("~/")):
                ctx.drop("rule", entry[:80], f"{where}: aider reads it from the real home, not this tree")
                return None
            path = root / entry[2:]
        elif Path(entry).is_absolute():
            path = Path(entry)
        elif home:
            ctx.drop("rule", entry[:80], f"{where}: relative to wherever aider runs, so not imported")
            return None
        else:
            path = ctx.path.parent / entry
        if not _inside(path, root):
            ctx.drop("rule", entry[:80], f"{where}: outside {root}, so not imported")
            return None
        if tree.refused(ctx, "rule", path):
            return None
        if path.is_dir():
            ctx.drop("rule", entry[:80], f"{where}: a directory (aider reads every file below it)")
            return None
        if not path.is_file():
            ctx.drop("rule", entry[:80], f"{where}: no such file (aider skips it)")
            return None
        return path


def conf_text(documents: Sequence[str]) -> str:
    """The config file tackroom owns: ``read:`` and nothing else."""
    import yaml

    return _HEADER + yaml.safe_dump({KEY: list(documents)}, default_flow_style=False, width=1000)


def read_conf(path: Path) -> dict[Any, Any]:
    """The config file's mapping as aider's YAML parser reads it (empty: ``{}``); else ValueError."""
    import yaml

    # libyaml's safe loader when PyYAML has it, as the profile's frontmatter is read.
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError("not a mapping of options")
    return data


def _entries(ctx: Context, value: Any) -> list[str]:
    """``read:`` as aider takes it: one path or a list of them; anything else dropped by name."""
    if value is None:
        return []
    listed = value if isinstance(value, list) else [value]
    entries = []
    for entry in listed:
        if isinstance(entry, str) and entry.strip():
            entries.append(entry.strip())
        else:
            ctx.drop("rule", _said(entry), f"{ctx.path}: read: {_said(entry)} is not a file name")
    return entries


def _said(value: Any) -> str:
    """How a key or entry read from a stranger's file is named: a string cut short, else its type
    (a YAML alias can nest a value far larger than its text)."""
    return value[:80] if isinstance(value, str) else f"<{type(value).__name__}>"


def _inside(path: Path, root: Path) -> bool:
    import os

    target, base = os.path.normpath(path), os.path.normpath(root)
    return target == base or target.startswith(base.rstrip(os.sep) + os.sep)


def _at(ctx: Context, path: Path) -> Context:
    """The same context at another file (the drops and refusals shared with it)."""
    import dataclasses

    return dataclasses.replace(ctx, path=path)


ENGINES: list[Engine] = [AiderConf()]
