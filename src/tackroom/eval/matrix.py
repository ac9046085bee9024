"""A matrix file: which tasks, harnesses, models and repeats an evaluation runs, and how.

Strict like the adapter tables: an unknown key or a bad value is a problem named at file:line, all
of them at once. Paths are relative to the matrix file. ::

    [matrix]
    tasks = ["tasks/*"]                 # task directories (globs)
    harnesses = ["claude-code", "codex", "oracle"]
    models = ["claude-sonnet-4-5"]      # optional: the harness's default
    repeats = 3
    sandbox = "bwrap"
    jobs = 4
    agent_timeout = 300                 # seconds; default: each task's own
    verifier_timeout = 120
    mock = "mock/default.toml"          # the endpoint: mock, mock_text, base_url or gateway
                                        # (none: the provider's own API)
    capture = false                     # each run through a gateway of its own (the default): the
                                        # calls captured, usage known a third way
    profile = ["profiles/base"]         # profile directories rendered into each harness's home

    [model.gpt-5]
    gateway = "http://gw.internal:8300" # a running `tackroom gateway`: each cell under its trace id
    api_key_env = "GATEWAY_KEY"         # the key for base_url or gateway
    auth = "api-key"                    # or "oauth": a subscription sign-in (default: a key if set)

    [options]                           # option values for every cell
    max_turns = 20

    [harness.codex]                     # for one harness
    options = { reasoning_effort = "low" }
    jobs = 1                            # at most one codex cell at once (the local pool)

    [task.fix-the-test]                 # for one task (by its directory's name)
    mock = "mock/fix-the-test.toml"

    [[cell]]                            # for the cells that match every selector given
    task = "fix-the-test"
    harness = "codex"
    mock = "mock/fix-the-test-codex.toml"

A cell's settings are the top's, then its model's, its harness's, its task's, then each matching
``[[cell]]`` in file order: the most specific wins; ``options`` tables merge key by key; an endpoint
(``mock``, ``mock_text``, ``base_url``, ``gateway``) replaces a less specific one, and its
``api_key_env`` with it unless it names its own.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tackroom._format import Key, Table
from tackroom.adapters.tomlsource import KeyPath, TomlSource, load_toml
from tackroom.errors import MatrixError, Problem
from tackroom.eval.cell import ORACLE, Cell
from tackroom.eval.tasks import Task, check_task

SETTING_KEYS = (
    Key("mock", "str", "A mock model script (TOML, relative to the matrix file): the endpoint is "
        "tackroom's mock, answering as the script says."),
    Key("mock_text", "str", "The endpoint is the mock, answering every turn with this text."),
    Key("base_url", "str", "The endpoint is this model server (an OpenAI- or Anthropic-style URL)."),
    Key("gateway", "str", "The endpoint is a running `tackroom gateway`: each cell's calls are stored "
        "under its trace id."),
    Key("api_key_env", "str", "The environment variable holding the key for `base_url` or `gateway`."),
    Key("auth", "str", "`api-key` or `oauth` (a subscription sign-in); default: a key if one is set."),
    Key("options", "table", "Option values (`max_turns`, `reasoning_effort`, ...), merged key by key."),
    Key("profile", "list", "Profile directories (or one), layered in order and rendered into each "
        "harness's home; `[]`: none."),
    Key("sandbox", "str", "`bwrap` (default), `docker` or `podman`."),
    Key("agent_timeout", "seconds", "How long the harness may work (default: each task's own)."),
    Key("verifier_timeout", "seconds", "How long `tests/test.sh` may run (default: each task's own)."),
    Key("capture", "bool", "Each cell through a gateway of its own (the default): its calls captured, "
        "its usage known a third way."),
)  # fmt: skip
SETTINGS = tuple(key.name for key in SETTING_KEYS)
"""What may be set at the top, per model, per harness, per task and per cell."""
_ENDPOINT_NOTE = "An endpoint (`mock`, `mock_text`, `base_url`, `gateway`): none is the provider's own API."
FILE = Table(
    "the matrix file",
    "Its top-level tables; paths in it are relative to it. A cell's settings are the top's, then its "
    "model's, its harness's, its task's, then each matching `[[cell]]` in file order: the most "
    "specific wins; `options` tables merge key by key; an endpoint replaces a less specific one, and "
    "its `api_key_env` with it unless it names its own.",
    (
        Key("matrix", "table", "`[matrix]`: the axes and the settings of every cell.", required=True),
        Key("options", "table", "`[options]`: option values for every cell."),
        Key("model", "table", "`[model.<name>]`: settings for one model's cells."),
        Key("harness", "table", "`[harness.<name>]`: settings for one harness's cells."),
        Key("task", "table", "`[task.<name>]`: settings for one task's cells (by its directory's name)."),
        Key("cell", "tables", "`[[cell]]`: settings for the cells matching every selector given."),
    ),
)
MATRIX = Table(
    "[matrix]",
    "Which tasks, harnesses, models and repeats, and the settings of every cell. " + _ENDPOINT_NOTE,
    (
        Key("tasks", "list", "Task directories (globs allowed), in Harbor's format.", required=True),
        Key("harnesses", "list", "Adapter names, and `oracle` (the task's own solution).", required=True),
        Key("models", "list", "Models to run each harness with (each needs a `model` option); unset: "
            "the harness's default."),
        Key("repeats", "int", "How many times each cell runs (1 to 1000; default 1)."),
        Key("jobs", "int", "Cells at once (at most 256; default: the executor's)."),
        Key("allow_host_env", "bool", "Let a task's `${VAR}` take this machine's value (a task is "
            "someone else's code: off by default)."),
        *SETTING_KEYS,
    ),
)  # fmt: skip
MODEL = Table("[model.<name>]", "Settings for the cells of one model in `models`.", SETTING_KEYS)
HARNESS = Table(
    "[harness.<name>]",
    "Settings for the cells of one harness in `harnesses`.",
    (*SETTING_KEYS, Key("jobs", "int", "At most this many of its cells at once on the local pool.")),
)
TASK = Table("[task.<name>]", "Settings for the cells of one task, by its directory's name.", SETTING_KEYS)
CELL = Table(
    "[[cell]]",
    "Settings for the cells that match every selector given (at least one).",
    (
        Key("task", "str", "A task's directory name."),
        Key("harness", "str", "A harness's name."),
        Key("model", "str", "A model's name."),
        *SETTING_KEYS,
    ),
)
OPTIONS = Table(
    "[options]",
    "Option values for every cell (also `options = {...}` in any settings table).",
    (),
    free="`name = value`: an option of the adapters (`tackroom adapters show NAME` lists them).",
)
TABLES = (FILE, MATRIX, MODEL, HARNESS, TASK, CELL, OPTIONS)
"""Every table of a matrix file, in the order the reference page shows them."""
KINDS = {
    "str": "string", "int": "integer", "seconds": "number of seconds", "table": "table", "list": "list",
    "bool": "`true` \\| `false`", "tables": "array of tables",
}  # fmt: skip
"""How each kind of value reads on the reference page."""
_SELECTORS = ("task", "harness", "model")
_SANDBOXES = ("bwrap", "docker", "podman")
_ENDPOINTS = ("mock", "mock_text", "base_url", "gateway")


@dataclass(frozen=True)
class Matrix:
    """A matrix file read and checked: its cells, and how many at once.

    >>> import pathlib, tackroom
    >>> task = pathlib.Path("tasks/hello")
    >>> (task / "tests").mkdir(parents=True)
    >>> _ = (task / "tests" / "test.sh").write_text("grep -q hello /app/hello.txt\\n")
    >>> _ = (task / "task.toml").write_text('[task]\\nname = "me/hello"\\n')
    >>> _ = (task / "instruction.md").write_text("Write hello.txt saying hello.\\n")
    >>> top = '[matrix]\\ntasks = ["tasks/*"]\\nharnesses = ["codex", "oracle"]\\njobs = 4\\n'
    >>> _ = pathlib.Path("matrix.toml").write_text(top + "[harness.codex]\\njobs = 1\\n")
    >>> matrix = tackroom.load_matrix(pathlib.Path("matrix.toml"))
    >>> len(matrix.cells), [task.name for task in matrix.tasks], matrix.jobs, dict(matrix.per_harness)
    (2, ['me/hello'], 4, {'codex': 1})
    """

    path: Path
    cells: tuple[Cell, ...]
    jobs: int | None = None
    tasks: tuple[Task, ...] = field(default=())
    per_harness: Mapping[str, int] = field(default_factory=dict)
    """At most this many cells of a harness at once on the local pool (``[harness.X] jobs``)."""


def load_matrix(path: Path, *, adapters: Any = None) -> Matrix:
    """The matrix at ``path`` with its tasks read; a :class:`MatrixError` with every problem found.

    A task directory in Harbor's format, and a matrix of two harnesses, twice each:

    >>> import pathlib, tackroom
    >>> task = pathlib.Path("tasks/hello")
    >>> (task / "tests").mkdir(parents=True)
    >>> _ = (task / "tests" / "test.sh").write_text("grep -q hello /app/hello.txt\\n")
    >>> _ = (task / "task.toml").write_text('[task]\\nname = "me/hello"\\n')
    >>> _ = (task / "instruction.md").write_text("Write hello.txt saying hello.\\n")
    >>> text = '[matrix]\\ntasks = ["tasks/*"]\\nharnesses = ["codex", "oracle"]\\nrepeats = 2\\n'
    >>> _ = pathlib.Path("matrix.toml").write_text(text)
    >>> matrix = tackroom.load_matrix(pathlib.Path("matrix.toml"))
    >>> [(cell.task.name, cell.harness, cell.repeat) for cell in matrix.cells]
    [('me/hello', 'codex', 0), ('me/hello', 'codex', 1), ('me/hello', 'oracle', 0), ('me/hello', 'oracle', 1)]
    """
    reader = _Reader(path, adapters)
    matrix = reader.read()
    if reader.problems or matrix is None:
        raise MatrixError(reader.problems)
    return matrix


class _Reader:
    def __init__(self, path: Path, adapters: Any) -> None:
        self.path = path
        self.shown = str(path)
        self.base = path.resolve().parent
        self.adapters = adapters
        self.problems: list[Problem] = []
        self.source: TomlSource | None = None
        self.per_harness: dict[str, int] = {}
        self.profiles: dict[tuple[Path, ...], Any] = {}

    def read(self) -> Matrix | None:
        self.source = load_toml(self.path, self.shown)
        data = self.source.data
        self._known(data, (), FILE)
        top = self._table(data, ("matrix",))
        if "matrix" not in data:
            self._problem((), "a matrix file needs its [matrix] table (tasks and harnesses)")
            return None
        self._known(top, ("matrix",), MATRIX)
        tasks = self._tasks(top)
        harnesses = self._names(top, ("matrix", "harnesses"), required=True)
        self._check_harnesses(harnesses)
        models: list[str | None] = [*self._names(top, ("matrix", "models"), required=False)] or [None]
        if models != [None]:
            self._takes_a_model(harnesses)
        repeats = self._count(top, ("matrix", "repeats"), 1, 1000) or 1
        jobs = self._count(top, ("matrix", "jobs"), None, 256)
        allow_host_env = self._flag(top, ("matrix", "allow_host_env"))
        base = self._settings(top, ("matrix",))
        if "options" in data:
            base["options"] = {**base.get("options", {}), **self._options(data, ("options",))}
        per = {axis: self._axis(data, axis) for axis in ("model", "harness", "task")}
        rules = self._cells(data)
        names = {task.path.name for task in tasks}
        for axis, known in (("harness", set(harnesses)), ("task", names), ("model", set(models) - {None})):
            for name in per[axis]:
                if name not in known:
                    self._problem((axis, name), f"is not in the matrix's {axis} list")
        if self.problems:
            return None
        cells: list[Cell] = []
        for task in tasks:
            for harness in harnesses:
                for model in models:
                    chosen = _merge(base, per["model"].get(model or "", {}), per["harness"].get(harness, {}))
                    chosen = _merge(chosen, per["task"].get(task.path.name, {}))
                    for selectors, settings in rules:
                        if _matches(selectors, task.path.name, harness, model):
                            chosen = _merge(chosen, settings)
                    if harness != ORACLE and (conflict := _conflict(chosen)):
                        where = f"task {task.path.name!r}, harness {harness!r}" + (
                            f", model {model!r}" if model else ""
                        )
                        self._problem(("matrix",), f"the cells of {where}: {conflict}")
                        continue
                    made = (_cell(task, harness, model, n, chosen, allow_host_env) for n in range(repeats))
                    cells.extend(made)
        if self.problems:
            return None
        return Matrix(self.path, tuple(cells), jobs, tuple(tasks), self.per_harness)

    # -- the axes --------------------------------------------------------------------------------

    def _tasks(self, top: dict[str, Any]) -> list[Task]:
        patterns = self._names(top, ("matrix", "tasks"), required=True)
        found: list[Task] = []
        for pattern in patterns:
            glob = any(c in pattern for c in "*?[")
            matched = sorted(self.base.glob(pattern)) if glob else [self.base / pattern]
            matched = [m for m in matched if m.is_dir()] if len(matched) != 1 else matched
            if not matched:
                self._problem(("matrix", "tasks"), f"{pattern!r} matches no task directory")
            for directory in matched:
                task, problems, _ = check_task(directory)
                self.problems.extend(problems)
                if task is not None:
                    found.append(task)
        names = [task.path.name for task in found]
        for name in sorted({n for n in names if names.count(n) > 1}):
            self._problem(("matrix", "tasks"), f"two task directories are named {name!r}: rename one")
        return found

    def _check_harnesses(self, harnesses: list[str]) -> None:
        if self.adapters is None:
            from tackroom.adapters.resolve import load_adapters

            self.adapters = load_adapters()
        for name in harnesses:
            if name != ORACLE and name not in self.adapters:
                known = ", ".join([ORACLE, *sorted(self.adapters)])
                self._problem(("matrix", "harnesses"), f"no adapter {name!r}; harnesses: {known}")

    def _takes_a_model(self, harnesses: list[str]) -> None:
        """Every harness of a matrix with models must have a ``model`` option (fail closed: a harness
        that cannot be told its model would run its own and be reported as another's)."""
        for name in harnesses:
            if name == ORACLE or self.adapters is None or name not in self.adapters:
                continue
            if "model" not in (self.adapters[name].effective.get("options") or {}):
                self._problem(
                    ("matrix", "models"),
                    f"adapter {name!r} has no `model` option: drop it from the harnesses, or drop models",
                )

    def _axis(self, data: dict[str, Any], axis: str) -> dict[str, dict[str, Any]]:
        tables = self._table(data, (axis,))
        found = {}
        for name, table in tables.items():
            key = (axis, name)
            if not isinstance(table, dict):
                self._problem(key, f"must be a table of settings ({', '.join(SETTINGS)})")
                continue
            self._known(table, key, {"model": MODEL, "harness": HARNESS, "task": TASK}[axis])
            found[name] = self._settings(table, key)
            if axis == "harness":
                cap = self._count(table, (*key, "jobs"), None, 256)
                if cap is not None:
                    self.per_harness[name] = cap
        return found

    def _cells(self, data: dict[str, Any]) -> list[tuple[dict[str, str], dict[str, Any]]]:
        raw = data.get("cell")
        if raw is None:
            return []
        if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
            self._problem(("cell",), "must be an array of tables ([[cell]])")
            return []
        rules = []
        for index, item in enumerate(raw):
            key = ("cell", str(index))
            self._known(item, key, CELL)
            selectors = {
                name: value for name in _SELECTORS if (value := self._text(item, (*key, name))) is not None
            }
            if not selectors:
                self._problem(key, "a [[cell]] selects by task, harness or model: give at least one")
            rules.append((selectors, self._settings(item, key)))
        return rules

    # -- settings --------------------------------------------------------------------------------

    def _settings(self, table: dict[str, Any], key: KeyPath) -> dict[str, Any]:
        found: dict[str, Any] = {}
        endpoints = [name for name in _ENDPOINTS if name in table]
        if len(endpoints) > 1:
            self._problem((*key, endpoints[1]), f"choose one endpoint: {' or '.join(endpoints)}")
        if "mock" in table:
            mock = self._text(table, (*key, "mock"))
            if mock is not None:
                found["mock"] = self._script(self.base / mock, (*key, "mock"))
        if "mock_text" in table:
            text = self._text(table, (*key, "mock_text"))
            if text is not None:
                from tackroom.mock import Script, Turn

                found["mock"] = Script([Turn.reply(text)])
        for endpoint in ("base_url", "gateway"):
            url = self._url(table, (*key, endpoint))
            if url is not None:
                found[endpoint] = url
        name = self._text(table, (*key, "api_key_env"))
        if name is not None:
            if not name.isidentifier() or not name.isascii():
                self._problem((*key, "api_key_env"), f"must name an environment variable, got {name!r}")
            else:
                found["api_key_env"] = name
        auth = self._text(table, (*key, "auth"))
        if auth is not None:
            if auth not in ("api-key", "oauth"):
                self._problem((*key, "auth"), f"must be 'api-key' or 'oauth', got {auth!r}")
            else:
                found["auth"] = auth
        if "options" in table:
            found["options"] = self._options(table, (*key, "options"))
        if "profile" in table:
            found["profile"] = self._profile(table, (*key, "profile"))
        sandbox = self._text(table, (*key, "sandbox"))
        if sandbox is not None:
            if sandbox not in _SANDBOXES:
                self._problem((*key, "sandbox"), f"must be one of {', '.join(_SANDBOXES)}, got {sandbox!r}")
            else:
                found["sandbox"] = sandbox
        if "capture" in table:
            found["capture"] = self._flag(table, (*key, "capture"))
        for name in ("agent_timeout", "verifier_timeout"):
            value = table.get(name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
                self._problem((*key, name), f"must be a positive number of seconds, got {value!r}")
            else:
                found[name] = float(value)
        return found

    def _options(self, table: dict[str, Any], key: KeyPath) -> dict[str, Any]:
        from tackroom.errors import OptionError
        from tackroom.options import coerce_option

        options = self._table(table, key)
        checked = {}
        for name, value in options.items():
            try:
                checked[name] = coerce_option(name, value)
            except OptionError as exc:
                self._problem((*key, name), str(exc))
        return checked

    def _url(self, table: dict[str, Any], key: KeyPath) -> str | None:
        """The URL at ``key`` if a harness can be pointed at it (else a problem, and None)."""
        url = self._text(table, key)
        if url is None:
            return None
        from tackroom.errors import RunSpecError
        from tackroom.run.spec import check_base_url

        try:
            return check_base_url(url)
        except RunSpecError as exc:
            said = str(exc) if key[-1] == "base_url" else str(exc).replace("base URL", "gateway URL")
            self._problem(key, said)
            return None

    def _profile(self, table: dict[str, Any], key: KeyPath) -> Any:
        """The profile the directories name (a path or a list of them, layered in order; ``[]``: none)."""
        value = table.get(key[-1])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            self._problem(key, f"must be a profile directory or a list of them, got {value!r}")
            return None
        dirs = tuple(self.base / v for v in value)
        if not dirs:
            return None
        if dirs not in self.profiles:
            self.profiles[dirs] = None
            missing = [d for d in dirs if not d.is_dir()]
            if missing:
                self._problem(key, f"no profile directory {missing[0]}")
                return None
            from tackroom.adapters.resolve import resolve_builtins
            from tackroom.errors import TackroomError
            from tackroom.profile.load import load_profile

            try:
                self.profiles[dirs] = load_profile(list(dirs), harnesses=resolve_builtins())
            except TackroomError as exc:
                self._problem(key, f"profile {', '.join(map(str, dirs))}: {exc}")
        return self.profiles[dirs]

    def _script(self, path: Path, key: KeyPath) -> Any:
        from tackroom.errors import MockScriptError
        from tackroom.mock import load_script

        try:
            return load_script(path)
        except MockScriptError as exc:
            self._problem(key, f"mock script {path}: {exc}")
            return None

    # -- values ----------------------------------------------------------------------------------

    def _table(self, data: Mapping[str, Any], key: KeyPath) -> dict[str, Any]:
        value = data.get(key[-1]) if key else data
        if value is None:
            return {}
        if not isinstance(value, dict):
            self._problem(key, "must be a table")
            return {}
        return value

    def _names(self, table: dict[str, Any], key: KeyPath, *, required: bool) -> list[str]:
        value = table.get(key[-1])
        if value is None:
            if required:
                self._problem(key, "is required: a list of names")
            return []
        if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
            self._problem(key, f"must be a non-empty list of names, got {value!r}")
            return []
        for name in sorted({v for v in value if value.count(v) > 1}):
            self._problem(key, f"{name!r} is listed twice")
        return list(dict.fromkeys(value))

    def _count(self, table: dict[str, Any], key: KeyPath, default: int | None, most: int) -> int | None:
        value = table.get(key[-1])
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
            self._problem(key, f"must be a whole number from 1 to {most}, got {value!r}")
            return default
        return value

    def _flag(self, table: dict[str, Any], key: KeyPath) -> bool:
        value = table.get(key[-1], False)
        if not isinstance(value, bool):
            self._problem(key, f"must be true or false, got {value!r}")
            return False
        return value

    def _text(self, table: dict[str, Any], key: KeyPath) -> str | None:
        value = table.get(key[-1])
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            self._problem(key, f"must be a non-empty string, got {value!r}")
            return None
        return value

    def _known(self, table: Mapping[str, Any], key: KeyPath, known: Table) -> None:
        names = known.names()
        for name in table:
            if name not in names:
                self._problem((*key, name), f"unknown key; known here: {', '.join(sorted(names))}")

    def _problem(self, key: KeyPath, message: str) -> None:
        line = self.source.line_of(key) if self.source is not None and key else None
        shown = ".".join(f"[{k}]" if k.isdigit() else k for k in key).replace(".[", "[")
        self.problems.append(Problem(self.shown, shown, message, line))


def _merge(*layers: Mapping[str, Any]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for layer in layers:
        for name, value in sorted(layer.items(), key=lambda item: item[0] == "api_key_env"):
            if name == "options":
                merged["options"] = {**merged.get("options", {}), **value}
            elif name in _ENDPOINTS:
                # A more specific endpoint replaces the other's, with its key unless it names its own.
                for endpoint in (*_ENDPOINTS, "api_key_env"):
                    merged.pop(endpoint, None)
                merged[name] = value
            else:
                merged[name] = value
    return merged


def _conflict(chosen: Mapping[str, Any]) -> str | None:
    """Why a cell's merged settings cannot make a run (None: they can)."""
    if chosen.get("gateway") and chosen.get("capture"):
        return "gateway sends the runs through a running gateway and capture starts one: choose one"
    if chosen.get("api_key_env") and not (chosen.get("base_url") or chosen.get("gateway")):
        return "api_key_env names the key for base_url or gateway, and neither is set"
    if chosen.get("auth") == "oauth" and chosen.get("mock"):
        return "auth 'oauth': a run against the mock gets no real credential; give base_url or gateway"
    if chosen.get("auth") == "oauth" and chosen.get("api_key_env"):
        return "api_key_env names a key, and auth 'oauth' sends none: choose one"
    if chosen.get("auth") and not (
        chosen.get("mock") or chosen.get("base_url") or chosen.get("gateway") or chosen.get("capture", True)
    ):
        return "auth says how the harness signs in to an endpoint, and the cell has none (nor capture)"
    return None


def _matches(selectors: Mapping[str, str], task: str, harness: str, model: str | None) -> bool:
    values = {"task": task, "harness": harness, "model": model}
    return all(values[name] == wanted for name, wanted in selectors.items())


def _cell(
    task: Task, harness: str, model: str | None, repeat: int, chosen: dict[str, Any], allow: bool
) -> Cell:
    return Cell(
        task=task,
        harness=harness,
        model=model,
        repeat=repeat,
        mock=chosen.get("mock") if harness != ORACLE else None,
        base_url=chosen.get("base_url") if harness != ORACLE else None,
        gateway=chosen.get("gateway") if harness != ORACLE else None,
        api_key_env=chosen.get("api_key_env") if harness != ORACLE else None,
        auth=chosen.get("auth") if harness != ORACLE else None,
        options=chosen.get("options", {}) if harness != ORACLE else {},
        profile=chosen.get("profile") if harness != ORACLE else None,
        sandbox=chosen.get("sandbox", "bwrap"),
        agent_timeout_s=chosen.get("agent_timeout"),
        verifier_timeout_s=chosen.get("verifier_timeout"),
        allow_host_env=allow,
        capture=bool(chosen.get("capture", True)) and harness != ORACLE and not chosen.get("gateway"),
    )
