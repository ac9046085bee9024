"""The statistics of an evaluation, honest about what its repeats are.

Repeats of one task are not independent tasks: a mean reward's interval is clustered by task, and a
paired comparison of two harnesses works on per-task differences. Binary rewards get a Wilson
interval for the pass rate and the unbiased pass@k and pass^k estimators (Chen et al. 2021; Yao et
al. 2024). Only cells with a valid reward are scored; the others are counted apart, by outcome,
never as a silent 0. Pure Python (no NumPy or SciPy at run time); the tests referee it with SciPy.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Interval:
    low: float
    high: float

    def spans(self, value: float) -> bool:
        return self.low <= value <= self.high

    def to_json(self) -> list[float]:
        return [self.low, self.high]


def wilson(successes: int, n: int, confidence: float = CONFIDENCE) -> Interval | None:
    """The Wilson score interval of a proportion (None with no trials)."""
    if n <= 0:
        return None
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return Interval(max(0.0, centre - half), min(1.0, centre + half))


def clustered_mean(
    values: Mapping[str, Sequence[float]], confidence: float = CONFIDENCE
) -> tuple[float, Interval | None]:
    """The mean of every value, with its interval clustered by key (a task's repeats move together).

    The cluster-robust standard error (CR1: ``G / (G - 1)`` times the sum over clusters of their
    squared summed residuals, over ``N²``) with Student's t on ``G - 1`` degrees of freedom. Fewer
    than two clusters have no interval.
    """
    flat = [v for group in values.values() for v in group]
    if not flat:
        return math.nan, None
    mean = sum(flat) / len(flat)
    clusters = [group for group in values.values() if group]
    g = len(clusters)
    if g < 2:
        return mean, None
    spread = sum(sum(v - mean for v in group) ** 2 for group in clusters)
    se = math.sqrt(g / (g - 1) * spread) / len(flat)
    half = t_quantile(0.5 + confidence / 2, g - 1) * se
    return mean, Interval(mean - half, mean + half)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one task with ``c`` passes in ``n`` samples: 1 - C(n-c, k) / C(n, k)."""
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples, this task has {n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k of one task: the chance that k samples drawn without replacement all pass, C(c, k) / C(n, k)."""
    if k > n:
        raise ValueError(f"pass^{k} needs at least {k} samples, this task has {n}")
    return math.comb(c, k) / math.comb(n, k)


@dataclass(frozen=True)
class Paired:
    """Harness A minus harness B on the tasks both have a valid reward for."""

    tasks: int
    difference: float
    interval: Interval | None

    @property
    def inconclusive(self) -> bool:
        """The interval spans 0 (or there is none): the data cannot say which is better."""
        return self.interval is None or self.interval.spans(0.0)

    def to_json(self) -> dict[str, Any]:
        return {
            "tasks": self.tasks,
            "difference": None if math.isnan(self.difference) else self.difference,
            "interval": None if self.interval is None else self.interval.to_json(),
            "inconclusive": self.inconclusive,
        }


def paired(
    a: Mapping[str, Sequence[float]], b: Mapping[str, Sequence[float]], confidence: float = CONFIDENCE
) -> Paired:
    """The mean per-task difference of mean rewards (A - B), with a t interval over tasks."""
    shared = sorted(task for task in a if a[task] and b.get(task))
    diffs = [sum(a[t]) / len(a[t]) - sum(b[t]) / len(b[t]) for t in shared]
    if not diffs:
        return Paired(0, math.nan, None)
    mean = sum(diffs) / len(diffs)
    if len(diffs) < 2:
        return Paired(len(diffs), mean, None)
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1))
    half = t_quantile(0.5 + confidence / 2, len(diffs) - 1) * sd / math.sqrt(len(diffs))
    return Paired(len(diffs), mean, Interval(mean - half, mean + half))


def t_quantile(p: float, df: int) -> float:
    """Student's t quantile (the inverse of its CDF), by bisection on the regularized incomplete beta."""
    if not 0 < p < 1 or df < 1:
        raise ValueError(f"t quantile of p={p} with {df} degrees of freedom")
    if p < 0.5:
        return -t_quantile(1 - p, df)
    low, high = 0.0, 1.0
    while _t_cdf(high, df) < p:
        high *= 2
    for _ in range(200):
        mid = (low + high) / 2
        if _t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
        if high - low < 1e-12:
            break
    return (low + high) / 2


def _t_cdf(t: float, df: int) -> float:
    x = df / (df + t * t)
    tail = 0.5 * _betai(df / 2, 0.5, x)
    return 1 - tail if t >= 0 else tail


def _betai(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) (Numerical Recipes' continued fraction)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1 - front * _betacf(b, a, 1 - x) / b


def _betacf(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1, a - 1
    c, d = 1.0, 1 - qab * x / qap
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1 + aa * d
        d = 1 / (d if abs(d) > tiny else tiny)
        c = 1 + aa / c if abs(1 + aa / c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1 + aa * d
        d = 1 / (d if abs(d) > tiny else tiny)
        c = 1 + aa / c if abs(1 + aa / c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1) < 3e-16:
            break
    return h


@dataclass
class Group:
    """One harness × model: its cells, scored."""

    harness: str
    model: str | None
    cells: int = 0
    scored: int = 0
    """Cells with a valid reward."""
    passed: int = 0
    binary: bool = True
    """Every valid reward is 0 or 1 (pass@k and pass^k need that)."""
    outcomes: dict[str, int] = field(default_factory=dict)
    rewards: dict[str, list[float]] = field(default_factory=dict)
    """Valid rewards by task."""
    tokens: int = 0
    tokens_known: bool = True
    cost_usd: float = 0.0
    cost_known: bool = True
    seconds: list[float] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        mean, interval = clustered_mean(self.rewards)
        rate = wilson(self.passed, self.scored)
        samples = [len(v) for v in self.rewards.values()]
        ks = range(1, min(samples) + 1) if samples and self.binary else range(0)
        solved = sum(1 for v in self.rewards.values() if any(r >= 1 for r in v))
        cost = self.cost_usd if self.cost_known else None
        return {
            "harness": self.harness,
            "model": self.model,
            "cells": self.cells,
            "scored": self.scored,
            "passed": self.passed,
            "outcomes": dict(sorted(self.outcomes.items())),
            "pass_rate": self.passed / self.scored if self.scored else None,
            "pass_rate_interval": None if rate is None else rate.to_json(),
            "mean_reward": None if math.isnan(mean) else mean,
            "mean_reward_interval": None if interval is None else interval.to_json(),
            "pass_at_k": {
                str(k): _mean(pass_at_k(len(v), _passes(v), k) for v in self.rewards.values()) for k in ks
            },
            "pass_hat_k": {
                str(k): _mean(pass_hat_k(len(v), _passes(v), k) for v in self.rewards.values()) for k in ks
            },
            "tokens": self.tokens if self.tokens_known else None,
            "cost_usd": cost,
            "cost_per_solved_task": cost / solved if cost is not None and solved else None,
            "seconds_mean": _mean(self.seconds) if self.seconds else None,
            "seconds_median": sorted(self.seconds)[len(self.seconds) // 2] if self.seconds else None,
        }


def _passes(values: Sequence[float]) -> int:
    return sum(1 for v in values if v >= 1)


def _mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items)


def groups(results: Iterable[Any]) -> list[Group]:
    """The results (cell results or their JSON) grouped by harness × model, in first-seen order."""
    found: dict[tuple[str, str | None], Group] = {}
    for result in results:
        data = result if isinstance(result, Mapping) else result.to_json()
        key = (data["harness"], data["model"])
        group = found.setdefault(key, Group(*key))
        group.cells += 1
        group.outcomes[data["outcome"]] = group.outcomes.get(data["outcome"], 0) + 1
        reward = data["reward"] if data["policy"]["valid_reward"] else None
        if reward is not None:
            group.scored += 1
            group.passed += reward >= 1
            group.binary = group.binary and reward in (0.0, 1.0)
            group.rewards.setdefault(data["task"], []).append(float(reward))
        usage = data.get("usage") or {}
        counted = usage.get("counted") or usage.get("reported") or {}  # (a result stored before "counted")
        figures = [counted.get(k) for k in ("input", "output", "cache_read", "cache_write")]
        if data.get("usage") is not None:  # it reached a model (the oracle and a cell that never ran did not)
            if all(isinstance(f, int) for f in figures):
                group.tokens += sum(figures)  # type: ignore[arg-type]
            else:
                group.tokens_known = False
            if data.get("cost_usd") is None:
                group.cost_known = False
            else:
                group.cost_usd += data["cost_usd"]
        total = (data.get("timings") or {}).get("total")
        if isinstance(total, int | float):
            group.seconds.append(float(total))
    return list(found.values())
