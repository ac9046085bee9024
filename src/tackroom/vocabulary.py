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
