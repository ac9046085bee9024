"""``tackroom usage GROUP ... --json`` without the CLI framework: a repeat report in tens of milliseconds.

Scripts and status lines ask for the same report over and over; most of its
cost would be importing Typer and Rich (about 150 ms), more than reading what
changed. This parses exactly the options ``tackroom usage`` documents
(:mod:`tackroom.cli.usage` is the reference, and a test runs both on the same
arguments) and answers only a well-formed ``--json`` request. Anything else
(a table, ``--help``, an unknown option, a bad value) returns False, and the
full application handles it, errors and all.
"""

from __future__ import annotations

import re

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
_DAY = re.compile(r"^(\d{4})-?(\d{2})-?(\d{2})$")


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
            match = _DAY.fullmatch(str(found[key]).strip())
            if match is None:
                return None
            found[key] = "-".join(match.groups())
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
    from pathlib import Path

    from tackroom._files import config_dir, data_dir
    from tackroom.trace.shortcut import answer, report_key

    def text(key: str) -> str | None:
        value = options.get(key)
        return value if isinstance(value, str) else None

    group, harness, since, until, zone = (text(k) for k in ("group", "harness", "since", "until", "timezone"))
    cost = not options.get("no_cost")
    data = data_dir(os.environ)
    stored = answer(
        data / "state.db",
        report_key(group, harness, since, until, zone, cost),
        os.environ,
        str(Path.cwd()),
        data / "runs",
        config_dir(os.environ),
    )
    if stored is None:
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
