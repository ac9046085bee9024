"""Write a neutral profile as files: the exact inverse of :mod:`tackroom.profile.load`.

Used by ``tackroom profile import``. It never overwrites: a file that exists
with other content stops the write (nothing is written); one that exists with
the same content is left alone, so importing twice changes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tackroom.errors import ProfileError
from tackroom.profile.engines.files import frontmatter
from tackroom.profile.model import Profile


def profile_files(profile: Profile) -> dict[str, bytes]:
    """Relative path -> content of every file the profile directory holds."""
    files: dict[str, bytes] = {}
    for rule in profile.rules:
        files[f"rules/{rule.name}.md"] = _md(_harnesses(rule.harnesses), rule.text)
    for skill in profile.skills:
        head = {"name": skill.name, "description": skill.description, **_harnesses(skill.harnesses)}
        files[f"skills/{skill.name}/SKILL.md"] = _md(head, skill.body)
        files.update({f"skills/{skill.name}/{rel}": content for rel, content in skill.files})
    for agent in profile.agents:
        head = {"name": agent.name, "description": agent.description}
        head |= {"tools": list(agent.tools)} if agent.tools else {}
        head |= {"model": agent.model} if agent.model else {}
        files[f"agents/{agent.name}.md"] = _md(head | _harnesses(agent.harnesses), agent.body)
    for command in profile.commands:
        head = {"description": command.description, **_harnesses(command.harnesses)}
        files[f"commands/{command.name}.md"] = _md(head, command.body)
    if profile.mcp:
        files["mcp.toml"] = _toml({"servers": {s.name: _server(s) for s in profile.mcp}})
    if profile.hooks:
        files["hooks.toml"] = _toml({"hooks": {h.name: _hook(h) for h in profile.hooks}})
    return files


def write_profile(profile: Profile, into: Path) -> list[Path]:
    """Write ``profile`` under ``into``; returns the files written (none if all were there)."""
    files = profile_files(profile)
    conflicts = [
        rel for rel, data in files.items() if (into / rel).exists() and (into / rel).read_bytes() != data
    ]
    if conflicts:
        raise ProfileError(
            f"not importing into {into}: these profile files exist with other content: "
            f"{', '.join(conflicts)}; import into an empty directory (--into) or move them aside"
        )
    written = []
    for rel, data in files.items():
        path = into / rel
        if path.exists():
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written.append(path)
    return written


def _differs(path: Path, data: bytes) -> bool:
    return path.exists() and path.read_bytes() != data


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
    return data | _harnesses(server.harnesses)


def _hook(hook: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"moment": hook.moment}
    data |= {"matcher": list(hook.matcher)} if hook.matcher else {}
    data[hook.action] = hook.command if hook.action == "command" else hook.text
    return data | _harnesses(hook.harnesses)


def _toml(data: dict[str, Any]) -> bytes:
    import tomli_w

    return tomli_w.dumps(data).encode("utf-8")
