"""A run as a value: what one run is, before anything runs.

A :class:`RunSpec` is frozen, checked when it is made, and the same on every
machine: it round-trips through JSON (:meth:`RunSpec.to_json`,
:meth:`RunSpec.from_json`, which refuses an unknown field) and has a content
hash (:attr:`RunSpec.hash`) that is stable across processes and hosts, the id
of an evaluation cell. It holds no object of this process: a mock script is
held as its turns, not as a file name, so a spec shipped elsewhere runs the
same script.

What a run needs from the machine it runs on (the adapter set loaded there,
the environment, where run directories go, a mock server already serving, a
callback per event) is not part of the value: :func:`tackroom.run.runner.arun`
takes those beside the spec.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args
from urllib.parse import urlsplit

from tackroom._hash import sha256
from tackroom.errors import RunSpecError
from tackroom.options import coerce_option
from tackroom.run.sandbox import Network, sandbox_names

if TYPE_CHECKING:
    from tackroom.mock import Script

HomeMode = Literal["isolated", "real"]
AuthMode = Literal["api-key", "oauth"]
"""How the harness signs in to its endpoint (:data:`tackroom.adapters.plan.AuthMode`)."""
ProfileRef = Literal["default", "none", "given"]
"""``default``: the global profile plus the project's; ``none``: no profile; ``given``: a
:class:`~tackroom.profile.model.Profile` object handed to ``arun`` beside the spec (not part of
the value, so a spec saying ``given`` runs only where that object is given again)."""

SPEC_FORMAT = 1
"""The version of the JSON form; a spec of another version is refused, not guessed at."""


@dataclass(frozen=True, kw_only=True)
class RunSpec:
    """What one run is: the harness, the prompt, the model endpoint, the isolation and the limits.

    Every value is checked on construction; a bad one is a :class:`~tackroom.errors.RunSpecError`
    (or an :class:`~tackroom.errors.OptionError` for an option) before anything starts.

    >>> import tackroom
    >>> spec = tackroom.RunSpec(prompt="fix the bug", adapter="codex", mock=tackroom.Script.text("done"))
    >>> len(spec.hash), tackroom.RunSpec.from_json(spec.to_json()).hash == spec.hash
    (64, True)
    >>> tackroom.RunSpec(prompt="fix the bug", timeout_s=-1)
    Traceback (most recent call last):
    ...
    tackroom.errors.RunSpecError: timeout must be a positive, finite number of seconds, got -1
    """

    prompt: str
    adapter: str | None = None
    """The adapter's name; None: the project file's ``harness``, else the one the repository picks."""
    version: str | None = None
    """The harness version to run (a managed install); None: the verified, else the newest, else PATH."""
    transport: str | None = None
    """Reach the harness another way its adapter declares (``acp``)."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """Option values, coerced to their kinds (list options as tuples)."""
    workdir: Path = field(default_factory=Path.cwd)
    """The working directory (absolute, resolved): the harness runs in it."""
    mock: Script | None = None
    """The mock model's script: the run gets the keyless mock. None: ``base_url``, ``gateway`` or the
    provider's own API."""
    base_url: str | None = None
    """Point the harness at this endpoint with the caller's own key."""
    api_key_env: str | None = None
    """The variable holding the key for ``base_url`` or ``gateway``."""
    auth: AuthMode | None = None
    """How the harness signs in to ``base_url``, ``gateway`` or the run's own gateway: ``api-key``, or
    ``oauth`` (a subscription: the adapter's ``[model_endpoint.oauth]``, its token passed through or
    its own sign-in copied in by ``credentials``); None: chosen by itself, a key if there is one,
    else a sign-in."""
    gateway: str | None = None
    """Send the model calls through this running ``tackroom gateway``, under the run's trace id."""
    capture: bool = False
    """Start a gateway for the run itself and capture every model call."""
    timeout_s: float = 600.0
    home: HomeMode = "isolated"
    credentials: bool = False
    """Copy the harness's real config into the isolated home for the run (never with the mock)."""
    profile: ProfileRef = "default"
    sandbox: str = "none"
    """Where the harness runs: ``none`` (on the host), ``bwrap``, or another registered sandbox."""
    network: Network = "host"
    """``none``: the harness reaches nothing but its model endpoint (a sandbox that can isolate it)."""
    image: str | None = None
    """The container image a docker or podman sandbox runs the harness in (it has the harness)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables the harness gets beside tackroom's own (an evaluation task's ``[environment].env``):
    values given here, never read from this machine; where a name is also tackroom's (its home, its
    model endpoint, its key), tackroom's value wins."""

    def __post_init__(self) -> None:
        _check_text(self.prompt, "prompt", optional=False)
        for name in ("adapter", "version", "transport", "api_key_env", "image"):
            _check_text(getattr(self, name), name)
        for name in ("capture", "credentials"):
            if not isinstance(getattr(self, name), bool):
                raise RunSpecError(f"{name} must be true or false, got {getattr(self, name)!r}")
        if self.auth is not None and self.auth not in get_args(AuthMode):
            raise RunSpecError(f"auth must be 'api-key' or 'oauth', got {self.auth!r}")
        if self.home not in get_args(HomeMode):
            raise RunSpecError(f"home must be 'isolated' or 'real', got {self.home!r}")
        if self.profile not in get_args(ProfileRef):
            raise RunSpecError(f"profile must be 'default', 'none' or 'given', got {self.profile!r}")
        _check_sandbox(self.sandbox, self.network, self.home)
        if self.mock is not None and not _is_script(self.mock):
            raise RunSpecError(f"mock must be a mock Script, got {type(self.mock).__name__}")
        if not isinstance(self.options, Mapping):
            raise RunSpecError(f"options must be a table of option values, got {self.options!r}")
        object.__setattr__(self, "options", _coerced(self.options))
        object.__setattr__(self, "env", _checked_env(self.env))
        object.__setattr__(self, "workdir", checked_workdir(self.workdir))
        check_run_values(
            self.timeout_s,
            self.mock is not None,
            self.base_url,
            self.credentials,
            self.api_key_env,
            self.gateway,
            self.capture,
            self.auth,
        )
        object.__setattr__(self, "timeout_s", float(self.timeout_s))

    def __hash__(self) -> int:
        return hash(self.hash)

    @cached_property
    def hash(self) -> str:
        """SHA-256 of the canonical JSON form: the same spec has the same hash in any process."""
        canonical = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return sha256(canonical.encode("utf-8", "surrogateescape")).hexdigest()

    def to_json(self) -> dict[str, Any]:
        """The spec as JSON data, every field present; :meth:`from_json` reads it back equal."""
        data: dict[str, Any] = {"spec": SPEC_FORMAT}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "options":
                value = {k: list(v) if isinstance(v, tuple) else v for k, v in sorted(value.items())}
            elif f.name == "workdir":
                value = str(value)
            elif f.name == "mock" and value is not None:
                from tackroom.mock.script import script_data

                value = script_data(value)
            data[f.name] = value
        return data

    @classmethod
    def from_json(cls, data: Any) -> RunSpec:
        """The spec ``data`` describes; an unknown or missing field, or a bad value, is a RunSpecError."""
        if not isinstance(data, Mapping):
            raise RunSpecError(f"a run spec is a JSON object, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(str(k) for k in data if k not in known and k != "spec")
        if unknown:
            raise RunSpecError(
                f"unknown field(s) in a run spec: {', '.join(unknown)} (fields: {', '.join(sorted(known))})"
            )
        if data.get("spec") != SPEC_FORMAT:
            raise RunSpecError(
                f"run spec format {data.get('spec')!r} is not {SPEC_FORMAT}, the one this tackroom reads"
            )
        if "prompt" not in data:
            raise RunSpecError("a run spec needs its prompt")
        values = {k: v for k, v in data.items() if k != "spec"}
        if values.get("mock") is not None:
            from tackroom.mock.script import parse_script

            values["mock"] = parse_script(values["mock"], "run spec mock")
        if "workdir" in values:
            if not isinstance(values["workdir"], str):
                raise RunSpecError(f"workdir must be a path, got {values['workdir']!r}")
            values["workdir"] = Path(values["workdir"])
        return cls(**values)


def _check_text(value: Any, name: str, *, optional: bool = True) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise RunSpecError(f"{name} must be a string, got {value!r}")


def _check_sandbox(name: Any, network: Any, home: str) -> None:
    if not isinstance(name, str) or name not in sandbox_names():
        raise RunSpecError(f"no sandbox {name!r}; sandboxes: {', '.join(sandbox_names())}")
    if network not in get_args(Network):
        raise RunSpecError(f"network must be 'host' or 'none', got {network!r}")
    if name != "none" and home != "isolated":
        raise RunSpecError(
            f"a {name} sandbox hides the real home: run with an isolated home (the default), "
            "or without a sandbox"
        )


def _checked_env(env: Any) -> dict[str, str]:
    if not isinstance(env, Mapping):
        raise RunSpecError(f"env must be a table of variable names and values, got {env!r}")
    checked = {}
    for name, value in sorted(env.items()):
        if not isinstance(name, str) or not name or "=" in name or "\0" in name:
            raise RunSpecError(f"env: {name!r} is not a variable name")
        if not isinstance(value, str) or "\0" in value:
            raise RunSpecError(f"env: {name} must be a string without NUL, got {value!r}")
        checked[name] = value
    return checked


def _is_script(value: Any) -> bool:
    from tackroom.mock import Script

    return isinstance(value, Script)


def _coerced(options: Mapping[str, Any]) -> dict[str, Any]:
    coerced = {}
    for name, value in sorted(options.items()):
        if not isinstance(name, str):
            raise RunSpecError(f"option names are strings, got {name!r}")
        value = coerce_option(name, value)
        coerced[name] = tuple(value) if isinstance(value, list) else value
    return coerced


def checked_workdir(workdir: Path | str | None) -> Path:
    """``workdir`` (default: the current directory) resolved; one that is no directory is refused."""
    if workdir is not None and not isinstance(workdir, str | os.PathLike):
        raise RunSpecError(f"workdir must be a path, got {workdir!r}")
    try:
        path = Path(workdir or Path.cwd()).resolve()
        is_dir = path.is_dir()
    except (OSError, ValueError) as exc:  # a NUL in the name, a loop of links
        raise RunSpecError(f"working directory {str(workdir)!r} cannot be used: {exc}") from exc
    if not is_dir:
        raise RunSpecError(f"working directory {str(path)!r} is not a directory: create it or pass another")
    return path


def check_run_values(
    timeout_s: float,
    mock: bool,
    base_url: str | None,
    credentials: bool,
    api_key_env: str | None,
    gateway: str | None = None,
    capture: bool = False,
    auth: str | None = None,
) -> None:
    """Refuse values that would make a run wait forever, end at once, go nowhere, or leak a credential."""
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float) or not 0 < timeout_s < math.inf:
        raise RunSpecError(f"timeout must be a positive, finite number of seconds, got {timeout_s!r}")
    if mock and base_url is not None:
        raise RunSpecError("choose one model endpoint: a mock script, mock text, or a base URL")
    if mock and credentials:
        raise RunSpecError(
            "a run against the mock gets no real credential: drop --credentials (credentials=True), or point "
            "the harness at a real endpoint with --base-url"
        )
    if api_key_env is not None and base_url is None and gateway is None:
        raise RunSpecError("--api-key-env names the key for --base-url or --gateway; give the endpoint too")
    if auth is not None and not (mock or base_url or gateway or capture):
        raise RunSpecError(
            "--auth says how the harness signs in to --base-url, --gateway or --capture's gateway; "
            "give the endpoint too (without one the harness signs in as it does on its own)"
        )
    if auth == "oauth" and mock:
        raise RunSpecError(
            "--auth oauth: a run against the mock gets no real credential; serve the mock on its own "
            "(`tackroom mock serve`) and point the harness at it with --base-url"
        )
    if auth == "oauth" and api_key_env is not None:
        raise RunSpecError("--api-key-env names a key, and --auth oauth sends none: choose one")
    if base_url is not None:
        check_base_url(base_url)
    if gateway is not None:
        check_base_url(gateway)
        if capture:
            raise RunSpecError(
                "--gateway sends the run through a running gateway; --capture starts one: choose one"
            )
        if mock or base_url is not None:
            raise RunSpecError(
                "a running gateway forwards to its own upstream: drop --mock/--base-url, "
                "or use --capture to start a gateway in front of them"
            )


def check_base_url(url: str) -> str:
    """``url`` if a harness can be pointed at it (``http(s)://host[:port][/path]``), else a RunSpecError."""
    if not isinstance(url, str) or not _http_url(url):
        raise RunSpecError(f"base URL {url!r} is not an http(s)://host[:port][/path] URL")
    return url


def _http_url(url: str) -> bool:
    if any(c.isspace() or ord(c) < 32 for c in url):
        return False
    try:
        parts = urlsplit(url)
        port = parts.port  # raises ValueError when not a number in 0-65535
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and port != 0
