"""The profile directory's format as data: what :mod:`tackroom.profile.load` accepts, key by key.

The reader takes its key sets from these tables and the reference page (``docs/reference/
profile.md``) is written from them, so neither can say what the other does not.
"""

from __future__ import annotations

from tackroom._format import Key, Table
from tackroom.vocabulary import ALL_MOMENTS, SESSION_SOURCES

KINDS = {
    "str": "string",
    "list": "list of strings",
    "tools": "list of tool references",
    "model": "model reference",
    "reasoning": "`low` \\| `medium` \\| `high`",
    "number": "number",
    "seconds": "number of seconds (0 or more)",
    "table": "table of strings",
    "bool": "`true` \\| `false`",
}
"""How each kind of value reads on the reference page."""

ENTRIES = (
    ("rules/<name>.md", "A section of the rules document (sections join in name order)."),
    ("skills/<name>/SKILL.md", "An Agent Skills directory: its SKILL.md and any other files beside it."),
    ("agents/<name>.md", "A subagent: its prompt is the body."),
    ("commands/[<ns>/]<name>.md", "A slash command (`commands/git/commit.md` is `/git:commit`); the body "
     "is a template: `$ARGUMENTS`, `$1`..`$9`, `!{cmd}` (a command's output), `@{path}` (a file)."),
    ("mcp.toml", "MCP servers, one `[servers.<name>]` table each."),
    ("hooks.toml", "Hooks, one `[hooks.<name>]` table each."),
    ("permissions.toml", "One `[permissions]` table: what the harness may do without asking."),
    ("env.toml", "One `[env]` table: the session environment (it reaches the harness's hooks and tools)."),
    ("native/<harness>/", "What has no neutral form, kept as that harness wrote it and written back for "
     "it alone: `settings.json` (an object of its settings keys), `files/...` (files under its "
     "configuration directory), `origins.json` (the native files imported items came from, to "
     "render them back as they were)."),
)  # fmt: skip
"""The entries a profile directory may hold; any other is an error (a name starting with ``.`` is
ignored)."""

_HARNESSES = Key("harnesses", "list", "The adapters this item is for; unset or empty: every one.")

RULE = Table(
    "rules/<name>.md",
    "Frontmatter of a rule (optional). With `globs` the rule is path-scoped: it applies only while "
    "the harness works on a matching file (Claude's `.claude/rules` `paths`, Cursor's `globs`, "
    "Copilot's `applyTo`, Kiro's `fileMatchPattern`); a harness without path-scoped rules drops it "
    "by name, never makes it always-on.",
    (
        _HARNESSES,
        Key("globs", "list", "File patterns the rule applies to."),
        Key("description", "str", "What the rule is for (a harness may show it, or pick by it)."),
    ),
)
SKILL = Table(
    "skills/<name>/SKILL.md",
    "Frontmatter of a skill.",
    (
        Key("name", "str", "The skill's name: the directory's name, if given."),
        Key("description", "str", "When to use the skill: the model reads it to choose."),
        Key("allowed-tools", "tools", "Tools the skill may use without asking."),
        Key("model", "model", "The model the skill runs with."),
        Key("argument-hint", "str", "What arguments the skill takes, as shown to the user."),
        _HARNESSES,
    ),
)
AGENT = Table(
    "agents/<name>.md",
    "Frontmatter of a subagent.",
    (
        Key("name", "str", "The subagent's name: the file's name, if given."),
        Key("description", "str", "When to delegate to it: the model reads it to choose."),
        Key("tools", "tools", "The only tools it has; unset: the session's."),
        Key("disallowed-tools", "tools", "Tools it never has."),
        Key("model", "model", "The model it runs with."),
        Key("reasoning", "reasoning", "How hard its model thinks, where the harness can say."),
        Key("temperature", "number", "Its model's sampling temperature, where the harness can say."),
        _HARNESSES,
    ),
)
COMMAND = Table(
    "commands/[<ns>/]<name>.md",
    "Frontmatter of a command.",
    (
        Key("description", "str", "What the command does, as listed to the user."),
        Key("allowed-tools", "tools", "Tools the command may use without asking."),
        Key("model", "model", "The model the command runs with."),
        Key("argument-hint", "str", "What arguments the command takes, as shown to the user."),
        _HARNESSES,
    ),
)
SERVER = Table(
    "[servers.<name>] in mcp.toml",
    "An MCP server: `command` (stdio) or `url` (sse or http), exactly one. A credential is never "
    "written out: give it as `${VAR}`, taken from the session's environment.",
    (
        Key("command", "str", "The program to start (stdio)."),
        Key("args", "list", "Its arguments."),
        Key("env", "table", "Variables for it; a secret only as `${VAR}`."),
        Key("url", "str", "The server's address (sse or http)."),
        Key("headers", "table", "HTTP headers; a credential only as `${VAR}`."),
        _HARNESSES,
        Key(
            "transport",
            "str",
            "`stdio` with `command`; `sse` or `http` (the default) with `url`: kept exactly, never guessed.",
        ),
        Key("timeout", "seconds", "How long the harness waits for it to start."),
        Key("tool_timeout", "seconds", "How long the harness waits for one tool call."),
        Key("auto_approve", "list", "Its tools the harness may call without asking."),
        Key("disabled", "bool", "Written, but off."),
        Key("cwd", "str", "The directory it starts in."),
    ),
)
HOOK = Table(
    "[hooks.<name>] in hooks.toml",
    "A hook: its moment and exactly one action (`command`, `inject` or `refuse`). A moment a harness "
    "has no event for drops the hook by name.",
    (
        Key("moment", "str", f"When it fires: {', '.join(ALL_MOMENTS)}.", required=True),
        Key("matcher", "tools", "For a tool moment: the tools it fires on (`shell`, `mcp(server.tool)`, "
            "`<harness>:<pattern>`); unset: every tool."),
        Key("command", "str", "A shell command the harness runs at that moment."),
        Key("inject", "str", "Advisory text added to the model's context."),
        Key("refuse", "str", "Refuse the tool call, with this reason."),
        _HARNESSES,
        Key("timeout", "seconds", "How long the harness lets the command run."),
        Key("source", "list", f"For session-start: the starts it is for ({', '.join(SESSION_SOURCES)}); "
            "unset: every one."),
    ),
)  # fmt: skip
PERMISSIONS = Table(
    "[permissions] in permissions.toml",
    "Tool rules, rendered into each harness's own permission settings.",
    (
        Key("allow", "tools", "Calls the harness makes without asking."),
        Key("ask", "tools", "Calls the harness asks about first."),
        Key("deny", "tools", "Calls the harness refuses."),
        _HARNESSES,
    ),
)
ENV = Table(
    "[env] in env.toml",
    "The session environment.",
    (),
    free='NAME = "value": a variable the harness, its hooks and its tools see; a secret only as `${VAR}`.',
)

TABLES = (RULE, SKILL, AGENT, COMMAND, SERVER, HOOK, PERMISSIONS, ENV)
"""Every table of the format, in the order the reference page shows them."""

PY_TYPES: dict[str, type] = {
    "str": str, "list": list, "tools": list, "table": dict, "seconds": float, "bool": bool,
}  # fmt: skip
"""The TOML files' kinds as the Python types a value must have."""
