"""Write a neutral profile as files: the exact inverse of :mod:`tackroom.profile.load`.

Used by ``tackroom profile import``. It never overwrites: a file that exists
with other content stops the write (nothing is written); one that exists with
the same content is left alone, so importing twice changes nothing. Every
name becomes a path, so each must be a profile name and each path is proven
inside the target (no link followed); the files are written all or none.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from tackroom.errors import ProfileError
from tackroom.paths import Transaction, inside, read_inside
from tackroom.profile.engines.files import frontmatter
from tackroom.profile.model import Origin, Profile


def profile_files(profile: Profile) -> dict[str, bytes]:
    """Relative path -> content of every file the profile directory holds."""
    files: dict[str, bytes] = {}
    for rule in profile.rules:
        head = _set(description=rule.description, globs=list(rule.globs) or None)
        files[f"rules/{rule.name}.md"] = _md(head | _harnesses(rule.harnesses), rule.text)
    for skill in profile.skills:
        head = {"name": skill.name, "description": skill.description}
        head |= _set(**_extras(skill)) | _harnesses(skill.harnesses)
        files[f"skills/{skill.name}/SKILL.md"] = _md(head, skill.body)
        files.update({f"skills/{skill.name}/{rel}": content for rel, content in skill.files})
    for agent in profile.agents:
        head = {"name": agent.name, "description": agent.description}
        head |= _set(
            tools=list(agent.tools) or None,
            **{"disallowed-tools": list(agent.disallowed_tools) or None},
            model=agent.model,
            reasoning=agent.reasoning,
            temperature=agent.temperature,
        )
        files[f"agents/{agent.name}.md"] = _md(head | _harnesses(agent.harnesses), agent.body)
    for command in profile.commands:
        head = {"description": command.description} | _set(**_extras(command))
        path = command.name.replace(":", "/")
        files[f"commands/{path}.md"] = _md(head | _harnesses(command.harnesses), command.body)
    if profile.mcp:
        files["mcp.toml"] = _toml({"servers": {s.name: _server(s) for s in profile.mcp}})
    if profile.hooks:
        files["hooks.toml"] = _toml({"hooks": {h.name: _hook(h) for h in profile.hooks}})
    if profile.permissions:
        rules = profile.permissions
        table = _set(
            allow=list(rules.allow) or None, ask=list(rules.ask) or None, deny=list(rules.deny) or None
        )
        files["permissions.toml"] = _toml({"permissions": table | _harnesses(rules.harnesses)})
    if profile.env:
        files["env.toml"] = _toml({"env": dict(profile.env)})
    for native in profile.native:
        if native.settings:
            text = json.dumps(dict(native.settings), indent=2, ensure_ascii=False) + "\n"
            files[f"native/{native.harness}/settings.json"] = text.encode("utf-8")
        files.update({f"native/{native.harness}/files/{rel}": content for rel, content in native.files})
    for harness in sorted({o.harness for o in profile.origins}):
        mine = [_origin(o) for o in profile.origins if o.harness == harness]
        text = json.dumps({"origins": mine}, indent=1, ensure_ascii=True) + "\n"
        files[f"native/{harness}/origins.json"] = text.encode("ascii")
    return files


def _origin(origin: Origin) -> dict[str, Any]:
    """An origin as ``origins.json`` holds it: its file as text (base64 when not UTF-8), or its patch."""
    data: dict[str, Any] = {
        "adapter": origin.adapter,
        "scope": origin.scope,
        "path": origin.path,
        "items": [list(item) for item in origin.items],
    }
    if origin.patch is not None:
        patch = origin.patch
        data["patch"] = [[first, end, list(lines)] for first, end, lines in patch.edits]
        data["sha256"] = patch.sha256
        data |= {"bom": True} if patch.bom else {}
        data |= {"crlf": True} if patch.crlf else {}
    elif origin.data is not None:
        try:
            data["text"] = origin.data.decode("utf-8")
        except UnicodeDecodeError:
            data["base64"] = base64.b64encode(origin.data).decode("ascii")
    return data


def _set(**values: Any) -> dict[str, Any]:
    """The keys whose value is set (None is 'not said', and is left out)."""
    return {k: v for k, v in values.items() if v is not None}


def _extras(item: Any) -> dict[str, Any]:
    """The optional fields a command and a skill share, under their frontmatter keys."""
    tools = list(item.allowed_tools) if item.allowed_tools is not None else None
    return {"allowed-tools": tools, "model": item.model, "argument-hint": item.argument_hint}


def write_profile(profile: Profile, into: Path) -> list[Path]:
    """Write ``profile`` under ``into``; returns the files written (none if all were there)."""
    _check_paths(profile)
    files = profile_files(profile)
    transaction = Transaction(into)
    conflicts = []
    for rel, data in files.items():
        existing = read_inside(into, rel)
        if existing is None:
            transaction.put(rel, data)
        elif existing != data:
            conflicts.append(rel)
    if conflicts:
        raise ProfileError(
            f"not importing into {into}: these profile files exist with other content: "
            f"{', '.join(conflicts)}; import into an empty directory (--into) or move them aside"
        )
    try:
        return transaction.commit()
    except OSError as exc:
        raise ProfileError(
            f"could not write {exc.filename or into}: {exc.strerror or exc}; nothing was imported"
        ) from exc


def write_loadable(profile: Profile, into: Path) -> list[Path]:
    """:func:`write_profile`, once the same files are proven to load (in a scratch directory).

    An imported profile the loader would refuse is never written: that would be a
    tackroom bug, reported as a :class:`ProfileError` naming what does not load.
    """
    import tempfile

    from tackroom.errors import ConfigError
    from tackroom.profile.load import load_profile

    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp) / "profile"
        scratch.mkdir()
        _check_paths(profile)
        for rel, data in profile_files(profile).items():  # a scratch copy: plain writes, no fsync
            target = inside(scratch, rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        try:
            load_profile([scratch])
        except ConfigError as exc:
            problems = "; ".join(
                f"{Path(p.file).relative_to(scratch) if p.file.startswith(str(scratch)) else p.file}"
                f"{':' + str(p.line) if p.line else ''}: {p.key + ': ' if p.key else ''}{p.message}"
                for p in exc.problems
            )
            raise ProfileError(
                f"not importing into {into}: the imported profile would not load ({problems[:1000]}); "
                "nothing was written (this is a tackroom bug: please report it)"
            ) from exc
    return write_profile(profile, into)


def _check_paths(profile: Profile) -> None:
    """Names and skill file paths become paths under the profile: each must stay in its place."""
    from tackroom.profile.load import check_item_name

    kinds = ("rules", "skills", "agents", "commands", "mcp", "hooks", "native")
    for kind, item in ((k, i) for k in kinds for i in getattr(profile, k)):
        if not check_item_name(kind, item.name):
            raise ProfileError(f"not importing {kind} {item.name[:80]!r}: not a profile name")
    owners = [(f"skill {s.name!r}", s.files) for s in profile.skills]
    owners += [(f"native files of {n.harness}", n.files) for n in profile.native]
    for owner, files in owners:
        for rel, _ in files:
            parts = Path(rel).parts
            if not parts or Path(rel).is_absolute() or ".." in parts or rel == "SKILL.md":
                raise ProfileError(f"not importing {owner}: file {rel!r} would leave it")


def _md(head: dict[str, Any], body: str) -> bytes:
    # A body that itself starts with '---' needs a frontmatter block, or it would read as one.
    return (frontmatter(head, body) if head or body.startswith("---\n") else body).encode("utf-8")


def _harnesses(names: tuple[str, ...]) -> dict[str, Any]:
    return {"harnesses": list(names)} if names else {}


def _server(server: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"command": server.command} if server.command is not None else {"url": server.url}
    data |= {"args": list(server.args)} if server.args else {}
    data |= {"env": dict(server.env)} if server.env else {}
    data |= {"headers": dict(server.headers)} if server.headers else {}
    data |= _set(
        transport=server.transport,
        timeout=server.timeout,
        tool_timeout=server.tool_timeout,
        auto_approve=list(server.auto_approve) or None,
        disabled=server.disabled or None,
        cwd=server.cwd,
    )
    return data | _harnesses(server.harnesses)


def _hook(hook: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"moment": hook.moment}
    data |= {"matcher": list(hook.matcher)} if hook.matcher else {}
    data[hook.action] = hook.command if hook.action == "command" else hook.text
    data |= _set(timeout=hook.timeout)
    data |= {"source": list(hook.source)} if hook.source else {}
    return data | _harnesses(hook.harnesses)


def _toml(data: dict[str, Any]) -> bytes:
    import tomli_w

    return tomli_w.dumps(data).encode("utf-8")
