"""The neutral vocabulary shared by adapters, profiles, hooks and mock scripts.

Kept free of heavy imports: the mock server and the schema both read it.
"""

from __future__ import annotations

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
