"""The evaluation's statistics, refereed by SciPy (and by brute force where SciPy has no estimator)."""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

import pytest
from scipy import stats as sp  # type: ignore[import-untyped]

from tackroom.eval.stats import clustered_mean, groups, paired, pass_at_k, pass_hat_k, t_quantile, wilson


@pytest.mark.parametrize("df", [1, 2, 3, 5, 9, 30, 200])
@pytest.mark.parametrize("p", [0.6, 0.9, 0.975, 0.995])
def test_t_quantiles_match_scipy(df: int, p: float) -> None:
    assert t_quantile(p, df) == pytest.approx(sp.t.ppf(p, df), rel=1e-9)
    assert t_quantile(1 - p, df) == pytest.approx(sp.t.ppf(1 - p, df), rel=1e-9)


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (1, 1), (47, 60), (0, 1)])
def test_wilson_matches_scipy(k: int, n: int) -> None:
    mine = wilson(k, n)
    ref = sp.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert mine is not None
    assert (mine.low, mine.high) == pytest.approx((ref.low, ref.high), abs=1e-12)
    assert wilson(0, 0) is None


def test_pass_at_k_and_pass_hat_k_match_brute_force() -> None:
    for n in range(1, 7):
        for c in range(n + 1):
            samples = [1] * c + [0] * (n - c)
            for k in range(1, n + 1):
                draws = list(itertools.combinations(range(n), k))
                any_pass = sum(1 for d in draws if any(samples[i] for i in d)) / len(draws)
                all_pass = sum(1 for d in draws if all(samples[i] for i in d)) / len(draws)
                assert pass_at_k(n, c, k) == pytest.approx(any_pass)
                assert pass_hat_k(n, c, k) == pytest.approx(all_pass)
    with pytest.raises(ValueError, match="needs at least 4 samples"):
        pass_at_k(3, 1, 4)


def test_the_clustered_interval_is_the_cluster_robust_one() -> None:
    rng = random.Random(7)
    values = {f"task{g}": [rng.choice([0.0, 1.0, 0.5]) for _ in range(rng.randint(1, 5))] for g in range(8)}
    mean, interval = clustered_mean(values)
    flat = [v for group in values.values() for v in group]
    assert mean == pytest.approx(sum(flat) / len(flat))
    # The same estimator written as the sandwich of an intercept-only regression (CR1), with scipy's t.
    n, g = len(flat), len(values)
    meat = sum(sum(v - mean for v in group) ** 2 for group in values.values())
    se = math.sqrt(g / (g - 1) * meat / n**2)
    half = sp.t.ppf(0.975, g - 1) * se
    assert interval is not None and (interval.low, interval.high) == pytest.approx((mean - half, mean + half))
    # repeats that always agree add no information: the interval is as wide as one value per task
    repeated = {task: group[:1] * 4 for task, group in values.items()}
    single = {task: group[:1] for task, group in values.items()}
    _, wide = clustered_mean(repeated)
    _, narrow = clustered_mean(single)
    assert wide is not None and narrow is not None
    assert wide.high - wide.low == pytest.approx(narrow.high - narrow.low)
    assert clustered_mean({"only": [1.0, 0.0]})[1] is None


def test_the_paired_difference_matches_scipys_paired_t() -> None:
    a = {"t1": [1.0, 1.0], "t2": [0.0, 1.0], "t3": [1.0], "t4": [0.0, 0.0], "t5": [1.0, 1.0], "only-a": [1.0]}
    b = {"t1": [0.0, 1.0], "t2": [0.0, 0.0], "t3": [0.0], "t4": [0.0, 1.0], "t5": [1.0, 0.0]}
    result = paired(a, b)
    ma = [sum(a[t]) / len(a[t]) for t in sorted(b)]
    mb = [sum(b[t]) / len(b[t]) for t in sorted(b)]
    ref = sp.ttest_rel(ma, mb).confidence_interval(0.95)
    assert result.tasks == 5 and result.interval is not None
    assert (result.interval.low, result.interval.high) == pytest.approx((ref.low, ref.high))
    assert result.inconclusive  # five tasks cannot tell these apart
    none = paired({"t1": [1.0]}, {"t2": [0.0]})  # no task in common: no difference, valid JSON
    assert none.to_json() == {"tasks": 0, "difference": None, "interval": None, "inconclusive": True}
    clear = paired({f"t{i}": [1.0] for i in range(10)}, {f"t{i}": [0.0 + (i == 0)] for i in range(10)})
    assert not clear.inconclusive and clear.difference == pytest.approx(0.9)


def test_groups_score_valid_rewards_and_count_the_rest_apart() -> None:
    def cell(
        task: str, reward: float | None, outcome: str = "ok", valid: bool = True, cost: float | None = 0.01
    ) -> dict[str, Any]:
        return {
            "harness": "claude-code",
            "model": "m",
            "task": task,
            "outcome": outcome,
            "reward": reward,
            "policy": {"valid_reward": valid},
            "usage": {"reported": {"input": 10, "output": 2, "cache_read": 0, "cache_write": 0}},
            "cost_usd": cost,
            "timings": {"total": 2.0},
        }

    cells = [
        cell("a", 1.0),
        cell("a", 1.0),
        cell("b", 0.0),
        cell("b", 1.0),
        cell("c", None, "infra", valid=False, cost=None),
        cell("c", None, "no_reward", valid=False),
    ]
    (group,) = groups(cells)
    data = group.to_json()
    assert (data["cells"], data["scored"], data["passed"]) == (6, 4, 3)
    assert data["outcomes"] == {"infra": 1, "no_reward": 1, "ok": 4}
    assert data["pass_rate"] == 0.75 and data["mean_reward"] == 0.75
    assert data["pass_at_k"] == {"1": 0.75, "2": 1.0} and data["pass_hat_k"] == {"1": 0.75, "2": 0.5}
    assert data["tokens"] == 72 and data["cost_usd"] is None  # one cell's cost is unknown: never summed as 0
    assert data["seconds_median"] == 2.0


def test_a_cell_counts_each_figure_from_the_first_way_that_knows_it() -> None:
    from tackroom.eval.cell import counted_usage

    ways = {
        "gateway": {
            "input": 1850,
            "output": 120,
            "cache_read": "not_reported",
            "cache_write": "not_reported",
        },
        "reported": {"input": 1900, "output": 121, "cache_read": 200, "cache_write": "not_reported"},
        "transcript": None,
    }
    # the wire first (1850: it keeps cache writes out of the input), then the report, never a guess
    assert counted_usage(ways) == {
        "input": 1850,
        "output": 120,
        "cache_read": 200,
        "cache_write": "not_reported",
    }
    assert counted_usage({"reported": None, "transcript": {"input": 5}, "gateway": None}) == {
        "input": 5,
        "output": "not_reported",
        "cache_read": "not_reported",
        "cache_write": "not_reported",
    }
