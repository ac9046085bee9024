"""The checks that read the adapter's data and code, without writing anything but a plan's temp dir."""

from __future__ import annotations

import os
import string
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tackroom.adapters import templates
from tackroom.conformance.findings import KeyPath, Raw
from tackroom.errors import TackroomError
from tackroom.vocabulary import NEUTRAL_TOOLS, OPTION_KINDS

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter
    from tackroom.adapters.plan import Plan
    from tackroom.adapters.spec import HooksCapability
    from tackroom.families.base import Family

TOOL_MOMENTS = ("before-tool", "after-tool")
_SAMPLES: dict[str, Any] = {
    "flag": True,
    "int": 7,
    "str": "tackroom-sample",
    "list": ["tackroom-a", "tackroom-b"],
}
# What tackroom sets to isolate a run; an option or env.set that sets one undoes the isolation.
_ISOLATION = ("HOME", "TMPDIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")
_MOCK_URL = "http://127.0.0.1:9"


def check_renderers(adapter: Adapter) -> list[Raw]:
    """Every capability names an engine that exists, serves that capability and reads its format."""
    from tackroom.adapters.checks import renderer_findings
    from tackroom.families import engines

    return list(renderer_findings(adapter.spec, engines()))


def check_hook_maps(adapter: Adapter) -> list[Raw]:
    """A declared hooks capability maps moments to distinct events, and its channels can be used."""
    hooks = adapter.spec.capabilities.hooks
    if hooks is None:
        return []  # the maps live inside the hooks table: without it there are none to check
    key = ("capabilities", "hooks")
    found: list[Raw] = []
    if not hooks.events:
        found.append(
            (
                (*key, "events"),
                "hooks are declared but no moment is mapped to an event: map at least one, or remove the "
                "hooks capability (an absent capability means the harness cannot hook)",
            )
        )
    seen: dict[str, str] = {}
    for moment, event in hooks.events.items():
        if not event.strip():
            found.append(((*key, "events", moment), "empty event name"))
        elif event in seen:
            found.append(
                (
                    (*key, "events", moment),
                    f"{moment!r} and {seen[event]!r} both map to {event!r}: a hook read back could not "
                    "say which moment it was for",
                )
            )
        seen.setdefault(event, moment)
    for which in ("inject", "refuse"):
        found += _channel(hooks, which)
    return found


def _channel(hooks: HooksCapability, which: str) -> list[Raw]:
    template = getattr(hooks, which)
    if template is None:
        return []
    key = ("capabilities", "hooks", which)
    found: list[Raw] = []
    if template.moments is not None:
        if not template.moments:
            found.append(((*key, "moments"), f"{which} works at no moment: list some, or remove {which}"))
        unmapped = [m for m in template.moments if m not in hooks.events]
        if unmapped:
            found.append(
                (
                    (*key, "moments"),
                    f"{', '.join(unmapped)} not in hooks.events: {which} cannot work at a moment nothing "
                    "hooks",
                )
            )
    uses = templates.placeholders(template.template).count("text")
    if uses != 1:
        found.append(
            (
                (*key, "template"),
                f"uses {{{{text}}}} {uses} times: the message must reach the harness exactly once, and be "
                "found again when the hook is read back",
            )
        )
    return found


def check_tool_vocabulary(adapter: Adapter) -> list[Raw]:
    """One name per tool across the model's tools, the hooks, the subagents and the mock."""
    spec = adapter.spec
    names = tool_names(adapter)
    found: list[Raw] = list(_duplicates(names, ("tools",), "the model's tools"))
    found += _mock_vocabulary(adapter)
    found += _mcp_call(adapter, names)
    found += _mcp_load(adapter)
    found += _text_call(adapter, names)
    hooks = spec.capabilities.hooks
    if hooks is not None:
        found += _hook_tools(adapter, hooks, names)
    subagents = spec.capabilities.subagents
    if subagents is not None and subagents.tools is not None and not names:
        found.append(
            (
                ("capabilities", "subagents", "tools"),
                "a subagent's tools are written in the harness's own names, but [tools] names none: every "
                "subagent with tools would be dropped",
            )
        )
    return found


def tool_names(adapter: Adapter) -> dict[str, str]:
    """Neutral tool -> the name the model calls it, for every tool the adapter names."""
    from tackroom.adapters.spec import ToolSpec

    out = {}
    for neutral in NEUTRAL_TOOLS:
        entry = getattr(adapter.spec.tools, neutral)
        if entry is not None:
            out[neutral] = entry.name if isinstance(entry, ToolSpec) else str(entry)
    return out


def _duplicates(names: Mapping[str, str], key: KeyPath, what: str) -> Iterator[Raw]:
    seen: dict[str, str] = {}
    for neutral, name in names.items():
        if name in seen:
            yield (
                (*key, neutral),
                f"{neutral!r} and {seen[name]!r} are both {name!r} in {what}: a subagent's or "
                "hook's tool read back could not say which it was",
            )
        seen.setdefault(name, neutral)


def _mock_vocabulary(adapter: Adapter) -> list[Raw]:
    from tackroom.errors import MockScriptError
    from tackroom.run.runner import vocabulary

    try:
        vocabulary(adapter)
    except MockScriptError as exc:
        key = ("tools", "mcp_offered" if adapter.spec.tools.mcp_offered else "mcp")
        return [(key, f"the mock cannot use this vocabulary: {exc}")]
    return []


def _mcp_call(adapter: Adapter, names: Mapping[str, str]) -> list[Raw]:
    call = adapter.spec.tools.mcp_call
    if call is None:
        return []
    key = ("tools", "mcp_call")
    found: list[Raw] = []
    if call.tool not in names.values():
        found.append(
            ((*key, "tool"), f"{call.tool!r} is none of the tools in [tools]: the model has no such tool")
        )
    fields = _pattern_fields(key, call.args, ("server", "tool", "arguments"), found)
    missing = {"server", "tool", "arguments"} - fields
    if missing:
        found.append(((*key, "args"), f"never uses {', '.join(sorted(missing))}: the MCP call would lose it"))
    return found


def _pattern_fields(
    key: tuple[str, ...], args: Mapping[str, str], known: tuple[str, ...], found: list[Raw]
) -> set[str]:
    """The fields ``args``' patterns use; a pattern that does not parse, or uses a field not
    ``known``, is added to ``found``."""
    fields: set[str] = set()
    for arg, text in args.items():
        try:
            used = {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}
        except ValueError as exc:
            found.append(((*key, "args", arg), f"bad pattern {text!r}: {exc}"))
            continue
        extra = used - set(known)
        if extra:
            use = ", ".join(f"{{{name}}}" for name in known)
            found.append(((*key, "args", arg), f"unknown fields {sorted(extra)} (use {use})"))
        fields |= used
    return fields


def _mcp_load(adapter: Adapter) -> list[Raw]:
    """The loading call names the MCP tool it loads, with fields it knows."""
    load = adapter.spec.tools.mcp_load
    if load is None:
        return []
    key = ("tools", "mcp_load")
    found: list[Raw] = []
    fields = _pattern_fields(key, load.args, ("name", "server", "tool"), found)
    if "name" not in fields and not {"server", "tool"} <= fields:
        why = "names no MCP tool (use {name}, or {server} and {tool}): it would load none"
        found.append(((*key, "args"), why))
    return found


def _text_call(adapter: Adapter, names: Mapping[str, str]) -> list[Raw]:
    call = adapter.spec.tools.text_call
    if call is None:
        return []
    key = ("tools", "text_call")
    found: list[Raw] = []
    if call.tool not in names.values():
        found.append(
            ((*key, "tool"), f"{call.tool!r} is none of the tools in [tools]: the model has no such tool")
        )
    if not any("{text}" in text for text in call.args.values()):
        found.append(((*key, "args"), "never uses {text}: the answer would be lost"))
    return found


def _tool_events(render: str) -> bool:
    """Whether the hooks engine ``render`` hooks tools through events of their own."""
    from tackroom.profile.engines import engine

    try:
        return engine(render).tool_events
    except TackroomError:  # an unknown engine is its own finding
        return False


def _hook_tools(adapter: Adapter, hooks: HooksCapability, names: Mapping[str, str]) -> list[Raw]:
    key = ("capabilities", "hooks", "tool_names")
    found: list[Raw] = []
    for neutral in hooks.tool_names:
        if neutral not in NEUTRAL_TOOLS:
            found.append(((*key, neutral), f"{neutral!r} is not a neutral tool ({', '.join(NEUTRAL_TOOLS)})"))
        elif neutral not in names:
            found.append(
                (
                    (*key, neutral),
                    f"renames {neutral!r} for hooks, but [tools] gives the harness no such tool",
                )
            )
    hook_names = {n: hooks.tool_names.get(n) or names[n] for n in names}
    hook_names |= {n: v for n, v in hooks.tool_names.items() if n in NEUTRAL_TOOLS and n not in names}
    found += [(k, m) for k, m in _duplicates(hook_names, key, "what hooks see") if k[-1] in hooks.tool_names]
    if any(m in hooks.events for m in TOOL_MOMENTS) and not names and not _tool_events(hooks.render):
        found.append(
            (
                ("capabilities", "hooks", "events"),
                "tool moments are hooked, but [tools] names no tool: every hook matching a tool would be "
                "dropped",
            )
        )
    return found


def check_templates(adapter: Adapter) -> list[Raw]:
    """Every option renders with a sample value that reaches the harness; the endpoint renders."""
    from tackroom.adapters.plan import Endpoint

    found: list[Raw] = [*_isolation(adapter), *_endpoint_templates(adapter)]
    with tempfile.TemporaryDirectory(prefix="tackroom-conformance-") as tmp:
        endpoints: list[Endpoint | None] = [None]
        if adapter.spec.model_endpoint is not None and not found:
            endpoints.append(Endpoint.for_mock(_MOCK_URL))
        for endpoint in endpoints:
            found += _options_render(adapter, Path(tmp), endpoint)
    return list(dict.fromkeys(found))


def _plan(adapter: Adapter, workdir: Path, options: Mapping[str, Any], endpoint: Any) -> Plan:
    from tackroom.adapters.plan import plan_run

    environ = {"PATH": os.defpath, "HOME": str(workdir)}
    return plan_run(
        adapter,
        "conformance prompt",
        options=options,
        workdir=workdir,
        home=workdir / "home",
        endpoint=endpoint,
        environ=environ,
    )


def _options_render(adapter: Adapter, workdir: Path, endpoint: Any) -> list[Raw]:
    against = " against the mock" if endpoint is not None else ""
    try:
        base = _plan(adapter, workdir, {}, endpoint)
    except TackroomError as exc:
        return [(("one_shot",), f"a run with no options{against} cannot be planned: {exc}")]
    found: list[Raw] = []
    for name, template in adapter.spec.options:
        if template is None:
            continue
        sample = _SAMPLES[OPTION_KINDS[name]]
        try:
            plan = _plan(adapter, workdir, {name: sample}, endpoint)
        except TackroomError as exc:
            found.append((("options", name), f"does not render{against} with {sample!r}: {exc}"))
            continue
        found += _reaches(name, sample, base, plan, against)
    return found


def _reaches(name: str, sample: Any, base: Plan, plan: Plan, against: str) -> list[Raw]:
    """A value option's sample value must reach the argv or the environment."""
    if OPTION_KINDS[name] == "flag":
        return []
    added = [*(a for a in plan.argv if a not in base.argv), *(v.value for v in plan.env if v not in base.env)]
    values = sample if isinstance(sample, list) else [str(sample)]
    lost = [v for v in values if not any(v in text for text in added)]
    if lost:
        return [(("options", name), f"{', '.join(map(repr, lost))} never reaches the harness{against}")]
    return []


def _isolation(adapter: Adapter) -> list[Raw]:
    from tackroom.adapters.spec import OptionSpec

    spec = adapter.spec
    endpoint = spec.model_endpoint
    protected = {
        **dict.fromkeys(_ISOLATION, "isolates the run's home"),
        **dict.fromkeys(spec.home, "relocates the harness's home into the run"),
        **dict.fromkeys(endpoint.env if endpoint else (), "points the harness at the model endpoint"),
    }
    found: list[Raw] = []
    for name, template in spec.options:
        for var in template.env if isinstance(template, OptionSpec) else ():
            if var in protected:
                found.append(
                    (
                        ("options", name, "env", var),
                        f"sets {var}, which {protected[var]}: the option would undo that",
                    )
                )
    for var in spec.env.set:
        if var in _ISOLATION or var in spec.home:
            found.append(
                (("env", "set", var), f"sets {var}, which {protected[var]}: the run would not be isolated")
            )
    return found


def _endpoint_templates(adapter: Adapter) -> list[Raw]:
    """Each endpoint template renders with what a mock run has: a URL, a key, and the default model."""
    endpoint = adapter.spec.model_endpoint
    if endpoint is None:
        return []
    values = {"base_url": _MOCK_URL, "api_key": "sk-conformance", "home": "/home", "workdir": "/work"}
    values |= {"model": endpoint.model} if endpoint.model else {}
    texts: list[tuple[KeyPath, str]] = [
        (("model_endpoint", "argv", str(i)), a) for i, a in enumerate(endpoint.argv)
    ]
    texts += [(("model_endpoint", "env", k), v) for k, v in endpoint.env.items()]
    for index, staged in enumerate(endpoint.files):
        texts += _strings(("model_endpoint", "files", str(index), "content"), staged.content)
    found: list[Raw] = []
    for key, text in texts:
        try:
            templates.substitute(text, values)
        except TackroomError as exc:
            why = (
                "model_endpoint.model sets no default model, so a run against the mock without "
                "--model cannot start"
                if "model" in templates.placeholders(text)
                else str(exc)
            )
            found.append((key, f"{text!r} does not render: {why}"))
    return found


def _strings(key: KeyPath, node: Any) -> list[tuple[KeyPath, str]]:
    if isinstance(node, str):
        return [(key, node)]
    if isinstance(node, dict):
        return [s for k, v in node.items() for s in _strings((*key, str(k)), v)]
    if isinstance(node, list):
        return [s for i, v in enumerate(node) for s in _strings((*key, str(i)), v)]
    return []


def check_family(adapter: Adapter) -> list[Raw]:
    """The family is registered and has a stream parser that takes any line."""
    from tackroom.families import get_family

    try:
        family = get_family(adapter.family)
    except TackroomError as exc:
        return [(("family",), str(exc))]
    return [(("family",), problem) for problem in family_problems(family)]


# Lines any harness may print: a parser must take each without raising.
_PROBE_LINES = ("", "plain text", "{}", "[]", '{"type": null}', '{"type": "result", "result": 1}', "{" * 200)


def family_problems(family: Family) -> list[str]:
    """What keeps ``family`` from parsing a run: no stream parser, or one that fails on ordinary lines."""
    from tackroom.families.base import StreamParser
    from tackroom.trace.events import Event

    name = f"family {family.name!r}"
    problems = [] if family.stream else [f"{name} does not say which stream it parses (Family.stream)"]
    try:
        parser, other = family.parser(), family.parser()
    except Exception as exc:  # third-party code: any failure is the finding
        return [*problems, f"{name}.parser() raised {type(exc).__name__}: {exc}"]
    if not isinstance(parser, StreamParser):
        return [*problems, f"{name}.parser() returned {type(parser).__name__}, not a StreamParser"]
    if parser is other:
        problems.append(f"{name}.parser() returns the same parser twice: each run needs a fresh one")
    kind = type(parser)
    if kind.feed is StreamParser.feed and kind.close is StreamParser.close:
        return [*problems, f"{name} has no stream parser: its parser reads nothing; override Family.parser()"]
    try:
        events = [e for line in _PROBE_LINES for e in parser.feed(line)] + parser.close(0)
    except Exception as exc:  # third-party code: any failure is the finding
        return [
            *problems,
            f"{name}'s parser raised {type(exc).__name__} on a line any harness may print: {exc}",
        ]
    if not all(isinstance(e, Event) for e in events):
        problems.append(f"{name}'s parser returned something that is not an Event")
    return problems


def check_detect(adapter: Adapter) -> list[Raw]:
    """Detection markers are plain relative paths inside a repository, each listed once."""
    from tackroom.detect import marker_parts

    found: list[Raw] = []
    seen: set[str] = set()
    for index, marker in enumerate(adapter.spec.detect):
        key = ("detect", str(index), "path")
        if marker_parts(marker.path) is None or "{{" in marker.path or "${" in marker.path:
            found.append(
                (key, f"{marker.path!r} must be a plain relative path inside the repository (e.g. '.claude')")
            )
        elif marker.path in seen:
            found.append((key, f"{marker.path!r} is listed twice"))
        seen.add(marker.path)
    return found
