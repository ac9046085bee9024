"""Grammar and cross-field rules of an adapter, each naming the exact key at fault.

These run on an :class:`AdapterSpec` that already has the right shape. Each
check yields ``(key path, message)``; the resolver turns the key path into a
file and line through provenance.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Protocol

from tackroom.adapters import templates
from tackroom.adapters.spec import AdapterSpec, EndpointOAuth, ModelEndpoint, OptionSpec, Trust
from tackroom.adapters.versions import at_least
from tackroom.vocabulary import OPTION_KINDS

OptionTemplate = list[str] | OptionSpec

Finding = tuple[tuple[str, ...], str]


class Renderer(Protocol):
    """What validation reads of a renderer engine: its name, the kinds it writes, the formats it reads."""

    @property
    def name(self) -> str: ...

    @property
    def kinds(self) -> frozenset[str]: ...

    @property
    def formats(self) -> frozenset[str]: ...


def check_adapter(spec: AdapterSpec, renderers: Mapping[str, Renderer]) -> list[Finding]:
    """Every grammar and cross-field problem of ``spec``; ``renderers`` is the engine registry by name."""
    return [
        *_one_shot(spec),
        *_options(spec),
        *_endpoint(spec.model_endpoint),
        *_trust(spec),
        *_paths(spec),
        *_install(spec),
        *renderer_findings(spec, renderers),
        *_reads(spec, renderers),
        *_versions(spec),
    ]


def option_argv(template: OptionTemplate) -> list[str]:
    """The argv elements of an option template, whichever form it was written in."""
    return template.argv if isinstance(template, OptionSpec) else template


def _one_shot(spec: AdapterSpec) -> Iterator[Finding]:
    key = ("one_shot",)
    prompts = endpoints = profiles = 0
    for element in spec.one_shot:
        opt = templates.OPT_ELEMENT.match(element)
        if opt:
            if opt.group(1) not in OPTION_KINDS:
                yield key, f"unknown option slot {element!r} (options: {', '.join(OPTION_KINDS)})"
            continue
        if element in ("{{endpoint}}", "{{trust}}", "{{profile}}"):
            endpoints += element == "{{endpoint}}"
            profiles += element == "{{profile}}"
            continue
        problem = templates.check_names(element, frozenset({"prompt"}))
        if problem:
            yield (
                key,
                (
                    problem
                    + "; {{opt.<name>}}, {{endpoint}}, {{trust}} and {{profile}} must be whole elements"
                ),
            )
        prompts += templates.placeholders(element).count("prompt")
    if spec.prompt_stdin and prompts:
        yield key, "{{prompt}} must not appear when prompt_stdin = true"
    if not spec.prompt_stdin and prompts != 1:
        yield key, f"{{{{prompt}}}} must appear exactly once (found {prompts})"
    if endpoints > 1:
        yield key, "{{endpoint}} may appear at most once"
    endpoint = spec.model_endpoint
    if endpoint and endpoint.argv and not endpoints:
        yield key, "model_endpoint.argv is set but one_shot has no {{endpoint}} slot for it"
    if profiles > 1:
        yield key, "{{profile}} may appear at most once"
    for kind, capability in spec.capabilities:
        if capability is None or not capability.argv:
            continue
        where = ("capabilities", kind, "argv")
        if not profiles:
            yield where, "a capability's argv is set but one_shot has no {{profile}} slot for it"
        if not capability.path:
            yield where, "a capability's argv names the file a run writes at its path, and it has no path"
        for element in capability.argv:
            problem = templates.check_names(element, frozenset({"path"}))
            if problem:
                yield where, problem


def _options(spec: AdapterSpec) -> Iterator[Finding]:
    slots = {m.group(1) for e in spec.one_shot if (m := templates.OPT_ELEMENT.match(e))}
    for name, template in spec.options:
        if template is None:
            continue
        key = ("options", name)
        if name not in slots:
            yield key, f"option {name!r} has a template but one_shot has no {{{{opt.{name}}}}} slot"
        yield from _option_template(key, name, template)


def _option_template(key: tuple[str, ...], name: str, template: OptionTemplate) -> Iterator[Finding]:
    argv = option_argv(template)
    env = template.env if isinstance(template, OptionSpec) else {}
    flag = OPTION_KINDS[name] == "flag"
    if not argv and not env and not flag:
        yield key, "an option that takes a value needs argv or env to put it in"
    values = 0
    for element in [*argv, *env.values()]:
        problem = templates.check_names(element, frozenset({"value"}))
        if problem:
            yield key, problem
        values += templates.placeholders(element).count("value")
    if flag and values:
        yield key, f"{name!r} is a flag option: its template takes no {{{{value}}}}"
    if not flag and not values:
        yield key, f"{name!r} takes a value: its template needs {{{{value}}}}"


def _endpoint(endpoint: ModelEndpoint | None) -> Iterator[Finding]:
    if endpoint is None:
        return
    allowed = templates.ENDPOINT_NAMES
    for index, element in enumerate(endpoint.argv):
        problem = templates.check_names(element, allowed)
        if problem:
            yield ("model_endpoint", "argv", str(index)), problem
    for var, value in endpoint.env.items():
        problem = templates.check_names(value, allowed)
        if problem:
            yield ("model_endpoint", "env", var), problem
    problem = templates.check_names(endpoint.model_format, frozenset({"model"}))
    if problem:
        yield ("model_endpoint", "model_format"), problem
    for index, staged in enumerate(endpoint.files):
        problem = templates.check_names(staged.path, templates.PATH_NAMES)
        if problem:
            yield ("model_endpoint", "files", str(index), "path"), problem
    yield from _oauth(endpoint.oauth)


def _oauth(oauth: EndpointOAuth | None) -> Iterator[Finding]:
    """A sign-in sends no key: its templates may not ask for one, and it needs a way to be signed in."""
    if oauth is None:
        return
    allowed = templates.ENDPOINT_NAMES - {"api_key"}
    for index, element in enumerate(oauth.argv):
        problem = templates.check_names(element, allowed)
        if problem:
            yield ("model_endpoint", "oauth", "argv", str(index)), problem
    for var, value in oauth.env.items():
        problem = templates.check_names(value, allowed)
        if problem:
            yield ("model_endpoint", "oauth", "env", var), problem
    for index, sign_in in enumerate(oauth.sign_in):
        problem = templates.check_names(sign_in.path, templates.PATH_NAMES)
        if problem:
            yield ("model_endpoint", "oauth", "sign_in", str(index), "path"), problem
    if not oauth.token_env and not oauth.sign_in:
        yield ("model_endpoint", "oauth"), "a sign-in needs token_env or sign_in: where its token comes from"


def _trust(spec: AdapterSpec) -> Iterator[Finding]:
    slots = spec.one_shot.count("{{trust}}")
    if slots > 1:
        yield ("one_shot",), "{{trust}} may appear at most once"
    trust: Trust | None = spec.trust
    if trust is None:
        if slots:
            yield ("one_shot",), "{{trust}} is used but the adapter has no [trust] table"
        return
    for key in ("argv", "untrusted_argv"):
        elements: list[str] = getattr(trust, key)
        if elements and not slots:
            yield (
                ("one_shot",),
                f'trust.{key} is set but one_shot has no {{{{trust}}}} slot for it: add "{{{{trust}}}}"',
            )
        for index, element in enumerate(elements):
            problem = templates.check_names(
                element, frozenset({"workdir"} if key == "untrusted_argv" else ())
            )
            if problem:
                yield ("trust", key, str(index)), problem
    for index, path in enumerate(trust.project):
        parts = path.replace("\\", "/").split("/")
        if not path or path.startswith(("/", "~")) or ".." in parts or "{{" in path:
            yield (
                ("trust", "project", str(index)),
                (f"{path!r} must be a plain relative path inside the project (e.g. '.gemini')"),
            )

    for path in trust.project_keys:
        if path not in trust.project:
            yield ("trust", "project_keys", path), f"{path!r} is not one of trust.project: add it there"
    for key in ("files", "untrusted_files"):
        for index, staged in enumerate(getattr(trust, key)):
            where = ("trust", key, str(index))
            if not trust.project:
                yield where, f"trust.{key} is staged only for project config, and trust.project is empty"
            problem = templates.check_names(staged.path, templates.PATH_NAMES)
            if problem:
                yield (*where, "path"), problem
            for text in _texts(staged.content):
                problem = templates.check_names(text, frozenset({"workdir", "root"}))
                if problem:
                    yield (*where, "content"), problem


def _texts(node: object) -> Iterator[str]:
    """Every key and string in a JSON value."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield key
            yield from _texts(value)
    elif isinstance(node, list):
        for item in node:
            yield from _texts(item)


def _paths(spec: AdapterSpec) -> Iterator[Finding]:
    paths: list[tuple[tuple[str, ...], str]] = [(("home", k), v) for k, v in spec.home.items()]
    paths += [(("env", "set", k), v) for k, v in spec.env.set.items()]
    if spec.transcripts:
        paths += [(("transcripts", "roots"), root) for root in spec.transcripts.roots]
    for name, capability in spec.capabilities:
        if capability is not None:
            if capability.path:
                paths.append((("capabilities", name, "path"), capability.path))
            if capability.project:
                paths.append((("capabilities", name, "project"), capability.project))
    for key, value in paths:
        problem = templates.check_names(value, templates.PATH_NAMES)
        if problem:
            yield key, problem
    hooks = spec.capabilities.hooks
    for which in ("inject", "refuse"):
        template = getattr(hooks, which) if hooks else None
        problem = template and templates.check_names(
            template.template, frozenset({"text", "event"}), braces=False
        )
        if problem:
            yield ("capabilities", "hooks", which, "template"), problem


def _install(spec: AdapterSpec) -> Iterator[Finding]:
    install = spec.install
    if install is None:
        return
    if (install.npm is None) == (install.pip is None):
        yield ("install",), "set exactly one of npm or pip"
    if install.extra and install.pip:
        yield ("install", "extra"), "extra packages are only supported with npm"
    if install.env and install.pip:
        yield ("install", "env"), "installer variables are only supported with npm"
    if install.python and install.npm:
        yield ("install", "python"), "a Python version is only meaningful with pip"


def _versions(spec: AdapterSpec) -> Iterator[Finding]:
    """``previously_verified`` lists distinct versions older than ``verified_with``."""
    verified, previous = spec.verified_with, spec.previously_verified
    key = ("previously_verified",)
    if previous and verified is None:
        yield key, "previously verified versions need verified_with, the newest version these facts hold for"
        return
    if len(set(previous)) != len(previous):
        yield key, "lists a version twice"
    for version in previous:
        if verified is not None and at_least(version, verified):
            yield key, f"{version} is not older than verified_with {verified}"


def _reads(spec: AdapterSpec, known: Mapping[str, Renderer]) -> Iterator[Finding]:
    """Each import-only place has a location, and either an engine that can read it or a reason."""
    for n, place in enumerate(spec.reads):
        key = ("reads", str(n))
        if place.path is None and place.project is None:
            yield key, "set path, project or both"
        for which in ("path", "project"):
            value = getattr(place, which)
            problem = value and templates.check_names(value, templates.PATH_NAMES)
            if problem:
                yield (*key, which), problem
        if (place.render is None) == (place.reason is None):
            yield key, "set exactly one of render (read it) or reason (name each file found, unread)"
        if place.ending and place.reason is None:
            yield (*key, "ending"), "only a place named with a reason picks files by ending"
        if place.render is None:
            continue
        found = known.get(place.render)
        if getattr(spec.capabilities, place.kind) is None:
            yield (*key, "kind"), f"no {place.kind} capability to read it as"
        elif found is None:
            yield (*key, "render"), f"no renderer {place.render!r} (renderers: {', '.join(known)})"
        elif place.kind not in found.kinds:
            serves = ", ".join(sorted(found.kinds))
            yield (*key, "render"), f"renderer {found.name!r} reads {serves}, not {place.kind}"


def renderer_findings(spec: AdapterSpec, known: Mapping[str, Renderer]) -> Iterator[Finding]:
    """Each capability names an engine that exists, serves that capability, and reads its format."""
    for kind in type(spec.capabilities).model_fields:
        capability = getattr(spec.capabilities, kind)
        if capability is None:
            continue
        key = ("capabilities", kind)
        found = known.get(capability.render)
        if found is None:
            yield (*key, "render"), f"no renderer {capability.render!r} (renderers: {', '.join(known)})"
        elif kind not in found.kinds:
            serves = ", ".join(sorted(found.kinds))
            yield (*key, "render"), f"renderer {found.name!r} writes {serves}, not {kind}"
        elif capability.format is not None and capability.format not in found.formats:
            takes = ", ".join(sorted(found.formats)) or "no format"
            yield (*key, "format"), f"renderer {found.name!r} takes {takes}, not {capability.format!r}"
