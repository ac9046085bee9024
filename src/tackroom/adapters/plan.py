"""adapter + options + prompt + environment -> Plan: everything a run would do, computed without running.

``tackroom adapters render`` prints a plan and ``tackroom run`` executes one: the
same code path, so what render shows is what runs.

The plan reads the adapter's *effective* table (plain data that resolution
already validated), not its typed spec: a run then never imports the schema
models, which would cost more start-up time than everything else tackroom adds.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NoReturn

from tackroom.adapters import templates
from tackroom.errors import OptionError, TemplateError, UnsupportedOptionError
from tackroom.options import coerce_option
from tackroom.redact import is_secret_name, redact_text
from tackroom.vocabulary import OPTION_KINDS

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter
    from tackroom.trust_records import NativeTrust

#: Variables every harness gets from the caller: what a process needs to run,
#: find certificates and reach a proxy. Nothing else of the host passes
#: unless the adapter's ``env.pass`` names it.
ALLOWLIST = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TERM",
    "TZ",
    "TMPDIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
)

SECRET_SHOWN = "<secret>"
DEFAULT_API_KEY = "sk-tackroom-mock"
"""The dummy key of tackroom's keyless mock; no other endpoint is ever sent it."""

#: Where a user keeps the key for each wire API, by the providers' own convention: the
#: key an endpoint other than the mock gets, unless ``--api-key-env`` names another variable.
WIRE_KEY_VARIABLES: Mapping[str, tuple[str, ...]] = {
    "anthropic-messages": ("ANTHROPIC_API_KEY",),
    "openai-responses": ("OPENAI_API_KEY",),
    "openai-chat": ("OPENAI_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
}
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SIGN_IN_BYTES = 1024 * 1024
"""The most of a sign-in file read to see whether it holds a sign-in (they are a few KB)."""

AuthMode = Literal["api-key", "oauth"]
"""How a harness signs in to an endpoint: an API key (``{{api_key}}``), or a subscription sign-in
(the adapter's ``[model_endpoint.oauth]``: a token passed through, or its own copied sign-in)."""

EnvSource = Literal["allowlist", "pass", "home", "set", "endpoint", "option", "trust"]


@dataclass(frozen=True)
class Endpoint:
    """A model base URL to point the harness at (the mock, a gateway, any endpoint).

    Its adapter's ``model_endpoint`` data says how: the variables, flags or files that carry it.

    >>> import tackroom
    >>> from pathlib import Path
    >>> claude = tackroom.load_adapters()["claude-code"]
    >>> endpoint = tackroom.Endpoint("http://127.0.0.1:8787", api_key="sk-test")
    >>> plan = tackroom.plan_run(claude, "hi", workdir=Path("."), endpoint=endpoint)
    >>> sorted(v.name for v in plan.env if v.name.startswith("ANTHROPIC_"))
    ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL']
    """

    base_url: str
    """As given, with or without ``/v1``; the adapter decides which the harness gets."""
    api_key: str | None = None
    """The key to send; None: the caller's variable ``api_key_env``, else the wire's usual one."""
    api_key_env: str | None = None
    """The caller's variable that holds the key (``--api-key-env``)."""
    mock: bool = False
    """tackroom's keyless mock: it gets the dummy key, and the run gets no real credential."""
    auth: AuthMode | None = None
    """``api-key`` or ``oauth``; None: chosen by itself (a key if there is one, else a sign-in)."""
    credentials: bool = False
    """The harness's own config is copied into the run (``--credentials``): a sign-in there counts."""
    token: tuple[str, str] | None = field(default=None, repr=False)
    """The sign-in token passed to the harness in ``oauth`` mode: its variable and value."""

    @classmethod
    def for_mock(cls, base_url: str) -> Endpoint:
        """tackroom's own mock at ``base_url``: the dummy key, nothing real."""
        return cls(base_url, api_key=DEFAULT_API_KEY, mock=True)

    def url_for(self, v1: bool) -> str:
        url = self.base_url.rstrip("/")
        has_v1 = url.endswith("/v1")
        if v1 and not has_v1:
            return url + "/v1"
        if not v1 and has_v1:
            return url[: -len("/v1")]
        return url


@dataclass(frozen=True)
class EnvVar:
    """One variable of the harness's environment, where it came from, and whether it is secret."""

    name: str
    value: str
    source: EnvSource
    secret: bool


@dataclass(frozen=True)
class StagedFile:
    """A config file the run writes (merged into an existing file, never clobbering it)."""

    path: Path
    format: Literal["json", "yaml", "toml"]
    content: dict[str, Any]


@dataclass(frozen=True)
class Plan:
    """Everything a run would do: argv, environment, files, and the adapter hash.

    >>> import tackroom
    >>> from pathlib import Path
    >>> plan = tackroom.plan_run(tackroom.load_adapters()["codex"], "hi", workdir=Path("."))
    >>> plan.argv[0], plan.family, len(plan.adapter_hash)
    ('codex', 'codex', 64)
    """

    adapter: str
    harness: str
    family: str
    adapter_hash: str
    argv: tuple[str, ...]
    env: tuple[EnvVar, ...]
    cwd: Path
    home: Path | None
    """The run's own home, or None when the harness uses the caller's real home."""
    stdin: str | None = None
    files: tuple[StagedFile, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    withheld: tuple[str, ...] = ()
    """What tackroom kept from the harness, and why (an untrusted project's flags, credentials)."""
    untrusted: str | None = None
    """Why the adapter's trust flags were withheld (the harness may then refuse the project)."""
    secrets: frozenset[str] = field(default=frozenset(), repr=False, compare=False)
    """Secret values of this plan, hidden wherever the plan is shown."""
    auth: AuthMode | None = None
    """How the harness signs in to its endpoint (None: no endpoint, its own defaults)."""

    def environ(self) -> dict[str, str]:
        """The whole environment the process gets."""
        return {var.name: var.value for var in self.env}

    def shown_argv(self) -> tuple[str, ...]:
        """The argv as it may be shown or saved: secret values and URL credentials hidden."""
        return tuple(redact_text(element, self.secrets) for element in self.argv)

    def to_json(self) -> dict[str, Any]:
        """The plan as JSON data: secret values shown as ``<secret>``, credentials in URLs hidden."""
        return {
            "adapter": self.adapter,
            "harness": self.harness,
            "family": self.family,
            "hash": self.adapter_hash,
            "argv": list(self.shown_argv()),
            "env": {v.name: SECRET_SHOWN if v.secret else redact_text(v.value) for v in self.env},
            "env_sources": {v.name: v.source for v in self.env},
            "stdin": SECRET_SHOWN if self.stdin is not None else None,
            "files": [{"path": str(f.path), "format": f.format} for f in self.files],
            "cwd": str(self.cwd),
            "home": str(self.home) if self.home else None,
            "withheld": list(self.withheld),
            "auth": self.auth,
        }


def plan_run(
    adapter: Adapter,
    prompt: str,
    *,
    options: Mapping[str, Any] | None = None,
    workdir: Path | None = None,
    home: Path | None = None,
    endpoint: Endpoint | None = None,
    environ: Mapping[str, str] | None = None,
    profile_argv: Sequence[str] = (),
) -> Plan:
    """The plan of one run of ``adapter``: argv, environment and files, computed without running anything.

    >>> import tackroom
    >>> from pathlib import Path
    >>> adapter = tackroom.load_adapters()["claude-code"]
    >>> plan = tackroom.plan_run(adapter, "fix the bug", options={"model": "sonnet"}, workdir=Path("."))
    >>> plan.argv[:3], "--model" in plan.argv
    (('claude', '-p', 'fix the bug'), True)

    ``home`` is the run's isolated home; None means the caller's real home.
    ``environ`` is the caller's environment (default ``os.environ``): the
    allowlist picks from it. ``profile_argv`` goes at one_shot's ``{{profile}}`` slot: what the
    run's rendered profile needs the harness to be told (:func:`profile_argv`).
    """
    from tackroom.adapters.resolve import identity_variables

    return build_plan(
        adapter,
        prompt=prompt,
        options=options,
        workdir=(workdir or Path.cwd()).resolve(),
        home=home,
        endpoint=endpoint,
        environ=os.environ if environ is None else environ,
        scrub=identity_variables(),
        profile_argv=profile_argv,
    )


def build_plan(
    adapter: Adapter,
    *,
    prompt: str,
    options: Mapping[str, Any] | None = None,
    workdir: Path,
    home: Path | None,
    endpoint: Endpoint | None = None,
    environ: Mapping[str, str],
    scrub: Sequence[str] = (),
    profile_argv: Sequence[str] = (),
) -> Plan:
    """Compute the plan for one run of ``adapter`` (nothing is spawned or written).

    ``home`` is the run's isolated home (None: the caller's real home);
    ``scrub`` adds variables to remove besides the adapter's own ``env.scrub``.
    """
    values = {name: coerce_option(name, value) for name, value in (options or {}).items()}
    data = adapter.effective
    wiring = _wiring(adapter)
    model = _endpoint_model(adapter, values, endpoint)
    if endpoint is not None:
        endpoint = _authorized(adapter, endpoint, environ)
    if wiring is not None and model is not None and "model" in data.get("options", {}):
        values["model"] = templates.substitute(wiring.get("model_format", "{{model}}"), {"model": model})
    native = _native_trust(adapter, workdir, environ)
    argv, option_env = _argv(adapter, values, prompt, endpoint, model, native, workdir, profile_argv)
    real_home = environ.get("HOME", str(Path.home()))
    home_text = str(home) if home is not None else real_home
    builder = _EnvBuilder(adapter, environ, home_text, str(workdir))
    builder.base(home, endpoint)
    builder.adapter_set()
    for name, value in _trusted(data.get("trust", {}), native, "env", {}).items():
        builder.add(name, value, "trust")
    if endpoint is not None:
        builder.endpoint(endpoint, model)
    for name, value in option_env.items():
        builder.add(name, value, "option")
    builder.scrub((*data.get("env", {}).get("scrub", ()), *scrub))
    files = _files(adapter, endpoint, model, builder.values(), home_text, str(workdir))
    if home is not None:
        files += _trust_files(data.get("trust", {}), native, builder.values(), home_text, workdir)
    withheld = (*builder.withheld, *([native.note] if native.note else []))
    return Plan(
        adapter=adapter.name,
        harness=adapter.harness,
        family=adapter.family,
        adapter_hash=adapter.hash,
        argv=tuple(argv),
        env=tuple(builder.vars.values()),
        cwd=workdir,
        home=home,
        stdin=prompt if data.get("prompt_stdin") else None,
        files=files,
        options=values,
        withheld=withheld,
        untrusted=None if native.allowed else native.note,
        secrets=frozenset(v.value for v in builder.vars.values() if v.secret and v.value),
        auth=endpoint.auth if endpoint is not None else None,
    )


def _authorized(adapter: Adapter, endpoint: Endpoint, environ: Mapping[str, str]) -> Endpoint:
    """``endpoint`` with how the harness signs in to it decided: its key, or its sign-in.

    Chosen by itself, a key wins (as the harnesses themselves prefer one), then a sign-in: the
    adapter's ``token_env`` set, or with ``--credentials`` its own sign-in file holding one.
    """
    if endpoint.mock and endpoint.auth == "oauth":
        raise OptionError(
            "--auth oauth: a run against the mock gets no real credential; point the harness at an "
            "endpoint with --base-url (the mock served on its own, `tackroom mock serve`, is one)"
        )
    if endpoint.mock or endpoint.auth == "api-key":
        return replace(endpoint, api_key=_api_key(adapter, endpoint, environ), auth="api-key")
    oauth: Mapping[str, Any] | None = (_wiring(adapter) or {}).get("oauth")
    if endpoint.auth == "oauth":
        if oauth is None:
            raise OptionError(_no_oauth(adapter))
        return _signed_in(adapter, endpoint, oauth, environ) or _no_sign_in(adapter, oauth, environ)
    key = _found_key(adapter, endpoint, environ)
    if key is not None or endpoint.api_key_env is not None:
        return replace(endpoint, api_key=_api_key(adapter, endpoint, environ), auth="api-key")
    signed = _signed_in(adapter, endpoint, oauth, environ) if oauth is not None else None
    if signed is not None:
        return signed
    try:
        return replace(endpoint, api_key=_api_key(adapter, endpoint, environ), auth="api-key")
    except OptionError as exc:
        if oauth is None:
            raise
        raise OptionError(f"{exc}; or sign in: {_sign_in_ways(oauth, environ)}") from None


def _found_key(adapter: Adapter, endpoint: Endpoint, environ: Mapping[str, str]) -> str | None:
    """The caller's key for ``endpoint`` if one is set (given, or in the wire's usual variable)."""
    if endpoint.api_key is not None:
        return endpoint.api_key
    wiring = _wiring(adapter) or {}
    for name in WIRE_KEY_VARIABLES.get(str(wiring.get("wire_api")), ()):
        if environ.get(name):
            return environ[name]
    return None


def _signed_in(
    adapter: Adapter, endpoint: Endpoint, oauth: Mapping[str, Any], environ: Mapping[str, str]
) -> Endpoint | None:
    """``endpoint`` in ``oauth`` mode when there is a sign-in to use: a token, or a copied sign-in file."""
    for name in oauth.get("token_env", ()):
        if environ.get(name):
            return replace(endpoint, api_key=None, auth="oauth", token=(name, environ[name]))
    if endpoint.credentials and _sign_in_files(oauth, environ, present=True):
        return replace(endpoint, api_key=None, auth="oauth", token=None)
    return None


def _sign_in_files(oauth: Mapping[str, Any], environ: Mapping[str, str], *, present: bool) -> list[Path]:
    """The sign-in files of the caller's real home (where ``--credentials`` copies from): those that
    hold a sign-in (``present``), or all of them."""
    real = environ.get("HOME", str(Path.home()))
    found = []
    for sign_in in oauth.get("sign_in", ()):
        path = templates.expand_path(sign_in["path"], env={}, home=real, workdir=real)
        if not present or _holds_sign_in(path, sign_in.get("key")):
            found.append(path)
    return found


def _holds_sign_in(path: Path, key: str | None) -> bool:
    """Whether ``path`` is a regular file (holding ``key`` with a value, when one is named)."""
    try:
        if not path.is_file():
            return False
        if key is None:
            return True
        with path.open("rb") as handle:
            data = json.loads(handle.read(_SIGN_IN_BYTES))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get(key) is not None


def _no_oauth(adapter: Adapter) -> str:
    wire = str((_wiring(adapter) or {}).get("wire_api"))
    keys = " or ".join(WIRE_KEY_VARIABLES.get(wire, ())) or "its key's variable"
    return (
        f"--auth oauth: harness {adapter.harness!r} (adapter {adapter.name!r}) has no subscription "
        f"sign-in tackroom can point at an endpoint (no [adapter.{adapter.name}.model_endpoint.oauth] "
        f"table): use --auth api-key with {keys} set (or --api-key-env NAME), or declare one in an "
        "operator adapter file"
    )


def _no_sign_in(adapter: Adapter, oauth: Mapping[str, Any], environ: Mapping[str, str]) -> NoReturn:
    raise OptionError(
        f"--auth oauth: no sign-in for harness {adapter.harness!r} (adapter {adapter.name!r}): "
        f"{_sign_in_ways(oauth, environ)}"
    )


def _sign_in_ways(oauth: Mapping[str, Any], environ: Mapping[str, str]) -> str:
    """How a user gives the harness its sign-in, as the adapter's oauth table says."""
    ways = [f"set {name}" for name in oauth.get("token_env", ())]
    held = _sign_in_files(oauth, environ, present=True)
    if held:
        ways.append(f"add --credentials to use the sign-in in {held[0]}")
    elif oauth.get("sign_in"):
        where = ", ".join(str(path) for path in _sign_in_files(oauth, environ, present=False))
        ways.append(f"sign in to the harness ({where}) and add --credentials")
    return ", or ".join(ways)


def _api_key(adapter: Adapter, endpoint: Endpoint, environ: Mapping[str, str]) -> str:
    """The key an endpoint gets: the dummy for the mock; the caller's own key for any other."""
    if endpoint.api_key is not None:
        return endpoint.api_key
    if endpoint.mock:
        return DEFAULT_API_KEY
    chosen = endpoint.api_key_env
    if chosen is not None and not _ENV_NAME.match(chosen):
        raise OptionError(f"--api-key-env {chosen!r} is not a variable name")
    wiring = _wiring(adapter) or {}
    names = (chosen,) if chosen else WIRE_KEY_VARIABLES.get(str(wiring.get("wire_api")), ())
    for name in names:
        if environ.get(name):
            return environ[name]
    if not _sends_api_key(wiring):
        return ""
    where = redact_text(endpoint.base_url)
    if chosen:
        raise OptionError(f"--api-key-env {chosen}: {chosen} is not set, so there is no key for {where}")
    listed = " or ".join(names) or "no variable"
    raise OptionError(
        f"no API key for {where}: adapter {adapter.name!r} sends one, and {listed} is not set; set it, or "
        "name the variable that holds the key with --api-key-env NAME (api_key_env= in Python)"
    )


def _sends_api_key(wiring: Mapping[str, Any]) -> bool:
    texts = [*wiring.get("env", {}).values(), *wiring.get("argv", ())]
    texts += [str(staged.get("content")) for staged in wiring.get("files", ())]
    return any("api_key" in templates.placeholders(text) for text in texts)


def _native_trust(adapter: Adapter, workdir: Path, environ: Mapping[str, str]) -> NativeTrust:
    """Which of the adapter's trust flags may be given here, and what was withheld and why."""
    from tackroom.trust_records import NativeTrust, native_trust

    if not adapter.effective.get("trust"):
        return NativeTrust(allowed=True)
    return native_trust(adapter, workdir, environ)


def _trusted(table: Mapping[str, Any], native: NativeTrust, key: str, empty: Any) -> Any:
    """The trust table's ``argv`` or ``env`` a run gets: the flags that let the harness load the
    project's config when that is allowed, else those that keep it from it."""
    return table.get(key if native.allowed else f"untrusted_{key}", empty)


def _endpoint_model(adapter: Adapter, values: Mapping[str, Any], endpoint: Endpoint | None) -> str | None:
    if endpoint is None:
        return None
    wiring = _wiring(adapter)
    if wiring is None:
        raise OptionError(
            f"harness {adapter.harness!r} (adapter {adapter.name!r}) cannot be pointed at a model "
            "endpoint: its adapter has no [model_endpoint] table"
        )
    model = values.get("model")
    return model if isinstance(model, str) else wiring.get("model")


def _argv(
    adapter: Adapter,
    values: Mapping[str, Any],
    prompt: str,
    endpoint: Endpoint | None,
    model: str | None,
    native: NativeTrust,
    workdir: Path,
    profile_argv: Sequence[str] = (),
) -> tuple[list[str], dict[str, str]]:
    data = adapter.effective
    templates_by_option: Mapping[str, Any] = data.get("options", {})
    supported = [name for name in OPTION_KINDS if name in templates_by_option]
    for name in values:
        if name not in templates_by_option:
            raise UnsupportedOptionError(
                harness=adapter.harness, adapter=adapter.name, option=name, supported=supported
            )
    argv = [str(data["executable"])]
    env: dict[str, str] = {}
    wiring = _wiring(adapter)
    for element in data["one_shot"]:
        slot = templates.OPT_ELEMENT.match(element)
        if slot:
            name = slot.group(1)
            if name in values:
                argv += _render_option(templates_by_option[name], name, values[name], env)
        elif element == "{{endpoint}}":
            if endpoint is not None and wiring is not None:
                argv += [_endpoint_text(e, adapter, endpoint, model) for e in _mode(wiring, endpoint)["argv"]]
        elif element == "{{trust}}":
            trust_argv = _trusted(data.get("trust", {}), native, "argv", [])
            argv += [templates.substitute(e, {"workdir": str(workdir)}) for e in trust_argv]
        elif element == "{{profile}}":
            argv += profile_argv
        else:
            argv.append(templates.substitute(element, {"prompt": prompt}))
    return argv, env


def _render_option(template: Any, name: str, value: Any, env: dict[str, str]) -> list[str]:
    kind = OPTION_KINDS[name]
    if kind == "flag" and not value:
        return []
    items = value if kind == "list" else [str(value)]
    # An option template is a list of argv elements, or a table with argv and env.
    spec = template if isinstance(template, dict) else {"argv": template}
    for var, text in spec.get("env", {}).items():
        env[var] = ",".join(templates.substitute(text, {"value": item}) for item in items)
    argv: list[str] = spec.get("argv", [])
    if kind == "flag":
        return list(argv)
    return [templates.substitute(element, {"value": item}) for item in items for element in argv]


def _wiring(adapter: Adapter) -> Mapping[str, Any] | None:
    wiring: Mapping[str, Any] | None = adapter.effective.get("model_endpoint")
    return wiring


def _mode(wiring: Mapping[str, Any], endpoint: Endpoint) -> dict[str, Any]:
    """The endpoint wiring of the endpoint's sign-in: the oauth table's, or the key's (the table's own)."""
    table = wiring.get("oauth") if endpoint.auth == "oauth" else None
    table = table if table is not None else wiring
    return {
        "argv": table.get("argv", ()),
        "env": table.get("env", {}),
        "files": wiring.get("files", ()) if table is wiring else (),
        "base_url_v1": bool(table.get("base_url_v1")),
    }


def _endpoint_values(adapter: Adapter, endpoint: Endpoint, model: str | None) -> dict[str, str]:
    wiring = _wiring(adapter)
    assert wiring is not None
    values = {
        "base_url": endpoint.url_for(_mode(wiring, endpoint)["base_url_v1"]),
        "api_key": endpoint.api_key or "",
    }
    if model is not None:
        values["model"] = model
    return values


def _endpoint_text(text: str, adapter: Adapter, endpoint: Endpoint, model: str | None) -> str:
    try:
        return templates.substitute(text, _endpoint_values(adapter, endpoint, model))
    except TemplateError as exc:
        raise TemplateError(
            f"adapter {adapter.name!r} needs a model to point at an endpoint: set the model option ({exc})"
        ) from exc


class _EnvBuilder:
    def __init__(self, adapter: Adapter, environ: Mapping[str, str], home: str, workdir: str) -> None:
        self.adapter = adapter
        self.environ = environ
        self.home = home
        self.workdir = workdir
        self.vars: dict[str, EnvVar] = {}
        self.withheld: list[str] = []
        self.secret_values: set[str] = set()
        self.table: Mapping[str, Any] = adapter.effective.get("env", {})
        self.extra_secret = set(self.table.get("secret", ()))

    def add(self, name: str, value: str, source: EnvSource, secret: bool = False) -> None:
        secret = secret or is_secret_name(name) or name in self.extra_secret
        secret = secret or any(s and s in value for s in self.secret_values)
        self.vars[name] = EnvVar(name, value, source, secret)

    def base(self, home: Path | None, endpoint: Endpoint | None) -> None:
        for name in ALLOWLIST:
            if name in self.environ:
                self._allow(name, self.environ[name], endpoint)
        # The pass list carries the caller's keys and logins for the harness's own provider; an
        # endpoint tackroom points the harness at gets exactly one key, through {{api_key}}.
        if endpoint is None:
            for name in self.table.get("pass", ()):
                if name in self.environ:
                    self.add(name, self.environ[name], "pass", secret=True)
        if home is not None:
            self._isolate(home)

    def _allow(self, name: str, value: str, endpoint: Endpoint | None) -> None:
        if endpoint is not None and endpoint.mock and redact_text(value) != value:
            self.withheld.append(
                f"{name}: withheld, it carries credentials and a run against the mock gets no real credential"
            )
            return
        self.add(name, value, "allowlist")

    def _isolate(self, home: Path) -> None:
        self.add("HOME", str(home), "home")
        self.add("TMPDIR", str(home.parent / "tmp"), "home")
        for name, sub in (
            ("XDG_CONFIG_HOME", ".config"),
            ("XDG_DATA_HOME", ".local/share"),
            ("XDG_STATE_HOME", ".local/state"),
            ("XDG_CACHE_HOME", ".cache"),
        ):
            self.add(name, str(home / sub), "home")
        for name, default in self.adapter.effective.get("home", {}).items():
            path = templates.expand_path(default, env={}, home=str(home), workdir=self.workdir)
            self.add(name, str(path), "home")

    def adapter_set(self) -> None:
        for name, value in self.table.get("set", {}).items():
            self.add(name, templates.substitute(value, {"home": self.home, "workdir": self.workdir}), "set")

    def endpoint(self, endpoint: Endpoint, model: str | None) -> None:
        wiring = _wiring(self.adapter)
        assert wiring is not None
        if endpoint.api_key:
            self.secret_values.add(endpoint.api_key)
        if endpoint.token is not None:
            # The sign-in's token goes through as the caller set it, and is as secret as a key.
            self.secret_values.add(endpoint.token[1])
            self.add(*endpoint.token, "endpoint", secret=True)
        for name, value in _mode(wiring, endpoint)["env"].items():
            text = _endpoint_text(value, self.adapter, endpoint, model)
            self.add(name, text, "endpoint", secret="{{api_key}}" in value)

    def scrub(self, names: Iterable[str]) -> None:
        for name in names:
            if self.vars.get(name) is not None and self.vars[name].source in ("allowlist", "pass"):
                del self.vars[name]

    def values(self) -> dict[str, str]:
        return {name: var.value for name, var in self.vars.items()}


def _files(
    adapter: Adapter,
    endpoint: Endpoint | None,
    model: str | None,
    env: Mapping[str, str],
    home: str,
    workdir: str,
) -> tuple[StagedFile, ...]:
    wiring = _wiring(adapter)
    if endpoint is None or wiring is None:
        return ()
    values = _endpoint_values(adapter, endpoint, model)
    return tuple(_staged(staged, values, env, home, workdir) for staged in _mode(wiring, endpoint)["files"])


def _trust_files(
    table: Mapping[str, Any], native: NativeTrust, env: Mapping[str, str], home: str, workdir: Path
) -> tuple[StagedFile, ...]:
    """The trust table's files an isolated home gets: ``files`` in a project whose config the user
    trusted, ``untrusted_files`` in one they have not, nothing where there is none."""
    if native.allowed and not native.held:
        return ()
    from tackroom.repo import project_chain

    chosen = table.get("files" if native.allowed else "untrusted_files", ())
    values = {"workdir": str(workdir), "root": str(project_chain(workdir)[-1])}
    return tuple(_staged(staged, values, env, home, str(workdir), keys=True) for staged in chosen)


def _staged(
    staged: Mapping[str, Any],
    values: Mapping[str, str],
    env: Mapping[str, str],
    home: str,
    workdir: str,
    *,
    keys: bool = False,
) -> StagedFile:
    path = templates.expand_path(staged["path"], env=env, home=home, workdir=workdir)
    return StagedFile(path, staged["format"], _fill(staged["content"], values, keys))


def _fill(node: Any, values: Mapping[str, str], keys: bool = False) -> Any:
    if isinstance(node, str):
        return templates.substitute(node, values)
    if isinstance(node, dict):
        return {
            templates.substitute(key, values) if keys else key: _fill(value, values, keys)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_fill(item, values, keys) for item in node]
    return node
