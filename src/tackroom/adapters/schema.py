"""The adapter schema: one strict pydantic model tree.

Built-in adapters and operator tables are written in this schema. Every model
forbids unknown keys (a misspelled key must fail the load, not vanish) and is
frozen. Field docstrings become the descriptions of the published JSON Schema
(``schema/adapter.schema.json``), so editors can complete and check adapter TOML.

Shape checks live here; grammar and cross-field rules (the template grammar,
options without a slot, ...) live in :mod:`tackroom.adapters.checks`, which can
name the exact key of each problem.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, StringConstraints

from tackroom.adapters.versions import VERSION_PATTERN
from tackroom.vocabulary import CAPABILITY_PREFIXES, TRANSCRIPT_GLOB
from tackroom.vocabulary import NEUTRAL_TOOLS as NEUTRAL_TOOLS
from tackroom.vocabulary import OPTION_KINDS as OPTION_KINDS

Name = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]*$")]
EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
Version = Annotated[str, StringConstraints(pattern=VERSION_PATTERN)]
EnvValue = Annotated[str, StringConstraints(pattern=r"^[^\x00]*$")]
"""A value an environment can hold: no NUL byte (the process could not be started with it)."""
Template = list[str]

WireApi = Literal["anthropic-messages", "openai-responses", "openai-chat", "gemini"]
Moment = Literal[
    "session-start",
    "prompt-submit",
    "before-tool",
    "after-tool",
    "turn-end",
    "session-end",
    "notification",
    "pre-compact",
    "subagent-start",
    "subagent-stop",
    "permission-request",
    "after-tool-failure",
    "before-model",
    "after-model",
]

SessionSource = Literal["startup", "resume", "clear", "compact"]
"""How a session starts (:data:`tackroom.vocabulary.SESSION_SOURCES`)."""
CapabilityName = Annotated[
    str, StringConstraints(pattern="^(" + "|".join(p.replace(".", r"\.") for p in CAPABILITY_PREFIXES) + ")$")
]
"""A capability of the matrix, or the start of several (``hooks``)."""
Reason = Annotated[str, StringConstraints(min_length=1, max_length=400)]
"""Why, in a sentence or two."""


class Strict(BaseModel):
    """Base of every schema model: unknown keys are errors, values are frozen."""

    # Field docstrings are the published schema's descriptions (json_schema reads them); pydantic's
    # own use_attribute_docstrings would read this file's source at every import (25 ms of each).
    model_config = ConfigDict(extra="forbid", frozen=True)


class OptionSpec(Strict):
    """An option rendering that needs more than argv elements.

    A flag option may render nothing at all (``argv = []``): the harness
    always behaves that way, so setting it is accepted and changes nothing.
    """

    argv: Template = []
    """Elements inserted at the option's ``{{opt.<name>}}`` slot."""
    env: dict[EnvName, EnvValue] = {}
    """Variables set when the option is used; values may use ``{{value}}`` (list values comma-joined)."""


OptionTemplate = Template | OptionSpec


class Options(Strict):
    """Option name -> how the harness spells it. An absent option cannot be set on this adapter."""

    model: OptionTemplate | None = None
    """Model to use; ``{{value}}`` is the model name."""
    auto_accept: OptionTemplate | None = None
    """Run tools without asking (flag)."""
    max_turns: OptionTemplate | None = None
    """Cap on agent turns; ``{{value}}`` is an integer."""
    allowed_tools: OptionTemplate | None = None
    """Tools allowed without asking; repeated once per tool."""
    disallowed_tools: OptionTemplate | None = None
    """Tools refused; repeated once per tool."""
    system_prompt_file: OptionTemplate | None = None
    """A file whose text is added to the system prompt."""
    append_system_prompt: OptionTemplate | None = None
    """Text appended to the system prompt."""
    reasoning_effort: OptionTemplate | None = None
    """Reasoning effort level, in the harness's own words."""
    sandbox: OptionTemplate | None = None
    """Sandbox mode, in the harness's own words."""
    output_format: OptionTemplate | None = None
    """Output format override (the built-ins already pick the structured stream)."""
    resume: OptionTemplate | None = None
    """Session id to resume."""
    quiet: OptionTemplate | None = None
    """Suppress interactive decoration (flag)."""
    command: OptionTemplate | None = None
    """A profile command to run headless, where a harness runs one by flag; the prompt is its arguments."""


class Install(Strict):
    """How ``tackroom install`` gets the harness: one npm or pip package."""

    npm: str | None = None
    """npm package name; the version is ``verified_with`` unless one is asked for."""
    pip: str | None = None
    """PyPI distribution name; the version is ``verified_with`` unless one is asked for."""
    extra: list[str] = []
    """Further packages installed beside it, pinned (e.g. a runtime the harness needs)."""
    bin: str | None = None
    """Executable name in the installed prefix, when it differs from ``executable``."""
    env: dict[EnvName, EnvValue] = {}
    """Variables set for the installer only (``npm_config_nodedir = "/usr"`` where a native
    module would otherwise download Node's headers); never seen by a run."""
    python: list[Annotated[str, StringConstraints(pattern=r"^3\.[0-9]{1,2}$")]] = []
    """pip only: the Python versions (``3.13``) the package runs on, best first; install makes its
    virtual environment with the first one found on the machine (PATH, then pyenv's versions). Absent =
    the Python running tackroom."""


class Env(Strict):
    """Which environment variables reach the harness."""

    pass_: list[EnvName] = Field(default=[], alias="pass")
    """Variables passed through from the caller by name (keys, tokens), on top of the base allowlist."""
    set: dict[EnvName, EnvValue] = {}
    """Variables tackroom sets, e.g. telemetry off; values may use ``{{home}}`` and ``{{workdir}}``."""
    scrub: list[EnvName] = []
    """Variables that identify a running session of this harness; removed from every child."""
    secret: list[EnvName] = []
    """Further names whose values are secret (names with KEY, TOKEN, SECRET... always are)."""


class EndpointFile(Strict):
    """A config file staged so the harness talks to the configured endpoint."""

    path: str
    """Where, as a path template (usually under ``~``, the run's home)."""
    format: Literal["json", "yaml", "toml"]
    """How the content is written; an existing file is merged into, never clobbered."""
    content: dict[str, JsonValue]
    """The content; strings may use ``{{base_url}}``, ``{{api_key}}`` and ``{{model}}``."""


class SignIn(Strict):
    """A file the harness's own sign-in leaves in its config (copied into a run by ``--credentials``)."""

    path: str
    """Where, as a path template under ``~`` (the caller's real home), e.g.
    ``${CODEX_HOME:-~/.codex}/auth.json``."""
    key: str | None = None
    """A top-level key of the JSON file that holds the sign-in (``tokens``); None: the file being there
    is enough. A file without it (an API-key login) is no sign-in."""


class EndpointOAuth(Strict):
    """How the harness reaches an endpoint on a subscription sign-in instead of an API key
    (``--auth oauth``): tackroom sets no key, passes the token through, and forwards the harness's
    bearer as it is sent. ``env`` and ``argv`` replace the endpoint's own in this mode."""

    token_env: list[EnvName] = []
    """The caller's variables that carry a sign-in token (``CLAUDE_CODE_OAUTH_TOKEN``): the first one
    set is passed to the harness, as a secret."""
    sign_in: list[SignIn] = []
    """Files the harness's own sign-in leaves: with ``--credentials`` (which copies them in) one of
    them being there is a sign-in too."""
    sends: Literal["bearer"] = "bearer"
    """The header the harness sends the token in: ``Authorization: Bearer <token>``."""
    base_url_v1: bool = False
    """Whether ``{{base_url}}`` ends in ``/v1`` in this mode."""
    env: dict[EnvName, EnvValue] = {}
    """Variables to set; values may use ``{{base_url}}`` and ``{{model}}`` (never ``{{api_key}}``)."""
    argv: Template = []
    """Elements inserted at ``{{endpoint}}`` in ``one_shot`` in this mode: the route a signed-in
    harness takes (Codex's ChatGPT backend, ``{{base_url}}/backend-api/codex``)."""


class ModelEndpoint(Strict):
    """How to point the harness at a model base URL (the mock, a gateway, any endpoint)."""

    wire_api: WireApi
    """The wire API the harness speaks to that endpoint."""
    base_url_v1: bool = False
    """Whether the base URL the harness expects ends in ``/v1`` (``{{base_url}}`` is given that way)."""
    env: dict[EnvName, EnvValue] = {}
    """Variables to set; values may use ``{{base_url}}``, ``{{api_key}}`` and ``{{model}}``."""
    argv: Template = []
    """Elements inserted at ``{{endpoint}}`` in ``one_shot`` (config flags)."""
    files: list[EndpointFile] = []
    """Config files to stage."""
    model: str | None = None
    """The model name to ask for when none is given (the harness needs one it can route)."""
    model_format: str = "{{model}}"
    """How the harness spells a model served by this endpoint, e.g. ``provider/{{model}}``."""
    oauth: EndpointOAuth | None = None
    """How it reaches the endpoint signed in to a subscription instead of with an API key; absent:
    it cannot (``--auth oauth`` is refused)."""


class TrustFile(Strict):
    """A config file staged into an isolated run's home by its project's trust: codex keeps which
    folders it trusts in its own ``config.toml``, not behind a flag."""

    path: str
    """Where, as a path template under ``~`` (the run's home)."""
    format: Literal["json", "yaml", "toml"]
    """How the content is written; an existing file is merged into, never clobbered."""
    content: dict[str, JsonValue]
    """The content; keys and strings may use ``{{workdir}}`` and ``{{root}}`` (the repository root:
    the nearest directory up from the workdir holding ``.git``, else the workdir)."""


class Trust(Strict):
    """What of a project the harness can run code from, and the flags that let it or keep it from it.

    ``project`` lists those paths (``.gemini``, ``.claude/settings.json``: hooks, MCP servers,
    plugins). They are used only after ``tackroom trust``: ``argv`` and ``env`` (which let the
    harness load them, turning its own trust check off) are given only when no directory from the
    working directory up to the repository root holds one of them, or when the user trusted the
    directory that does; otherwise ``untrusted_argv`` and ``untrusted_env`` (which keep the
    harness from loading them) are given in their place. A harness that loads them on its own and
    has no flag of either kind is not started in an untrusted project. Whatever was withheld is
    said on stderr and in the result's ``withheld``.
    """

    argv: Template = []
    """Elements inserted at ``{{trust}}`` in ``one_shot`` when allowed (no placeholders)."""
    env: dict[EnvName, EnvValue] = {}
    """Variables set when allowed."""
    untrusted_argv: Template = []
    """Elements inserted at ``{{trust}}`` in a project the user has not trusted, in place of ``argv``:
    they keep the harness from loading the project's config (e.g. ``--setting-sources user``).
    ``{{workdir}}`` is the only placeholder."""
    untrusted_env: dict[EnvName, EnvValue] = {}
    """Variables set in a project the user has not trusted, in place of ``env``, for the same end."""
    project: list[str] = []
    """Paths (relative, e.g. ``.gemini``) of project config the harness can run code from."""
    project_keys: dict[str, list[str]] = {}
    """A JSON file of ``project`` that counts only when it holds one of these top-level keys: grok
    writes a ``.grok/settings.json`` holding only a model into every directory it runs in, and only
    its ``mcpServers`` run. A file that is not a readable JSON object counts."""
    files: list[TrustFile] = []
    """Staged into an isolated run's home when the project holds config the user trusted (not when it
    holds none: codex also widens its default sandbox in a folder it trusts). ``--home real`` leaves
    the user's own files as they are."""
    untrusted_files: list[TrustFile] = []
    """Staged into an isolated run's home in a project the user has not trusted, in place of
    ``files``: a config copied in by ``--credentials`` may trust the folder itself."""


class Transcripts(Strict):
    """Where the harness writes its session transcripts."""

    roots: list[str]
    """Root directories, as path templates with ``${VAR:-default}``."""
    glob: str = TRANSCRIPT_GLOB
    """Transcript files under each root."""
    runs: bool = True
    """Whether tackroom's own runs of the harness leave their session there; false where a run sends
    the log elsewhere (mini-swe-agent's trajectory goes to stdout, where its family reads it). The
    roots are still read (the user's own runs), but ``transcripts.written`` is not claimed."""


class Capability(Strict):
    """Where the harness reads one kind of profile item, and the engine that writes it."""

    path: str | None = None
    """User-level location, under the harness's home (``~``); absent = the harness reads none (Cursor's
    rules live only in projects)."""
    project: str | None = None
    """Project-level location (``{{workdir}}/...``), written only when asked."""
    render: Name
    """The renderer engine that writes this capability; it must serve this capability and its format."""
    format: Literal["markdown", "toml"] | None = None
    """File format of each item for the ``dir`` engine."""
    extension: str | None = None
    """File name ending of each item for the ``dir`` engine (default ``.md`` or ``.toml``)."""
    frontmatter: dict[str, str | list[str]] = {}
    """Fixed keys every item carries for this harness (e.g. a subagent's ``mode = "subagent"``)."""
    arguments: str | None = None
    """How a command's body spells its arguments placeholder (default ``$ARGUMENTS``)."""
    tools: Literal["csv", "list"] | None = None
    """How a subagent's tools are written: one comma-separated string or a list; absent = not written."""
    invoke: str | None = None
    """How a headless prompt invokes a command: ``{name}`` and ``{args}`` (default ``/{name} {args}``)."""
    also: list[str] = []
    """Other locations the harness also reads this kind from (import only: ``.opencode/commands``
    beside ``.opencode/command``); same engine and format."""
    globs: str | None = None
    """Path-scoped rules: the frontmatter key holding a rule's globs (``paths``, ``globs``, ``applyTo``)."""
    globs_format: Literal["list", "csv"] = "list"
    """How the globs are written: a list, or one comma-separated string."""
    namespaces: bool = False
    """Commands: a subdirectory is a namespace (``git/commit.md`` is ``git:commit``)."""
    nested: bool = False
    """Subagents: files in subdirectories load too (``agents/<team>/x.md``), each named by its
    frontmatter ``name`` (else its file), never by its folder (import only: render writes them flat)."""
    positional: bool = False
    """Commands: the body may use ``$1``..``$9``."""
    shell: str | None = None
    """Commands: how a body runs a shell command for its output, with ``{{cmd}}`` (``!`{{cmd}}```);
    absent = cannot."""
    include: str | None = None
    """Commands: how a body includes a file (``{{path}}``; ``@{{path}}``); absent = cannot."""
    keys: dict[str, str] = {}
    """Optional item fields this harness writes -> its key for them (``allowed_tools = "allowed-tools"``,
    ``argument_hint``, ``model``, ``disallowed_tools``, ``reasoning``, ``temperature``, ``timeout``,
    ``auto_approve``, ``disabled``, ``cwd``); an absent field is dropped by name."""
    argv: list[str] = []
    """Arguments the harness reads this capability's file by (kimi's ``--agent-file {{path}}``), put
    at one_shot's ``{{profile}}`` slot only when a run's profile wrote that file (``path``, in the
    run's home); ``{{path}}`` is the file as the harness sees it."""


class HookTemplate(Strict):
    """A shell template a hook prints to speak to the harness."""

    template: str
    """Command text; ``{{text}}`` is the message and ``{{event}}`` the harness's event name."""
    moments: list[Moment] | None = None
    """The moments this channel works at; absent = every moment the hooks map has."""


class HooksCapability(Capability):
    """Hooks: the three maps of the profile's moments onto this harness, and its templates."""

    events: dict[Moment, str]
    """Neutral moment -> this harness's event name. An absent moment cannot be hooked."""
    fields: dict[str, str] = {}
    """Where this harness keeps each field, in the renderer's own language (jq path, property)."""
    inject: HookTemplate | None = None
    """How a hook gives the agent advisory text; absent = cannot."""
    refuse: HookTemplate | None = None
    """How a hook blocks a tool call with a reason; absent = cannot."""
    tool_names: dict[str, str] = {}
    """Neutral tool -> the name this harness's hooks see, where it differs from ``[tools]``."""
    sources: dict[SessionSource, str] = {}
    """How a session started -> this harness's session-start matcher for it (``startup``); a start
    absent here cannot be told apart, so a hook for only some starts is dropped there by name."""


class Capabilities(Strict):
    """Profile capabilities. An absent capability means the harness cannot do it."""

    rules: Capability | None = None
    skills: Capability | None = None
    mcp: Capability | None = None
    commands: Capability | None = None
    subagents: Capability | None = None
    hooks: HooksCapability | None = None
    scoped_rules: Capability | None = None
    """Rules that apply only to files matching globs (``.claude/rules``, ``.cursor/rules``)."""
    permissions: Capability | None = None
    """Allow / ask / deny rules over tools."""
    env: Capability | None = None
    """The session environment."""
    settings: Capability | None = None
    """The harness's main settings file: native passthrough keys merge into it, and native files
    live beside it."""


class ToolSpec(Strict):
    """A harness tool name with argument renames from the neutral vocabulary."""

    name: str
    """The harness's own tool name."""
    args: dict[str, str] = {}
    """Neutral argument name -> this harness's argument name."""


ToolEntry = str | ToolSpec


class McpCall(Strict):
    """How the model calls an MCP tool through one of the harness's own tools."""

    tool: str
    """The harness tool the model calls (omp: ``write``)."""
    args: dict[str, str]
    """That tool's arguments: ``{server}`` and ``{tool}`` name the MCP tool, ``{arguments}`` is the
    MCP call's arguments as one JSON text."""


class McpLoad(Strict):
    """The call that loads an MCP tool the harness defers (offers by name only, behind a search)."""

    tool: str
    """The harness tool the model calls first (droid: ``ToolSearch``)."""
    args: dict[str, str]
    """That tool's arguments: ``{name}`` is the MCP tool's name as the model calls it (the ``mcp``
    pattern filled in), ``{server}`` and ``{tool}`` its parts."""


class TextCall(Strict):
    """How the model gives its text answer through one of the harness's own tools."""

    tool: str
    """The harness tool the model calls (mini-swe-agent: ``bash``)."""
    args: dict[str, str]
    """That tool's arguments: ``{text}`` is the answer's text, verbatim."""


class Tools(Strict):
    """The neutral tool vocabulary in this harness's spelling (hooks, subagents, mock scripts)."""

    shell: ToolEntry | None = None
    read_file: ToolEntry | None = None
    write_file: ToolEntry | None = None
    edit_file: ToolEntry | None = None
    search: ToolEntry | None = None
    glob: ToolEntry | None = None
    web_fetch: ToolEntry | None = None
    web_search: ToolEntry | None = None
    skill: ToolEntry | None = None
    subagent: ToolEntry | None = None
    todo: ToolEntry | None = None
    mcp: str | None = None
    """How an MCP tool is named, with ``{server}`` and ``{tool}``; ``{tool}`` alone where the harness
    offers it under its own name (kimi; openhands for a lone server). Such a name says no server: a
    hook matcher or a subagent's tool list that names an MCP tool is dropped by name, and a name read
    back stays the harness's own."""
    mcp_offered: str | None = None
    """How the model is offered an MCP tool where that differs from its ``mcp`` name (the one the
    harness's hooks, output and logs use), with ``{server}`` and ``{tool}`` and a ``*`` for what only
    the harness knows: gptme offers ``<server>.<tool>`` as ``<server>_<tool>_<hash>``; the mock calls
    the one offered tool that matches. Absent = the ``mcp`` name."""
    mcp_call: McpCall | None = None
    """How the model calls an MCP tool the harness does not offer as a tool; absent = by its ``mcp`` name."""
    mcp_load: McpLoad | None = None
    """What the model calls before an MCP tool that the harness offers only once loaded (the mock's
    scripted model has to ask for it as a real one would); absent = MCP tools are offered up front."""
    text_call: TextCall | None = None
    """How the model answers with text when the harness ends only through a tool call (its submit
    command); absent = the answer is plain assistant text."""


CapabilityKind = Literal[
    "rules",
    "skills",
    "mcp",
    "commands",
    "subagents",
    "hooks",
    "scoped_rules",
    "permissions",
    "env",
    "settings",
]


class Read(Strict):
    """A native place only ``profile import`` looks at (a render never writes there).

    Another place the harness reads items from, read with its own engine (``render``); or files
    that look like the harness's configuration but that tackroom cannot model or the harness does
    not read (``reason``): each one found there is dropped by name with the reason, never skipped
    unsaid. Exactly one of ``render`` and ``reason``.
    """

    kind: CapabilityKind
    """The kind of item found there (with ``render``: the capability whose settings the engine uses)."""
    path: str | None = None
    """User-level location, under the harness's home (``~``)."""
    project: str | None = None
    """Project-level location (``{{workdir}}/...``)."""
    render: Name | None = None
    """Read it with this engine, as the adapter's ``kind`` capability but at this place."""
    reason: str | None = None
    """Why what is there is not imported; every file found there is dropped by name with it."""
    ending: str = ""
    """With ``reason``, for a directory: the ending of the files that count (``.kiro.hook``)."""


class DetectMarker(Strict):
    """A file or directory whose presence in a repository suggests this harness."""

    path: str
    """Path relative to the repository root."""
    score: int = Field(ge=1, le=100)
    """Specificity: a private config dir outscores a shared file such as AGENTS.md."""


class AdapterSpec(Strict):
    """One adapter: which family's code, and everything else as data."""

    family: Name
    """The family whose code parses this harness (built-in tables only)."""
    extends: Name | None = None
    """The adapter this one inherits from (operator tables)."""
    executable: str
    """The executable to run: a name looked up in installed harnesses and PATH, or a path."""
    version_argv: Template = ["--version"]
    """Arguments that make the executable print its version."""
    min_version: Version | None = None
    """The oldest harness version this adapter works with."""
    verified_with: Version | None = None
    """The harness version these facts were proven on (the one ``tackroom install`` installs); absent =
    unverified data."""
    previously_verified: list[Version] = []
    """Older harness versions still proven with this adapter (with the ``since`` entries that apply to
    them), installed beside ``verified_with`` by ``tackroom install --all``."""
    install: Install | None = None
    """How ``tackroom install`` gets it; absent = install it yourself."""
    probe: list[str] | None = None
    """An external probe, instead of tackroom's own probe runs: the argv (taken literally, a leading
    ``~`` expanded) of an executable that prints one JSON object holding only ``supports`` and
    ``notes``; anything else fails the row."""
    one_shot: Template
    """Argv template of a one-shot headless run."""
    prompt_stdin: bool = False
    """Pass the prompt on stdin instead of ``{{prompt}}``."""
    options: Options = Options()
    env: Env = Env()
    model_endpoint: ModelEndpoint | None = None
    """How to point it at a model base URL; absent = it cannot be pointed."""
    trust: Trust | None = None
    """The project config the harness can run code from, and the flags that let it or keep it from it."""
    home: dict[EnvName, str] = {}
    """Variables that relocate its config and state -> their default location."""
    transcripts: Transcripts | None = None
    capabilities: Capabilities = Capabilities()
    tools: Tools = Tools()
    models: dict[str, str] = {}
    """Neutral model alias (``sonnet``) -> this harness's model name; an alias absent here is dropped."""
    detect: list[DetectMarker] = []
    """Markers that tell a repository is set up for this harness."""
    transports: dict[Name, Name] = {}
    """Other ways to reach this harness: a transport (a family, e.g. ``acp``) -> the adapter that drives it
    that way (``tackroom run NAME --transport acp``)."""
    reads: list[Read] = []
    """Native places only ``profile import`` looks at: read with an engine, or each file named with why."""
    lacks: dict[CapabilityName, Reason] = {}
    """Why the harness cannot do what it does not declare: a capability of the matrix, or the start of
    several (``mcp``, ``hooks``, ``hooks.session-end``) -> the reason, shown beside its ``-`` cells in
    ``docs/capabilities.md``. Data, never a claim: a capability the adapter declares is not lacked."""


SINCE_FIXED = ("family", "extends", "min_version", "verified_with", "previously_verified")
"""Keys a ``since`` entry cannot change: they say which versions the adapter covers, not how one behaves."""


def json_schema(engine_names: Iterable[str]) -> dict[str, Any]:
    """The JSON Schema of an adapter file, as published in ``schema/adapter.schema.json``.

    An operator table may be partial (it overrides or extends another), so the
    published table schema requires nothing; required keys are checked on the
    effective table at load. ``engine_names`` are the registered render engines
    (:func:`tackroom.profile.engines.engines`), offered to editors as examples:
    the caller passes them, since adapters sit below the profile engines.
    """
    table = AdapterSpec.model_json_schema(by_alias=True)
    defs = table.pop("$defs", {})
    _describe(table, AdapterSpec)
    models = {model.__name__: model for model in _models(AdapterSpec)}
    for name, node in defs.items():
        if name in models:  # not JsonValue, a type of pydantic's own
            _describe(node, models[name])
    for capability in ("Capability", "HooksCapability"):
        # Editors complete the registered engines; a third party's engine is still accepted here.
        defs[capability]["properties"]["render"]["examples"] = sorted(engine_names)
    table.pop("required", None)
    defs["Since"] = _since_schema(table)
    table["properties"]["since"] = {
        "description": "Version-conditioned overlays: each entry holds the fields that differ from its "
        "``version`` on, merged over this table (nested tables by key, arrays replace) for every harness "
        "version at least that one.",
        "type": "array",
        "items": {"$ref": "#/$defs/Since"},
    }
    defs["AdapterSpec"] = table
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "tackroom adapter file",
        "description": "Built-in adapters, tackroom.toml and adapters.d/*.toml: [adapter.<name>] tables.",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "adapter": {
                "type": "object",
                "propertyNames": {"pattern": r"^[a-z0-9][a-z0-9._-]*$"},
                "additionalProperties": {"$ref": "#/$defs/AdapterSpec"},
            }
        },
        "$defs": defs,
    }


def _models(model: type[BaseModel]) -> list[type[BaseModel]]:
    """``model`` and every model its fields hold, each once."""
    found: dict[type[BaseModel], None] = {}
    pending = [model]
    while pending:
        current = pending.pop()
        if current in found:
            continue
        found[current] = None
        for field in current.model_fields.values():
            pending += [
                t for t in _types(field.annotation) if isinstance(t, type) and issubclass(t, BaseModel)
            ]
    return list(found)


def _types(annotation: Any) -> list[Any]:
    from typing import get_args

    return [annotation, *(t for arg in get_args(annotation) for t in _types(arg))]


def _describe(node: dict[str, Any], model: type[BaseModel]) -> None:
    """Give ``node``'s properties the docstrings of ``model``'s fields (its bases' too) as descriptions."""
    from pydantic._internal._docs_extraction import extract_docstrings_from_cls

    docs: dict[str, str] = {}
    for cls in reversed([c for c in model.__mro__ if issubclass(c, Strict)]):
        docs |= extract_docstrings_from_cls(cls, use_inspect=True)
    for name, field in model.model_fields.items():
        prop = node.get("properties", {}).get(field.alias or name)
        if prop is not None and name in docs and "description" not in prop:
            prop["description"] = docs[name]


def _since_schema(table: dict[str, Any]) -> dict[str, Any]:
    """One ``since`` entry: its ``version``, and any field of the table but those in :data:`SINCE_FIXED`."""
    properties = {k: v for k, v in table["properties"].items() if k not in SINCE_FIXED}
    properties["version"] = {
        "description": "The first harness version these fields hold for.",
        "type": "string",
        "pattern": VERSION_PATTERN,
    }
    return {
        "title": "Since",
        "description": "The fields of an adapter that differ from one harness version on.",
        "type": "object",
        "additionalProperties": False,
        "required": ["version"],
        "properties": properties,
    }
