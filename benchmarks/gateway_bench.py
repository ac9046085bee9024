"""The gateway's added latency, throughput and cost against a fast upstream on loopback (issue 11).

Six processes: a fast aiohttp upstream (an Anthropic answer, whole or as a
stream of N distinct deltas), ``tackroom gateway serve`` in front of it with
capture on (SQLite), LiteLLM's proxy in front of it (``litellm[proxy]``,
default settings, a master key, no database), a bare aiohttp pass-through
(what any aiohttp proxy adds here), a raw pass-through (asyncio protocols and
httptools, no aiohttp: the floor of the gateway's own engine), and this
client (aiohttp).
Each case runs direct, through tackroom and the two pass-throughs taking turns
in rounds (so a drift in the machine's speed weighs on all alike), then
through LiteLLM, at each concurrency; a proxy's added latency is its
percentile minus the direct one. Beside latency: requests per second, the proxy's CPU time per request
(user + system, from ``/proc``: what "requests per second per core" is the
inverse of), and its peak RSS. A streamed answer through tackroom is checked
byte for byte against the direct one.

LiteLLM is run from its own virtual environment (it pins its own dependency
versions): ``python3 -m venv .cache/litellm && .cache/litellm/bin/pip install
'litellm[proxy]==1.108.7'``; without it the table has no LiteLLM columns.

    python benchmarks/gateway_bench.py [--requests 2000] [--litellm-requests 400] [--events 200]
        [--concurrency N ...] [--no-litellm] [--write]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
from _common import machine, write_section

HERE = Path(__file__).resolve().parent
UPSTREAM = HERE / "gateway_upstream.py"
PASSTHROUGH = HERE / "gateway_passthrough.py"
RAWPASS = HERE / "gateway_rawpass.py"
LITELLM = HERE.parent / ".cache" / "litellm" / "bin" / "litellm"
LITELLM_VERSION = "1.108.7"
MASTER_KEY = "sk-bench-master-key"
CONCURRENCY = (1, 50, 100)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def wait_up(url: str, tries: int = 1200) -> None:
    """Until ``url`` answers, whatever its status (the pass-through forwards the upstream's 404)."""
    async with aiohttp.ClientSession() as http:
        for _ in range(tries):
            try:
                async with http.get(url) as answer:
                    await answer.read()
                    return
            except aiohttp.ClientError:
                await asyncio.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


def request_body(streamed: bool) -> str:
    messages = [{"role": "user", "content": "x"}]
    return json.dumps(
        {"model": "claude-sonnet-4-5", "max_tokens": 5, "stream": streamed, "messages": messages}
    )


async def load(
    http: aiohttp.ClientSession, base: str, streamed: bool, requests: int, concurrency: int
) -> tuple[list[float], float]:
    """``requests`` calls from ``concurrency`` workers on ``http``: their latencies, and the seconds taken."""
    body = request_body(streamed)
    headers = {"x-api-key": MASTER_KEY, "content-type": "application/json"}
    latencies: list[float] = []
    left = requests

    async def worker() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            started = time.perf_counter()
            async with http.post(f"{base}/v1/messages", data=body, headers=headers) as answer:
                await answer.read()
                if answer.status != 200:
                    raise RuntimeError(f"{base}: HTTP {answer.status}")
            latencies.append(time.perf_counter() - started)

    began = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return latencies, time.perf_counter() - began


async def answer_bytes(base: str) -> bytes:
    headers = {"x-api-key": MASTER_KEY}
    async with (
        aiohttp.ClientSession(auto_decompress=False) as http,
        http.post(f"{base}/v1/messages", data=request_body(True), headers=headers) as answer,
    ):
        return await answer.read()


def pct(samples: list[float], q: int) -> float:
    return statistics.quantiles(samples, n=100)[q - 1] * 1000


def cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds of these processes (and their waited-for children)."""
    total = 0.0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += sum(int(f) for f in fields[11:15])
    return total / os.sysconf("SC_CLK_TCK")


def tree(pid: int) -> list[int]:
    """A process and its descendants (LiteLLM's proxy runs its server in a child)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        todo += [int(c) for c in children]
    return found


def peak_rss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                total += int(line.split()[1])
    return total / 1024


@dataclass
class Measured:
    p50: float
    p99: float
    rate: float
    cpu_ms: float | None


ROUNDS = 5
"""Each case's requests are split into rounds, and the targets take turns round by round: a drift in
the machine's speed (a shared host) then weighs on every target alike, not on whichever ran last."""


async def _measure_async(
    targets: dict[str, tuple[str, list[int]]], streamed: bool, requests: int, concurrency: int
) -> dict[str, Measured]:
    sessions = {
        name: aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) for name in targets
    }
    latencies: dict[str, list[float]] = {name: [] for name in targets}
    seconds = dict.fromkeys(targets, 0.0)
    cpu = dict.fromkeys(targets, 0.0)
    per_round = max(requests // ROUNDS, concurrency)
    try:
        for name, (base, _) in targets.items():  # warm up: connections, caches
            await load(sessions[name], base, streamed, min(200, requests), concurrency)
        for _ in range(ROUNDS):
            for name, (base, pids) in targets.items():
                before = cpu_s(pids) if pids else 0.0
                taken, took = await load(sessions[name], base, streamed, per_round, concurrency)
                cpu[name] += cpu_s(pids) - before if pids else 0.0
                latencies[name] += taken
                seconds[name] += took
    finally:
        for session in sessions.values():
            await session.close()
    done = per_round * ROUNDS
    return {
        name: Measured(
            pct(latencies[name], 50),
            pct(latencies[name], 99),
            done / seconds[name],
            cpu[name] / done * 1000 if targets[name][1] else None,
        )
        for name in targets
    }


def measure(
    targets: dict[str, tuple[str, list[int]]], streamed: bool, requests: int, concurrency: int
) -> dict[str, Measured]:
    """Each target's figures over ``requests`` calls, the targets taking turns in rounds."""
    return asyncio.run(_measure_async(targets, streamed, requests, concurrency))


def litellm_config(tmp: Path, upstream: str) -> Path:
    config = tmp / "litellm.yaml"
    config.write_text(
        "model_list:\n"
        "  - model_name: claude-sonnet-4-5\n"
        "    litellm_params:\n"
        "      model: anthropic/claude-sonnet-4-5\n"
        f"      api_base: {upstream}\n"
        "      api_key: upstream-key\n"
        "general_settings:\n"
        f"  master_key: {MASTER_KEY}\n",
        encoding="utf-8",
    )
    return config


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--litellm-requests", type=int, default=400)
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--no-litellm", action="store_true")
    parser.add_argument(
        "--concurrency", type=int, action="append", help="only these concurrencies (repeatable)"
    )
    parser.add_argument("--write", action="store_true", help="write the tables to RESULTS.md")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    up_port, gw_port, ll_port, pt_port, rp_port = (free_port() for _ in range(5))
    upstream_url = f"http://127.0.0.1:{up_port}"
    processes = [subprocess.Popen([sys.executable, str(UPSTREAM), str(up_port), str(args.events)])]
    env = {**os.environ, "XDG_DATA_HOME": str(tmp / "data"), "XDG_CACHE_HOME": str(tmp / "cache")}
    serve = ("gateway", "serve", "--upstream", upstream_url, "--port", str(gw_port))
    serve += ("--db", str(tmp / "state.db"))
    gateway = subprocess.Popen([sys.executable, "-m", "tackroom", *serve], env=env, stdout=subprocess.DEVNULL)
    processes.append(gateway)
    floor = subprocess.Popen([sys.executable, str(PASSTHROUGH), str(pt_port), upstream_url])
    processes.append(floor)
    raw = subprocess.Popen([sys.executable, str(RAWPASS), str(rp_port), upstream_url])
    processes.append(raw)
    litellm = None
    if not args.no_litellm and LITELLM.exists():
        litellm = subprocess.Popen(
            [str(LITELLM), "--config", str(litellm_config(tmp, upstream_url)), "--port", str(ll_port)],
            env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        processes.append(litellm)
    direct, through = upstream_url, f"http://127.0.0.1:{gw_port}/t/bench"
    liteurl = f"http://127.0.0.1:{ll_port}"
    rows: list[str] = []
    try:
        asyncio.run(wait_up(f"http://127.0.0.1:{gw_port}/health"))
        asyncio.run(wait_up(f"http://127.0.0.1:{pt_port}/health"))
        asyncio.run(wait_up(f"http://127.0.0.1:{rp_port}/health"))
        if litellm is not None:
            asyncio.run(wait_up(f"{liteurl}/health/liveliness"))
        identical = asyncio.run(answer_bytes(direct)) == asyncio.run(answer_bytes(through))
        for streamed in (False, True):
            for concurrency in args.concurrency or CONCURRENCY:
                case = f"stream of {args.events} events" if streamed else "whole answer"
                targets = {
                    "direct": (direct, []),
                    "tackroom": (through, tree(gateway.pid)),
                    "floor": (f"http://127.0.0.1:{pt_port}", [floor.pid]),
                    "raw": (f"http://127.0.0.1:{rp_port}", [raw.pid]),
                }
                found = measure(targets, streamed, args.requests, concurrency)
                d, g, f, r = found["direct"], found["tackroom"], found["floor"], found["raw"]
                line = (
                    f"| {case} | {concurrency} | {d.p50:.2f} | {f.p50 - d.p50:+.2f} | {f.p99 - d.p99:+.2f} "
                    f"| {f.cpu_ms:.2f} | {r.p50 - d.p50:+.2f} | {r.p99 - d.p99:+.2f} | {r.cpu_ms:.2f} "
                    f"| {g.p50 - d.p50:+.2f} | {g.p99 - d.p99:+.2f} "
                    f"| {d.rate:.0f} | {g.rate:.0f} | {g.cpu_ms:.2f} | {1000 / (g.cpu_ms or 1):.0f} |"
                )
                if litellm is not None:
                    ll = measure(
                        {"litellm": (liteurl, tree(litellm.pid))},
                        streamed,
                        args.litellm_requests,
                        concurrency,
                    )["litellm"]
                    added = g.p50 - d.p50
                    # Below a tenth of a millisecond tackroom's added time is noise: no ratio is shown.
                    noise = "n/a (tackroom within noise)"
                    ratio = f"{(ll.p50 - d.p50) / added:.0f}x" if added >= 0.1 else noise
                    line += (
                        f" {ll.p50 - d.p50:+.2f} | {ll.p99 - d.p99:+.2f} | {ll.rate:.0f} | {ll.cpu_ms:.2f} "
                        f"| {ratio} |"
                    )
                print(line, flush=True)
                rows.append(line)
        gateway_rss = peak_rss_mb([gateway.pid])
        litellm_rss = peak_rss_mb(tree(litellm.pid)) if litellm is not None else None
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(30)
    head = (
        "| case | concurrency | direct p50 ms | bare pass-through added p50 ms | added p99 ms "
        "| pass-through CPU ms/req | raw pass-through added p50 ms | added p99 ms | raw CPU ms/req "
        "| tackroom added p50 ms | added p99 ms | direct req/s "
        "| tackroom req/s | tackroom CPU ms/req | tackroom req per CPU-s |"
    )
    rule = "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    if litellm is not None:
        head += (
            " LiteLLM added p50 ms | added p99 ms | LiteLLM req/s | LiteLLM CPU ms/req "
            "| LiteLLM/tackroom added p50 |"
        )
        rule += "---|---|---|---|---|"
    body = "\n".join(
        [
            "## Gateway: added latency against direct, and against LiteLLM's proxy (issue 11)",
            "",
            f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {machine()}, `benchmarks/gateway_bench.py "
            f"--requests {args.requests} --litellm-requests {args.litellm_requests} --events {args.events}`.",
            "One fast aiohttp upstream on loopback (an Anthropic answer, whole or streamed as distinct "
            "deltas);",
            "`tackroom gateway serve` with capture on (SQLite); "
            + (
                f"LiteLLM {LITELLM_VERSION} (`litellm[proxy]`, default settings, a master key, no database);"
                if litellm is not None
                else "(LiteLLM not installed: not measured);"
            ),
            "a bare aiohttp pass-through (`benchmarks/gateway_passthrough.py`: no capture, no store) as "
            "the floor any aiohttp proxy adds here; a raw pass-through (`benchmarks/gateway_rawpass.py`: "
            "asyncio protocols on uvloop, httptools parsing, no aiohttp) beside it;",
            "the client (aiohttp), the upstream and the proxies share the 2 cores. Direct, tackroom and the "
            f"pass-throughs take turns in {ROUNDS} rounds per case (a drift in the machine's speed weighs on "
            "all alike). Added = the proxy's percentile minus direct's.",
            "CPU ms/req is the proxy's user+system time per request, all its processes together "
            "(tackroom's capture writer process included).",
            "",
            head,
            rule,
            *rows,
            "",
            f"Streams through tackroom byte-identical to direct: **{'yes' if identical else 'NO'}**. "
            f"Peak RSS: tackroom {gateway_rss:.0f} MB"
            + (f", LiteLLM {litellm_rss:.0f} MB (its processes together)." if litellm_rss else "."),
        ]
    )
    print(body)
    if args.write:
        write_section("gateway", body)


if __name__ == "__main__":
    main()
