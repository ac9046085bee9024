"""``tackroom eval``: check Harbor tasks, and run them across harnesses and models."""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from tackroom.cli._output import console, print_json

if TYPE_CHECKING:
    from tackroom.errors import Problem
    from tackroom.eval.cell import Cell, CellResult
    from tackroom.eval.evaluate import Progress
    from tackroom.eval.results import ResultStore

app = typer.Typer(
    help="Evaluate harnesses on Harbor tasks: check tasks, run them, report.", no_args_is_help=True
)
task_app = typer.Typer(help="Harbor task directories.", no_args_is_help=True)
app.add_typer(task_app, name="task")

DB_OPT = typer.Option(
    None,
    "--db",
    help="Where the results and the cells' captured calls are stored: a SQLite file, or "
    "postgresql://user@host/db (the one a shared gateway uses; default: the state database).",
)
JSON_OPT = typer.Option(False, "--json", help="Print JSON.")


@task_app.command("check")
def check(
    directories: list[Path] = typer.Argument(..., help="Task directories (each with its task.toml)."),
    as_json: bool = JSON_OPT,
) -> None:
    """Check tasks as Harbor 0.26 reads them: every problem at file:line, and what is kept but not used."""
    from tackroom.eval.tasks import check_task

    reports = []
    bad = 0
    for directory in directories:
        task, problems, notes = check_task(directory)
        bad += bool(problems)
        reports.append((directory, task, problems, notes))
    if as_json:
        print_json(
            [
                {
                    "path": str(directory),
                    "name": task.name if task is not None else None,
                    "ok": not problems,
                    "steps": [step.name for step in task.steps] if task is not None else [],
                    "digest": task.digest if task is not None else None,
                    "problems": [_problem(p) for p in problems],
                    "notes": [_problem(n) for n in notes],
                }
                for directory, task, problems, notes in reports
            ]
        )
    else:
        out, err = console(), console(stderr=True)
        for directory, task, problems, notes in reports:
            if task is not None:
                kind = f"{len(task.steps)} steps" if task.steps else "one step"
                out.print(f"ok {task.name} ({directory}): {kind}", markup=False)
            for problem in problems:
                err.print(f"error: {problem}", markup=False)
            for note in notes:
                err.print(f"note: {note}", markup=False)
    raise typer.Exit(1 if bad else 0)


def _problem(problem: Problem) -> dict[str, Any]:
    return {"file": problem.file, "line": problem.line, "key": problem.key, "message": problem.message}


@app.command("run")
def run(
    matrix: Path | None = typer.Argument(
        None, help="A matrix file (TOML: tasks, harnesses, models, repeats and their settings)."
    ),
    tasks: list[Path] = typer.Option([], "--task", help="A Harbor task directory (repeat for more)."),
    harnesses: list[str] = typer.Option(
        [], "--harness", help="An adapter name, or `oracle` (the task's own solution); repeat for more."
    ),
    models: list[str] = typer.Option(
        [], "--model", help="A model (repeat for more); default: the harness's."
    ),
    mock: Path | None = typer.Option(None, "--mock", help="Run against the keyless mock with this script."),
    mock_text: str | None = typer.Option(
        None, "--mock-text", help="Run against the keyless mock answering this text."
    ),
    base_url: str | None = typer.Option(
        None, "--base-url", help="Point the harnesses at this endpoint (the key from --api-key-env)."
    ),
    gateway: str | None = typer.Option(
        None, "--gateway", help="Send model calls through this running `tackroom gateway`, a trace per cell."
    ),
    api_key_env: str | None = typer.Option(
        None, "--api-key-env", help="The variable holding the key for --base-url or --gateway."
    ),
    auth: str | None = typer.Option(
        None,
        "--auth",
        help="How the harnesses sign in to the endpoint: api-key, or oauth (a subscription; as run --auth).",
    ),
    profile: list[Path] = typer.Option(
        [], "--profile", help="A profile directory rendered into each harness's home (repeat to layer)."
    ),
    repeats: int = typer.Option(1, "--repeats", min=1, max=1000, help="Runs of each cell."),
    sandbox: str = typer.Option("bwrap", "--sandbox", help="Where each cell runs: bwrap, docker or podman."),
    jobs: int | None = typer.Option(
        None, "--jobs", min=1, max=256, help="Cells at once on this machine (default: the cores)."
    ),
    executor: str = typer.Option("local", "--executor", help="Where cells run: local (a pool here) or ray."),
    ray_address: str | None = typer.Option(
        None, "--ray-address", help="The Ray cluster to run on (default: start one here)."
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        help="The evaluation's directory (default: a new one under $XDG_DATA_HOME/tackroom/evals).",
    ),
    resume: bool = typer.Option(
        False, "--resume", help="Run only the cells of --out without a stored result."
    ),
    retry_failed: bool = typer.Option(
        False, "--retry-failed", help="With --resume, also rerun failed cells."
    ),
    agent_timeout: float | None = typer.Option(
        None, "--agent-timeout", min=0.001, help="Seconds (default: the task's)."
    ),
    verifier_timeout: float | None = typer.Option(
        None, "--verifier-timeout", min=0.001, help="Seconds (default: the task's)."
    ),
    allow_host_env: bool = typer.Option(
        False, "--allow-host-env", help="Let tasks take their ${VAR} values from this machine's environment."
    ),
    capture: bool | None = typer.Option(
        None,
        "--capture/--no-capture",
        help="Run each harness through a gateway of its own, every model call captured (the default "
        "without --gateway).",
    ),
    db: str | None = DB_OPT,
    as_json: bool = JSON_OPT,
) -> None:
    """Run tasks × harnesses × models × repeats, each cell sandboxed and graded by its verifier: from a
    matrix file, or for a quick look from --task and --harness."""
    from tackroom.cli._stop import Stopped, until_signal
    from tackroom.eval.evaluate import evaluate, summary

    endpoints = [n for n, v in (("--mock", mock), ("--mock-text", mock_text), ("--base-url", base_url),
                                 ("--gateway", gateway)) if v is not None]  # fmt: skip
    if len(endpoints) > 1:
        raise typer.BadParameter(f"choose one endpoint: {' or '.join(endpoints)}")
    if gateway is not None and capture is True:
        raise typer.BadParameter("--gateway sends the cells through a running gateway; --capture starts one")
    if api_key_env is not None and base_url is None and gateway is None:
        raise typer.BadParameter("--api-key-env names the key for --base-url or --gateway; give one")
    if auth not in (None, "api-key", "oauth"):
        raise typer.BadParameter("must be 'api-key' or 'oauth'", param_hint="--auth")
    if auth == "oauth" and (mock is not None or mock_text is not None):
        raise typer.BadParameter("--auth oauth: a run against the mock gets no real credential")
    if executor not in ("local", "ray"):
        raise typer.BadParameter(f"--executor is local or ray, not {executor!r}")
    if ray_address is not None and executor != "ray":
        raise typer.BadParameter("--ray-address goes with --executor ray")
    if retry_failed and not resume:
        raise typer.BadParameter("--retry-failed goes with --resume")
    if resume and out is None:
        raise typer.BadParameter("--resume needs the evaluation's directory: --out DIR")
    if matrix is not None:
        if tasks or harnesses or models or endpoints or capture is not None or profile or api_key_env or auth:
            raise typer.BadParameter(
                "a matrix file names the tasks, harnesses, models and endpoint: drop those"
            )
        from tackroom.eval.matrix import load_matrix

        adapters = _adapters([])
        loaded = load_matrix(matrix, adapters=adapters)
        cells = list(loaded.cells)
        jobs = jobs or loaded.jobs
        per_harness = loaded.per_harness
    elif not tasks or not harnesses:
        raise typer.BadParameter("give a matrix file, or at least one --task and one --harness")
    else:
        adapters = _adapters(harnesses)
        per_harness = {}
        script = _script(mock, mock_text)
        cells = _cells(tasks, harnesses, models, repeats, script, sandbox, agent_timeout, verifier_timeout)
        agent = {
            "base_url": _url(base_url, "--base-url"),
            "gateway": _url(gateway, "--gateway"),
            "api_key_env": api_key_env,
            "auth": auth,
            "capture": capture is not False and gateway is None,
            "profile": _profile(profile),
        }
        cells = [
            replace(
                cell,
                allow_host_env=allow_host_env,
                **(agent if cell.harness != "oracle" else {}),
            )
            for cell in cells
        ]
    directory = out or _new_directory()
    show = _Lines(as_json)
    work = evaluate(
        cells,
        directory,
        store=_store(db),
        jobs=jobs,
        resume=resume,
        retry_failed=retry_failed,
        adapters=adapters,
        executor=_executor(executor, ray_address, jobs, per_harness, adapters, db),
        on_progress=show,
    )
    try:
        with show:
            results = until_signal(
                work,
                "the running cells were stopped, the finished ones are stored: "
                f"go on with --resume --out {directory}",
            )
    except Stopped as stopped:
        raise typer.Exit(128 + stopped.number) from None
    if as_json:
        print_json({"directory": str(directory), **summary(results), "cells": [r.to_json() for r in results]})
    else:
        done = summary(results)
        console(stderr=True).print(
            f"{done['passed']}/{done['total']} passed; outcomes {done['outcomes']}; results in {directory}",
            markup=False,
        )


@app.command("report")
def report(
    run: str | None = typer.Argument(
        None,
        help="The evaluation: its directory, or its name under $XDG_DATA_HOME/tackroom/evals "
        "(default: the latest).",
    ),
    html: Path | None = typer.Option(None, "--html", help="Write the report as one static HTML file here."),
    as_json: bool = typer.Option(False, "--json", help="Print the report's data as JSON."),
    markdown: bool = typer.Option(False, "--markdown", help="Print the report as Markdown (the default)."),
    db: str | None = DB_OPT,
) -> None:
    """The report of an evaluation: each harness × model's pass rate, rewards, pass@k, tokens, cost and
    time with their intervals, the task grid, and paired comparisons."""
    from tackroom.errors import ConfigError, Problem
    from tackroom.eval.report import build

    if sum((html is not None, as_json, markdown)) > 1:
        raise typer.BadParameter("choose one of --html, --json and --markdown")
    store = _store(db, reading=True)
    directory = _evaluation(run, store)
    data = build(directory, details=html is not None, store=store)
    if not data["cells"]:
        raise ConfigError([Problem(str(directory), "", "no stored cell results: nothing to report")])
    if as_json:
        print_json(data)
    elif html is not None:
        from tackroom.eval.report.html import render_html

        html.write_text(render_html(data), encoding="utf-8")
        console(stderr=True).print(f"wrote {html}", markup=False)
    else:
        from tackroom.eval.report.markdown import render_markdown

        sys.stdout.write(render_markdown(data))


def _store(db: str | None, *, reading: bool = False) -> ResultStore:
    """The result store ``--db`` names; for reading, a SQLite file that is not there is an error (a
    mistyped path), never a new empty database."""
    from tackroom.eval.results import ResultStore
    from tackroom.state.postgres import is_postgres_url

    if reading and db is not None and not is_postgres_url(db) and not Path(db).is_file():
        from tackroom.errors import StateError

        raise StateError(
            f"{db}: no result database there (is the path mistyped?): give the file "
            "`tackroom eval run --db` wrote, or no --db for the state database"
        )
    return ResultStore(db)


def _evaluation(run: str | None, store: ResultStore) -> Path:
    from tackroom._files import data_dir
    from tackroom.errors import ConfigError, Problem

    if run is None:
        found = store.last_directory()
        if found is None:
            said = f"no evaluation stored in {store.where} yet: run `tackroom eval run` first"
            raise ConfigError([Problem("", "", said)])
        return found
    for candidate in (Path(run), data_dir() / "evals" / run):
        if store.known(candidate) is not None:
            return candidate
    raise ConfigError(
        [Problem(run, "", "not an evaluation: no cell of it is stored (see `tackroom eval run`)")]
    )


def _executor(
    name: str, address: str | None, jobs: int | None, per_harness: Any, adapters: Any, db: str | None
) -> Any:
    """The executor; with ``--db`` the captured calls go where the results go (on Ray only a
    PostgreSQL server: a SQLite file is this machine's)."""
    if name == "local":
        from tackroom.eval.executors import LocalExecutor

        return LocalExecutor(jobs, per_harness=per_harness, adapters=adapters, capture_db=db)
    from tackroom.eval.ray import RayExecutor
    from tackroom.state.postgres import is_postgres_url

    return RayExecutor(address, capture_db=db if db is not None and is_postgres_url(db) else None)


def _url(url: str | None, flag: str) -> str | None:
    from tackroom.errors import RunSpecError
    from tackroom.run.spec import check_base_url

    try:
        return None if url is None else check_base_url(url)
    except RunSpecError as exc:
        raise typer.BadParameter(str(exc), param_hint=flag) from None


def _profile(dirs: list[Path]) -> Any:
    if not dirs:
        return None
    from tackroom.cli._render import load

    return load(dirs)


def _cells(
    tasks: list[Path],
    harnesses: list[str],
    models: list[str],
    repeats: int,
    script: Any,
    sandbox: str,
    agent_timeout: float | None,
    verifier_timeout: float | None,
) -> list[Cell]:
    from tackroom.eval.cell import ORACLE, Cell
    from tackroom.eval.tasks import load_task

    loaded = [load_task(path) for path in tasks]
    return [
        Cell(
            task=task,
            harness=harness,
            model=model,
            repeat=repeat,
            mock=script if harness != ORACLE else None,
            sandbox=sandbox,
            agent_timeout_s=agent_timeout,
            verifier_timeout_s=verifier_timeout,
        )
        for task in loaded
        for harness in harnesses
        for model in ([*models] if models else [None])
        for repeat in range(repeats)
    ]


def _adapters(harnesses: list[str]) -> Any:
    """The adapters to run, loaded once; a name that is neither an adapter nor ``oracle`` is refused."""
    from tackroom.adapters.resolve import load_adapters
    from tackroom.errors import UnknownAdapterError
    from tackroom.eval.cell import ORACLE

    adapters = load_adapters()
    for name in harnesses:
        if name != ORACLE and name not in adapters:
            raise UnknownAdapterError(name, [ORACLE, *sorted(adapters)])
    return adapters


def _script(mock: Path | None, mock_text: str | None) -> Any:
    if mock is not None:
        from tackroom.mock import load_script

        return load_script(mock)
    if mock_text is not None:
        from tackroom.mock import Script, Turn

        return Script([Turn.reply(mock_text)])
    return None


def _new_directory() -> Path:
    from tackroom._files import data_dir

    return data_dir() / "evals" / time.strftime("%Y%m%d-%H%M%S")


class _Lines:
    """Progress on stderr: one plain line per finished cell (its task, harness, outcome and reward,
    and where the evaluation stands); on a terminal, a live status line below them as well (cells
    done, running, failed, tokens and cost so far, elapsed and ETA)."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.started = time.monotonic()
        self.progress: Progress | None = None
        self.stream = console(stderr=True)
        self.live: Any = None
        if self.stream.is_terminal:
            from rich.live import Live

            self.live = Live(self, console=self.stream, refresh_per_second=4, transient=True)

    def __enter__(self) -> _Lines:
        if self.live is not None:
            self.live.start()
        return self

    def __exit__(self, *_: object) -> None:
        if self.live is not None:
            self.live.stop()

    def __call__(self, progress: Progress, result: CellResult | None) -> None:
        self.progress = progress
        if result is None:
            return
        from tackroom.cli._output import escape

        reward = "no reward" if result.reward is None else f"reward {result.reward:g}"
        reason = f" ({result.reason})" if result.reason else ""
        line = (
            f"[{progress.done + progress.skipped}/{progress.total}] {result.task} × {result.harness}"
            f"{' × ' + result.model if result.model else ''} #{result.repeat}: "
            f"{result.outcome}, {reward}{reason}"
        )
        if self.live is None:
            line += f"; {self.status()}"
        self.stream.print(escape(line), highlight=False)
        if self.live is None:
            sys.stderr.flush()

    def status(self) -> str:
        progress = self.progress
        elapsed = time.monotonic() - self.started
        if progress is None:
            return f"starting; {elapsed:.0f}s"
        left = progress.total - progress.skipped - progress.done
        eta = elapsed / progress.done * left if progress.done else None
        return (
            f"{progress.done + progress.skipped}/{progress.total} done, running {progress.running}, "
            f"failed {progress.failed}, tokens {progress.tokens:,}, cost ${progress.cost_usd:.4f}, "
            f"{elapsed:.0f}s" + (f", eta {eta:.0f}s" if eta is not None else "")
        )

    def __rich__(self) -> Any:
        from rich.text import Text

        return Text(self.status(), style="bold")
