"""Commands people and scripts run over and over, taken without the CLI framework.

Importing Typer costs more than these commands' own work (about 40 ms of a 50 ms listing; with
Rich, about 150 ms of a usage report). This takes exactly their common forms: ``tackroom usage
GROUP ... --json`` (parsing exactly the options :mod:`tackroom.cli.usage` documents, the
reference), ``tackroom adapters list --json``, ``tackroom run NAME PROMPT`` with any option of
:mod:`tackroom.cli.run` but ``--profile`` (checked as it checks them), and ``tackroom profile
render NAME... --into DIR --json``; tests run each both ways on the same arguments and hold the
options to the full command's. Anything else (a table, ``--help``,
an unknown option, a bad value) is left to the full application, which handles it, errors and all.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: this path answers in tens of milliseconds
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

GROUPS = ("daily", "monthly", "session", "model")
_VALUED = {
    "--harness": "harness",
    "-H": "harness",
    "--since": "since",
    "-s": "since",
    "--until": "until",
    "-u": "until",
    "--timezone": "timezone",
    "-z": "timezone",
    "--jobs": "jobs",
    "-j": "jobs",
}
_FLAGS = {"--no-cost": "no_cost", "--json": "json"}


def _day(text: str) -> str | None:
    """``YYYY-MM-DD`` from ``YYYY-MM-DD`` or ``YYYYMMDD`` (as the full CLI takes them), else None."""
    digits = text.replace("-", "", 2) if len(text) == 10 and text[4] == text[7] == "-" else text
    if len(digits) != 8 or not digits.isascii() or not digits.isdigit():
        return None
    day = f"{digits[:4]}-{digits[4:6]}-{digits[6:]}"
    from datetime import date  # here: the listing and the render never parse a day

    try:
        date.fromisoformat(day)
    except ValueError:  # not a day of the calendar: the full CLI says so
        return None
    return day


def parse(args: list[str]) -> dict[str, str | bool] | None:
    """The options of ``usage GROUP ...``, or None for anything this path leaves to the full CLI."""
    if not args or args[0] not in GROUPS:
        return None
    found: dict[str, str | bool] = {"group": args[0]}
    rest = args[1:]
    while rest:
        arg = rest.pop(0)
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in _FLAGS and not eq:
            if _FLAGS[name] in found:
                return None
            found[_FLAGS[name]] = True
        elif name in _VALUED:
            if not eq:
                if not rest:
                    return None
                value = rest.pop(0)
            key = _VALUED[name]
            if key in found or not value or value.startswith("-"):
                return None
            found[key] = value
        else:
            return None
    for key in ("since", "until"):
        if key in found:
            day = _day(str(found[key]).strip())
            if day is None:
                return None
            found[key] = day
    jobs = found.get("jobs")
    if jobs is not None and not (str(jobs).isdigit() and int(str(jobs)) >= 1):
        return None
    return found if found.get("json") else None


def usage_quickly(args: list[str]) -> bool:
    """Answer ``usage ...`` here if it is a well-formed JSON request; False to hand it on."""
    options = parse(args)
    if options is None:
        return False
    import os
    import sys

    from tackroom.trace.shortcut import answer, report_key

    def text(key: str) -> str | None:
        value = options.get(key)
        return value if isinstance(value, str) else None

    group, harness, since, until, zone = (text(k) for k in ("group", "harness", "since", "until", "timezone"))
    cost = not options.get("no_cost")
    data, config = dirs(os.environ)
    stored = answer(
        os.path.join(data, "state.db"),
        report_key(group, harness, since, until, zone, cost),
        os.environ,
        os.getcwd(),
        os.path.join(data, "runs"),
        config,
    )
    if stored is None:
        import gc

        # A process that reports and ends: the cyclic collector would only walk the imported modules'
        # objects again and again (15 ms of a 500 MB first pass), and nothing here makes cycles to free.
        gc.disable()
        from tackroom.trace.api import usage_text

        jobs = text("jobs")
        stored = usage_text(
            group,  # type: ignore[arg-type]
            harness=harness,
            since=since,
            until=until,
            timezone=zone,
            cost=cost,
            jobs=int(jobs) if jobs else None,
        )
    sys.stdout.write(stored + "\n")
    return True


def adapters_quickly(args: list[str]) -> bool:
    """Answer ``adapters list --json`` here; False to hand anything else on."""
    if args != ["list", "--json"]:
        return False
    from pathlib import Path

    from tackroom.adapters.catalog import catalog
    from tackroom.cli._output import print_json

    print_json(catalog(project=Path.cwd()))
    return True


#: ``tackroom run``'s options this path takes (:mod:`tackroom.cli.run` is the reference; a test
#: holds these to it): the parameter each sets, and whether it is a flag or may repeat.
_RUN_OPTIONS: dict[str, tuple[str, str]] = {
    "--model": ("model", "value"),
    "-m": ("model", "value"),
    "--option": ("option", "many"),
    "-o": ("option", "many"),
    "--mock": ("mock", "value"),
    "--mock-text": ("mock_text", "value"),
    "--base-url": ("base_url", "value"),
    "--api-key-env": ("api_key_env", "value"),
    "--auth": ("auth", "value"),
    "--gateway": ("gateway", "value"),
    "--capture": ("capture", "flag"),
    "--mock-log": ("mock_log", "value"),
    "--timeout": ("timeout", "value"),
    "--workdir": ("workdir", "value"),
    "--home": ("home", "value"),
    "--credentials": ("credentials", "flag"),
    "--no-profile": ("no_profile", "flag"),
    "--json": ("as_json", "flag"),
    "--events": ("events", "flag"),
    "--transport": ("transport", "value"),
    "--sandbox": ("sandbox", "value"),
    "--image": ("image", "value"),
    "--network": ("network", "value"),
}


def parse_run(args: list[str]) -> dict[str, Any] | None:
    """``run NAME PROMPT [OPTIONS]`` as :func:`tackroom.cli.run.run_command` would take it, checked as it
    checks it; None for anything this path leaves to the full command (help, one word or three, an
    option it does not take, a repeated option, a value it would refuse)."""
    words: list[str] = []
    found: dict[str, Any] = {"option": []}
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if not arg.startswith("-") or arg == "-":
            words.append(arg)
            continue
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name not in _RUN_OPTIONS:
            return None  # --help, --profile, "--", a short option run together with its value, ...
        key, kind = _RUN_OPTIONS[name]
        if kind == "flag":
            if eq or key in found:
                return None
            found[key] = True
            continue
        if not eq:
            if not rest:
                return None
            value = rest.pop(0)
        if not value or value.startswith("-") or (kind == "value" and key in found):
            return None
        if kind == "many":
            found[key].append(value)
        else:
            found[key] = value
    return _checked_run(words, found)


def _checked_run(words: list[str], found: dict[str, Any]) -> dict[str, Any] | None:
    import os

    from tackroom.cli import _params

    if len(words) != 2 or not words[1].strip():
        return None
    if found.get("home", "isolated") not in ("isolated", "real"):
        return None
    if found.get("network", "host") not in ("host", "none"):
        return None
    if found.get("auth", "api-key") not in ("api-key", "oauth"):
        return None
    if sum(k in found for k in ("mock", "mock_text", "base_url")) > 1:
        return None
    try:  # the option callbacks of the full command (Typer's error is left to it to say)
        if "timeout" in found:
            found["timeout"] = _params.seconds(float(found["timeout"]))
        for key in ("base_url", "gateway"):
            if key in found:
                found[key] = _params.base_url(found[key])
    except Exception:
        return None
    if "mock" in found and not (os.path.isfile(found["mock"]) and os.access(found["mock"], os.R_OK)):
        return None  # Click's Path(exists=True, dir_okay=False), readable
    if "workdir" in found and not (os.path.isdir(found["workdir"]) and os.access(found["workdir"], os.R_OK)):
        return None  # Click's Path(exists=True, file_okay=False), readable
    if "mock_log" in found and os.path.isdir(found["mock_log"]):
        return None  # Click's Path(dir_okay=False)
    found["name"], found["prompt"] = words
    return found


def run_quickly(args: list[str]) -> int | None:
    """Run ``run ...`` here if this path takes its arguments; the exit code, or None to hand it on."""
    found = parse_run(args)
    if found is None:
        return None
    from pathlib import Path

    from tackroom.cli._run import go
    from tackroom.options import parse_option_args

    options = parse_option_args(found["option"])
    if found.get("model"):
        options["model"] = found["model"]
    paths = {key: Path(found[key]) for key in ("mock", "mock_log") if key in found}
    network = found.get("network")
    return go(
        found["name"],
        found["prompt"],
        options=options,
        show="json" if found.get("as_json") else "events" if found.get("events") else "live",
        profile=None if found.get("no_profile") else "default",
        workdir=Path(found.get("workdir", "")),
        mock=paths.get("mock"),
        mock_text=found.get("mock_text"),
        base_url=found.get("base_url"),
        api_key_env=found.get("api_key_env"),
        auth=found.get("auth"),
        mock_log=paths.get("mock_log"),
        timeout_s=found.get("timeout", 600.0),
        home="real" if found.get("home") == "real" else "isolated",
        credentials=bool(found.get("credentials")),
        gateway=found.get("gateway"),
        capture=bool(found.get("capture")),
        transport=found.get("transport"),
        sandbox=found.get("sandbox"),
        network=None if network is None else "none" if network == "none" else "host",
        image=found.get("image"),
    )


def parse_render(args: list[str]) -> dict[str, Any] | None:
    """``profile render NAME... --into DIR --json [--profile DIR]... [--scope home|project]`` as
    :func:`tackroom.cli.profile.render` takes it; None for any other form (no name, --all, --check,
    --gitignore, a table, help, a repeated or unknown option, a value it would refuse)."""
    import os

    if args[:1] != ["render"]:
        return None
    found: dict[str, Any] = {"names": [], "profile": []}
    rest = args[1:]
    while rest:
        arg = rest.pop(0)
        if not arg.startswith("-"):
            found["names"].append(arg)
            continue
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name == "--json" and not eq and "json" not in found:
            found["json"] = True
            continue
        if name not in ("--into", "--profile", "--scope"):
            return None
        if not eq:
            if not rest:
                return None
            value = rest.pop(0)
        key = name[2:]
        if key == "profile":
            found["profile"].append(value)
        elif key in found or not value:
            return None
        else:
            found[key] = value
    if not found["names"] or not found.get("json") or "into" not in found:
        return None
    if found.get("scope", "home") not in ("home", "project"):
        return None
    if os.path.exists(found["into"]) and not os.path.isdir(found["into"]):
        return None  # Click's Path(file_okay=False): the full command says so
    return found


def render_quickly(args: list[str]) -> bool:
    """Render here if this path takes the arguments (:func:`parse_render`); False to hand them on."""
    found = parse_render(args)
    if found is None:
        return False
    import sys
    from pathlib import Path

    from tackroom.adapters.resolve import load_adapters
    from tackroom.cli._output import print_json, printable
    from tackroom.cli._render import load, report
    from tackroom.profile.render import plan_render, write_all

    cwd = Path.cwd()
    known = load_adapters(project=cwd)
    adapters = [known[name] for name in dict.fromkeys(found["names"])]
    root = cwd / found["into"]
    project = found.get("scope") == "project"
    loaded = load([Path(each) for each in found["profile"]])
    planned = [
        plan_render(loaded, adapter, root=root, scope="project" if project else "home")
        for adapter in adapters
    ]
    for note in (*(d for r in planned for d in r.drops), *loaded.withheld):
        print(printable(str(note)), file=sys.stderr)
    rendered = write_all(planned)
    for kept in (n for r in rendered for n in r.kept):
        print(printable(kept), file=sys.stderr)
    reports = [report(r) for r in rendered]
    print_json(reports if len(reports) > 1 else reports[0])
    return True


def dirs(env: Mapping[str, str]) -> tuple[str, str]:
    """:func:`tackroom._files.data_dir` and :func:`~tackroom._files.config_dir` as strings, without
    pathlib (it costs this path ~15 ms); a test holds the two equal."""
    import os

    def home(*parts: str) -> str:
        return os.path.join(os.path.expanduser(env.get("HOME", "~")), *parts)

    data = os.path.join(env.get("XDG_DATA_HOME") or home(".local", "share"), "tackroom")
    if env.get("TACKROOM_CONFIG_DIR"):
        return data, os.path.expanduser(env["TACKROOM_CONFIG_DIR"])
    return data, os.path.join(env.get("XDG_CONFIG_HOME") or home(".config"), "tackroom")
