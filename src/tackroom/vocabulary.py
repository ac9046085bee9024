"""The neutral vocabulary shared by adapters, profiles, hooks and mock scripts.

Kept free of heavy imports: the mock server and the schema both read it.
"""

from __future__ import annotations

from typing import Literal

#: Tool names in tackroom's own words; each adapter's ``[tools]`` table spells them its way.
NEUTRAL_TOOLS: tuple[str, ...] = (
    "shell",
    "read_file",
    "write_file",
    "edit_file",
    "search",
    "glob",
    "web_fetch",
    "web_search",
    "skill",
    "subagent",
    "todo",
)

#: The moments a profile's hooks attach to; each adapter maps them to its event names.
MOMENTS: tuple[str, ...] = (
    "session-start",
    "prompt-submit",
    "before-tool",
    "after-tool",
    "turn-end",
    "session-end",
)

#: Moments a profile's hooks may also attach to, beyond the six every probe proves.
#: Each maps to a harness's event where it has one; elsewhere the hook is dropped by name.
MORE_MOMENTS: tuple[str, ...] = (
    "notification",
    "pre-compact",
    "subagent-start",
    "subagent-stop",
    "permission-request",
    "after-tool-failure",
    "before-model",
    "after-model",
)

#: Every moment a hook may name.
ALL_MOMENTS: tuple[str, ...] = MOMENTS + MORE_MOMENTS

#: How a session starts, which a ``session-start`` hook may select (``source``): a new session,
#: one resumed, one cleared (``/clear``), one continued after its context was compacted.
SESSION_SOURCES: tuple[str, ...] = ("startup", "resume", "clear", "compact")

#: Neutral model aliases; each adapter's ``[models]`` table maps the ones it can run.
#: A profile may also name a harness's own model as ``<harness>:<model>``.
MODEL_ALIASES: tuple[str, ...] = (
    "opus",
    "sonnet",
    "haiku",
    "gpt-5",
    "gpt-5-codex",
    "gpt-5-mini",
    "o3",
    "o4-mini",
    "gemini-pro",
    "gemini-flash",
    "qwen-coder",
)

#: Neutral reasoning levels (an agent's ``reasoning``).
REASONING: tuple[str, ...] = ("minimal", "low", "medium", "high")

#: The closed set of per-run options, with the kind of value each takes.
#: ``flag`` options render their template when true and nothing when false;
#: ``list`` options repeat their template once per value.
OPTION_KINDS: dict[str, Literal["flag", "str", "int", "list"]] = {
    "model": "str",
    "auto_accept": "flag",
    "max_turns": "int",
    "allowed_tools": "list",
    "disallowed_tools": "list",
    "system_prompt_file": "str",
    "append_system_prompt": "str",
    "reasoning_effort": "str",
    "sandbox": "str",
    "output_format": "str",
    "resume": "str",
    "quiet": "flag",
    "command": "str",
}

TRANSCRIPT_GLOB = "**/*.jsonl"
"""Which files under a transcript root are session logs, unless the adapter says otherwise."""


#: Every capability a probe row may hold, one observation each, in the order tables show them.
CAPABILITIES: tuple[str, ...] = (
    "rules.read",
    "skills.visible",
    "agents.visible",
    "commands.expand",
    "mcp.offered",
    "mcp.called",
    "mcp.answered",
    *(f"hooks.{moment}.fire" for moment in MOMENTS),
    "hooks.inject",
    "hooks.refuse",
    "usage.exact",
    "endpoint.model",
    "error.detected",
    "process.tree_killed",
    "transcripts.written",
)

#: What an adapter's ``lacks`` may name: a capability, or the start of several (``mcp``, ``hooks``,
#: ``hooks.session-end``).
CAPABILITY_PREFIXES: tuple[str, ...] = tuple(
    dict.fromkeys(
        ".".join(parts[:n])
        for parts in (c.split(".") for c in CAPABILITIES)
        for n in range(1, len(parts) + 1)
    )
)
