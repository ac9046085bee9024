"""Render a profile into one harness's native files, and import them back.

Targets: the run's isolated home (default; capability ``path``s under ``~``),
any directory (``--into``: the home layout written under it), or the project
(``scope="project"``: capability ``project`` paths, only when asked). Before
anything is written every target is checked: a file that exists and that
tackroom does not own stops the render with an error and nothing is written.
Ownership is recorded in ``.tackroom-owned.json`` at the target root; files a
harness shares with other settings are merged into, key by key.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tackroom.adapters import templates
from tackroom.errors import ProfileError
from tackroom.profile.engines import engine
from tackroom.profile.engines.base import Context, Drop, Kind, Output
from tackroom.profile.model import Profile

if TYPE_CHECKING:
    from tackroom.adapters.resolve import Adapter

Scope = Literal["home", "project"]
OWNED = ".tackroom-owned.json"
KINDS: dict[Kind, str] = {
    "rules": "rules",
    "skills": "skills",
    "mcp": "mcp",
    "commands": "commands",
    "subagents": "agents",
    "hooks": "hooks",
}
_SINGULAR = {
    "rules": "rule",
    "skills": "skill",
    "mcp": "MCP server",
    "commands": "command",
    "subagents": "subagent",
    "hooks": "hook",
}


@dataclass(frozen=True)
class Rendered:
    """What a render produced: the files, and the items dropped by name."""

    adapter: str
    outputs: tuple[Output, ...]
    drops: tuple[Drop, ...]
    root: Path
    written: tuple[Path, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {
            "adapter": self.adapter,
            "root": str(self.root),
            "files": [str(o.path) for o in self.outputs],
            "dropped": [{"kind": d.kind, "name": d.name, "reason": d.reason} for d in self.drops],
        }


def plan_render(
    profile: Profile, adapter: Adapter, *, root: Path, scope: Scope = "home", workdir: Path | None = None
) -> Rendered:
    """Compute the files and drops of rendering ``profile`` for ``adapter``, writing nothing.

    ``root`` stands for the harness's home (scope ``home``) or the project
    directory (scope ``project``).
    """
    mine = profile.for_harness(adapter.harness)
    outputs: list[Output] = []
    drops: list[Drop] = []
    caps = adapter.spec.capabilities
    for kind, attr in KINDS.items():
        items = getattr(mine, attr)
        capability = getattr(caps, kind)
        if not items:
            continue
        if capability is None:
            drops += [Drop(adapter.harness, _SINGULAR[kind], i.name, f"no {kind} capability") for i in items]
            continue
        path = _target(capability, scope, root, workdir or root, adapter)
        if path is None:
            drops += [
                Drop(adapter.harness, _SINGULAR[kind], i.name, f"no project-level {kind}") for i in items
            ]
            continue
        ctx = Context(adapter, kind, capability, path, drops)
        outputs += engine(capability.render).render(ctx, items)
    return Rendered(adapter.name, tuple(outputs), tuple(drops), root)


def import_profile(
    adapter: Adapter, *, root: Path, scope: Scope = "home", workdir: Path | None = None
) -> Profile:
    """Read a harness's native files (under ``root``) back into a neutral profile."""
    found: dict[str, list[Any]] = {attr: [] for attr in KINDS.values()}
    for kind, attr in KINDS.items():
        capability = getattr(adapter.spec.capabilities, kind)
        if capability is None:
            continue
        path = _target(capability, scope, root, workdir or root, adapter)
        if path is not None:
            ctx = Context(adapter, kind, capability, path)
            found[attr] = sorted(engine(capability.render).parse(ctx), key=lambda i: i.name)
    return Profile(
        rules=tuple(found["rules"]),
        skills=tuple(found["skills"]),
        agents=tuple(found["agents"]),
        commands=tuple(found["commands"]),
        mcp=tuple(found["mcp"]),
        hooks=tuple(found["hooks"]),
    )


def referenced_variables(profile: Profile) -> list[str]:
    """Variables the profile's MCP servers and hook commands reference as ``${VAR}``."""
    texts = [s.command or "" for s in profile.mcp] + [a for s in profile.mcp for a in s.args]
    texts += [v for s in profile.mcp for _, v in (*s.env, *s.headers)] + [s.url or "" for s in profile.mcp]
    texts += [h.command or "" for h in profile.hooks]
    return sorted({m.group(1) for text in texts for m in templates.ENV_REF.finditer(text)})


def _target(capability: Any, scope: Scope, root: Path, workdir: Path, adapter: Adapter) -> Path | None:
    raw = capability.path if scope == "home" else capability.project
    if raw is None:
        return None
    # Relocation variables point at their defaults under the target root, as in an isolated run.
    env = {
        name: str(templates.expand_path(default, env={}, home=str(root), workdir=str(workdir)))
        for name, default in adapter.spec.home.items()
    }
    return templates.expand_path(raw, env=env, home=str(root), workdir=str(workdir))


def write(rendered: Rendered) -> Rendered:
    """Write a render: check every target first, then write, recording what tackroom owns."""
    owned_file = rendered.root / OWNED
    owned = _read_owned(owned_file)
    conflicts = [o.path for o in rendered.outputs if _conflict(o, owned)]
    if conflicts:
        listed = ", ".join(str(p) for p in conflicts)
        raise ProfileError(
            f"not writing: {listed} exists and tackroom does not own it; move it aside, or render into an "
            "isolated home or another directory (--into)"
        )
    merged = _merged_outputs(rendered.outputs)
    written = []
    for path, content in merged.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        data = content if isinstance(content, bytes) else content.encode("utf-8")
        path.write_bytes(data)
        owned[str(path)] = hashlib.sha256(data).hexdigest()
        written.append(path)
    owned_file.parent.mkdir(parents=True, exist_ok=True)
    owned_file.write_text(json.dumps(owned, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return Rendered(rendered.adapter, rendered.outputs, rendered.drops, rendered.root, tuple(written))


def _read_owned(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _conflict(output: Output, owned: Mapping[str, str]) -> bool:
    """A whole-file output over a file tackroom did not write (or that changed since)."""
    if output.merge or not output.path.exists():
        return False
    digest = hashlib.sha256(output.path.read_bytes()).hexdigest()
    return owned.get(str(output.path)) != digest


def _merged_outputs(outputs: Sequence[Output]) -> dict[Path, str | bytes]:
    """Final file contents: whole files as given; merge outputs folded into what is on disk."""
    files: dict[Path, str | bytes] = {}
    pending: dict[Path, tuple[str, dict[str, Any]]] = {}
    for output in outputs:
        if output.data is None:
            files[output.path] = output.text or ""
            continue
        fmt, data = pending.get(output.path, (output.format, _existing(output) if output.merge else {}))
        pending[output.path] = (fmt, _merge(data, dict(output.data)))
    for path, (fmt, data) in pending.items():
        files[path] = _dump(fmt, data)
    return files


def _existing(output: Output) -> dict[str, Any]:
    if not output.path.is_file():
        return {}
    text = output.path.read_text(encoding="utf-8")
    if output.format == "toml":
        import tomllib

        return tomllib.loads(text)
    data = json.loads(text or "{}")
    return data if isinstance(data, dict) else {}


def _merge(base: dict[str, Any], top: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """Merge an engine's keys into a shared settings file, keeping everything else the user has.

    Tables merge by key one level down (``mcpServers`` keeps the user's other
    servers); below that tackroom's entry replaces the whole value, so no stale
    key of an older entry survives beside it. A hook event's list keeps the
    user's groups and replaces tackroom's own.
    """
    out = dict(base)
    for key, value in top.items():
        old = out.get(key)
        if isinstance(value, dict) and isinstance(old, dict) and depth < 1:
            out[key] = _merge(old, value, depth + 1)
        elif isinstance(value, list) and isinstance(old, list) and any(_ours(g) for g in value):
            out[key] = [g for g in old if not _ours(g)] + value
        else:
            out[key] = value
    return out


def _ours(group: Any) -> bool:
    from tackroom.profile.engines.settings import HOOK_MARK

    return HOOK_MARK in json.dumps(group)


def _dump(fmt: str, data: dict[str, Any]) -> str:
    if fmt == "toml":
        import tomli_w

        return tomli_w.dumps(data)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
