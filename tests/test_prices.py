"""The price child (``python -m tackroom.prices``) against genai-prices' public ``calc_price``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tackroom.prices import ModelPrices, PriceBook, _derive

MODELS = [
    "claude-sonnet-4-5-20250929",  # a threshold: two price classes
    "claude-opus-4-1-20250805",
    "gpt-4o",
    "gemini-2.5-pro",
    "no-such-model-anywhere",  # unknown: no price, never 0
]


def test_the_child_prices_as_the_public_function_does() -> None:
    """The child reaches the table without the package's start-up; its rates are the public
    function's, model by model, and a model the table does not know has none."""
    done = subprocess.run(
        [sys.executable, "-m", "tackroom.prices"],
        input="go\n" + json.dumps(MODELS),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found = json.loads(done.stdout)
    for model in MODELS:
        public = _derive(model)  # here: `from genai_prices import calc_price`
        child = found[model]
        assert (public is None) == (child is None), model
        if public is not None:
            assert ModelPrices.from_json(child) == public, model
    assert found["no-such-model-anywhere"] is None
    assert len(ModelPrices.from_json(found["claude-sonnet-4-5-20250929"]).rates) == 2


def test_the_child_leaves_the_price_updater_unloaded() -> None:
    """What the child saves: genai-prices' updater (an HTTP client, asyncio) is never imported."""
    probe = (
        "import sys\n"
        "from tackroom.prices import _table\n"
        "calc, usage = _table()\n"
        "calc(usage(input_tokens=1, output_tokens=1), 'gpt-4o')\n"
        "print(sorted(m for m in ('genai_prices.update_prices', 'asyncio') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "[]", done.stderr


def test_the_child_waits_for_go_and_a_closed_stdin_asks_nothing() -> None:
    """Started early, the child loads nothing until told; its parent closing stdin first ends it."""
    done = subprocess.run(
        [sys.executable, "-m", "tackroom.prices"], input="", capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout) == (0, "")


def test_a_book_warmed_told_and_asked_prices_as_one_asked_at_once(tmp_path: Path) -> None:
    """warm() starts the child, go() lets it load the table, prefetch() asks: the same rates as a
    book that starts its child only when asked. A child never asked ends with close(), told or not."""
    models = ["claude-sonnet-4-5-20250929", "gpt-4o"]
    early = PriceBook(tmp_path / "early.json")
    early.warm()
    early.go()
    early.prefetch(models)
    late = PriceBook(tmp_path / "late.json")
    late.prefetch(models)
    for model in models:
        assert early.lookup(model) == late.lookup(model) == _derive(model), model
    for told in (False, True):
        unasked = PriceBook(tmp_path / f"unasked-{told}.json")
        unasked.warm()
        child = unasked._child
        assert child is not None and child.poll() is None
        if told:
            unasked.go()
        unasked.close()
        assert child.poll() is not None  # ended, not left behind
        assert not (tmp_path / f"unasked-{told}.json").exists()
