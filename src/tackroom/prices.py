"""What model calls cost, from the maintained price table of PyPI ``genai-prices`` (never a hand-written one).

A model the table does not know has an unknown cost, never 0. Prices are
per token and depend on the call: Anthropic and Google charge every token of
a call at a higher rate once its input passes a threshold (200k tokens for
Claude Sonnet 4.5), so a report cannot price a day's sum as one call. Instead
each call is put in its price class (how many thresholds its whole input
passes), sums are kept per class, and each class is priced at its per-token
rates. The rates come from ``genai-prices`` itself, by pricing a few probe
calls inside the class; the arithmetic is exact (``Decimal``).

Pricing with ``genai-prices`` is slow (its import takes about half a second
and each price about half a millisecond), so the rates of each model are
cached in ``$XDG_CACHE_HOME/tackroom/prices-<genai-prices version>.json``: a
report after the first needs neither.

Token semantics are tackroom's: ``input`` is uncached input, ``cache_read``
and ``cache_write`` are additive. (``genai-prices`` counts cached tokens
inside ``input_tokens``; the conversion happens here, once.)
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

PREFETCH_TIMEOUT_S = 120.0
PROBE = 1_000_000
"""Tokens in a probe call used to read a rate (large: the per-token rate comes out exact)."""


@dataclass(frozen=True)
class Rates:
    """USD per token, for one price class of one model."""

    input: Decimal
    output: Decimal
    cache_read: Decimal
    cache_write: Decimal

    def cost(self, input: int, output: int, cache_read: int, cache_write: int) -> Decimal:
        return (
            input * self.input
            + output * self.output
            + cache_read * self.cache_read
            + cache_write * self.cache_write
        )


@dataclass(frozen=True)
class ModelPrices:
    """One model's prices: the thresholds a call's whole input is measured against, each class's rates."""

    model: str
    """The model as ``genai-prices`` names it."""
    provider: str
    thresholds: tuple[int, ...]
    rates: tuple[Rates, ...]
    """``len(thresholds) + 1`` classes: class ``k`` is a call whose whole input passes ``k`` thresholds."""

    def price_class(self, whole_input: int) -> int:
        return sum(1 for threshold in self.thresholds if whole_input > threshold)

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "provider": self.provider,
            "thresholds": list(self.thresholds),
            "rates": [
                [str(r.input), str(r.output), str(r.cache_read), str(r.cache_write)] for r in self.rates
            ],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ModelPrices:
        return cls(
            str(data["model"]),
            str(data["provider"]),
            tuple(int(t) for t in data["thresholds"]),
            tuple(Rates(*(Decimal(str(v)) for v in rate)) for rate in data["rates"]),
        )


@functools.cache
def table_version() -> str:
    """The installed ``genai-prices`` release: what a cost was worked out from (looked up once: a
    report asks for it twice, for its cache key and its price book)."""
    from tackroom._dists import version

    return version("genai-prices") or "unknown"


class PriceBook:
    """Prices of the models a report meets, looked up once each (and cached across runs)."""

    def __init__(self, cache: Path | None = None) -> None:
        self._cache_file = cache
        self._known: dict[str, ModelPrices | None] = {}
        self._loaded = False
        self._dirty = False
        self._child: subprocess.Popen[str] | None = None
        self._told = False
        """Whether the child was told to load the table (:meth:`go`)."""

    @classmethod
    def default(cls) -> PriceBook:
        """The book cached under ``$XDG_CACHE_HOME/tackroom/``, one file per ``genai-prices`` release."""
        from tackroom._files import cache_dir

        return cls(cache_dir() / f"prices-{table_version()}.json")

    def lookup(self, model: str) -> ModelPrices | None:
        """``model``'s prices, or None when the table does not know it."""
        self._load()
        if model not in self._known:
            self._known[model] = _derive(model)
            self._dirty = True
        return self._known[model]

    def warm(self) -> None:
        """With nothing cached for this ``genai-prices`` release (a new machine's first report), start
        the child :meth:`prefetch` will ask now. It starts Python and waits for :meth:`go` to import
        the table: its parent says go once the logs' readers no longer keep every core busy, so the
        table loads beside the report instead of under the readers."""
        if self._child is None and self._cache_file is not None and not self._cache_file.exists():
            with contextlib.suppress(OSError):
                self._child = _start_child()
                self._told = False

    def go(self) -> None:
        """Tell a child started by :meth:`warm` to import the table now (once; nothing without one)."""
        if self._child is None or self._told or self._child.stdin is None:
            return
        self._told = True
        with contextlib.suppress(OSError):
            self._child.stdin.write("go\n")
            self._child.stdin.flush()

    def close(self) -> None:
        """Stop a child started by :meth:`warm` that was never asked: one still waiting for go ends at
        its stdin's end; one loading the table is killed (it holds nothing: the cache is ours)."""
        child, self._child = self._child, None
        if child is None:
            return
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            if self._told:
                child.kill()
            child.communicate(timeout=PREFETCH_TIMEOUT_S)

    def prefetch(self, models: Iterable[str]) -> None:
        """Derive the prices of the ``models`` not known yet, all at once, in a child process.

        ``genai-prices``' table costs about 20 MB of memory and half a second to import: a report
        (which needs a few models' rates, once per release) keeps neither. Should the child
        fail, :meth:`lookup` derives them here instead.
        """
        self._load()
        missing = sorted({model for model in models if model not in self._known})
        if not missing:
            return
        child, self._child = self._child, None
        told, self._told = child is not None and self._told, False
        try:
            child = child or _start_child()
            asked = ("" if told else "go\n") + json.dumps(missing)
            out, _ = child.communicate(input=asked, timeout=PREFETCH_TIMEOUT_S)
            if child.returncode != 0:
                return
            found = json.loads(out)
            derived = {m: None if found[m] is None else ModelPrices.from_json(found[m]) for m in missing}
        except (OSError, subprocess.SubprocessError, ValueError, KeyError, TypeError, ArithmeticError):
            if child is not None and child.poll() is None:
                child.kill()
                child.wait()
            return
        self._known.update(derived)
        self._dirty = True

    def save(self) -> None:
        """Keep what was looked up for the next report (a cache: failing to write it loses nothing)."""
        if not self._dirty or self._cache_file is None:
            return
        data = {name: None if prices is None else prices.to_json() for name, prices in self._known.items()}
        try:
            self._cache_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = self._cache_file.with_name(f".{self._cache_file.name}.{os.getpid()}")
            tmp.write_text(json.dumps(data, sort_keys=True), encoding="utf-8")
            tmp.replace(self._cache_file)
        except OSError:
            return
        self._dirty = False

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        if self._cache_file is None:
            return
        try:
            data = json.loads(self._cache_file.read_text(encoding="utf-8"))
            self._known = {
                str(name): None if value is None else ModelPrices.from_json(value)
                for name, value in data.items()
            }
        except (OSError, ValueError, KeyError, TypeError, ArithmeticError, AttributeError):
            self._known = {}  # a damaged cache is rebuilt


Table = tuple[Callable[[Any, str], Any], Any]
"""``genai_prices``' ``calc_price(usage, model_ref)`` and its ``Usage`` type, however reached."""


def _public_table() -> Table:
    from genai_prices import Usage, calc_price  # slow to import: only when a model is not cached

    return (lambda usage, ref: calc_price(usage, model_ref=ref)), Usage


def _derive(model: str, source: Table | None = None) -> ModelPrices | None:
    calc, Usage = source or _public_table()
    try:
        found = calc(Usage(input_tokens=1, output_tokens=1), model)
    except LookupError:
        return None
    table = found.model_price
    thresholds = sorted(
        {tier.start for value in vars(table).values() if hasattr(value, "tiers") for tier in value.tiers}
    )

    def price(uncached: int, output: int = 0, cache_read: int = 0, cache_write: int = 0) -> Decimal:
        usage = Usage(
            input_tokens=uncached + cache_read + cache_write,
            output_tokens=output,
            cache_read_tokens=cache_read,
            cache_write_tokens=cache_write,
        )
        return Decimal(table.calc_price(usage)["total_price"])

    rates = []
    for k in range(len(thresholds) + 1):
        # A whole input inside class k: at most the first threshold, or just past threshold k.
        whole = (
            min(PROBE, thresholds[0]) if k == 0 and thresholds else PROBE if k == 0 else thresholds[k - 1] + 1
        )
        half = whole // 2
        base = price(whole)
        r_in = base / whole
        r_out = (price(whole, output=PROBE) - base) / PROBE
        r_read = (price(whole - half, cache_read=half) - (whole - half) * r_in) / half
        r_write = (price(whole - half, cache_write=half) - (whole - half) * r_in) / half
        rates.append(Rates(r_in, r_out, r_read, r_write))
    return ModelPrices(found.model.id, found.provider.id, tuple(thresholds), tuple(rates))


def _start_child() -> subprocess.Popen[str]:
    """``python -m tackroom.prices``, waiting for the models on its stdin."""
    return subprocess.Popen(
        [sys.executable, "-m", "tackroom.prices"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def _table() -> Table:
    """In the price child: ``calc_price`` and ``Usage`` from the table itself.

    ``genai_prices/__init__`` also loads its price updater (an HTTP client and asyncio) and reads
    its own version from the installed metadata: a third of the child's time, none of it used
    here. The child is a process of its own, so it may load the package's table and types without
    that; ``calc_price`` is ``get_snapshot().calc(usage, model_ref, None, None, None)`` (a test
    holds the two equal). A release laid out otherwise gets the public import.
    """
    import importlib.util

    spec = importlib.util.find_spec("genai_prices")
    if spec is not None and spec.submodule_search_locations and "genai_prices" not in sys.modules:
        sys.modules["genai_prices"] = importlib.util.module_from_spec(spec)  # its __init__ not run
        try:
            from genai_prices.data_snapshot import get_snapshot
            from genai_prices.types import Usage

            calc = get_snapshot().calc
            return (lambda usage, ref: calc(usage, ref, None, None, None)), Usage
        except (ImportError, AttributeError):
            for name in [m for m in sys.modules if m == "genai_prices" or m.startswith("genai_prices.")]:
                del sys.modules[name]
    return _public_table()


def _main() -> None:
    """``python -m tackroom.prices``: on stdin a line ``go``, then the models to price (a JSON list);
    on stdout their prices, as JSON.

    The table is imported on ``go``, before the models are read: a child started early
    (:meth:`PriceBook.warm`) waits for its parent's go, then imports it while the parent builds
    its report. A stdin closed before ``go`` asks nothing: the child ends without the table."""
    if sys.stdin.readline().strip() != "go":
        return
    with contextlib.suppress(OSError):
        os.nice(19)  # it takes what the report leaves of the machine
    table = _table()

    models = json.loads(sys.stdin.read() or "[]")
    found = {str(m): _derive(str(m), table) for m in models}
    print(json.dumps({m: None if p is None else p.to_json() for m, p in found.items()}))


if __name__ == "__main__":
    _main()
    # Its answer is written: the interpreter's teardown (genai-prices' table, thousands of objects)
    # would hold its parent's report about 30 ms for nothing.
    sys.stdout.flush()
    os._exit(0)
