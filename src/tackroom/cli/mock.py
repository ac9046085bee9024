"""``tackroom mock``: run the keyless mock model server in the foreground."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:  # the server is imported when it serves, not on every tackroom command
    from tackroom.mock import Script, ToolVocabulary

app = typer.Typer(help="The keyless mock model server.", no_args_is_help=True)


@app.callback()
def _group() -> None:
    """The keyless mock model server."""  # keeps `serve` a subcommand, not the app itself


@app.command()
def serve(
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on; 0 picks a free one.")] = 0,
    host: Annotated[str, typer.Option(help="Address to bind.")] = "127.0.0.1",
    script: Annotated[Path | None, typer.Option(help="Script file (.toml or .json).")] = None,
    text: Annotated[str | None, typer.Option(help="Answer every request with this text.")] = None,
    log: Annotated[Path | None, typer.Option(help="Append each request to this JSON-lines file.")] = None,
    tools: Annotated[Path | None, typer.Option(help="Tool vocabulary TOML (neutral to harness).")] = None,
    auth: Annotated[
        str,
        typer.Option(
            help="'any' (every call answered), or 'required': a model call without a credential in its "
            "provider's form (a key, a bearer, Anthropic's OAuth) gets the provider's 401."
        ),
    ] = "any",
) -> None:
    """Serve until Ctrl-C, printing the base URL first."""
    from tackroom.mock import MockServer

    if script is not None and text is not None:
        raise typer.BadParameter("give --script or --text, not both")
    if auth not in ("any", "required"):
        raise typer.BadParameter("must be 'any' or 'required'", param_hint="--auth")
    # A bad script, vocabulary, address or log file raises a MockError, which the CLI edge reports.
    mock = MockServer(
        _script(script, text),
        tools=_vocabulary(tools),
        log_path=log,
        host=host,
        port=port,
        auth="required" if auth == "required" else "any",
    )
    mock.start()
    typer.echo(mock.base_url)
    try:
        _wait_for_signal()
    finally:
        mock.stop()


def _script(path: Path | None, text: str | None) -> Script | None:
    from tackroom.mock import Script, load_script

    if text is not None:
        return Script.text(text)
    return load_script(path) if path is not None else None


def _vocabulary(path: Path | None) -> ToolVocabulary | None:
    from tackroom.mock import load_vocabulary

    return load_vocabulary(path) if path is not None else None


def _wait_for_signal() -> None:
    """Block until Ctrl-C or SIGTERM; either ends the server cleanly."""
    stopped = [False]

    def _stop(signum: int, frame: FrameType | None) -> None:
        # A plain flag: the handler runs in the main thread between two steps, so a lock taken here (an
        # Event's) may be the one the main thread holds at that moment, and it would wait for itself.
        stopped[0] = True

    signal.signal(signal.SIGTERM, _stop)
    try:
        while not stopped[0]:
            time.sleep(0.1)  # SIGTERM is seen within 0.1 s; SIGINT raises KeyboardInterrupt here
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    app()
