"""Random option sets either render or fail with the typed OptionError, never anything else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tackroom.adapters.plan import Endpoint, plan_run
from tackroom.adapters.resolve import resolve_builtins
from tackroom.adapters.schema import OPTION_KINDS
from tackroom.errors import OptionError, UnsupportedOptionError

NAMES = st.sampled_from(sorted(OPTION_KINDS)) | st.text(min_size=1, max_size=12)
VALUES: st.SearchStrategy[Any] = (
    st.booleans()
    | st.integers(min_value=-5, max_value=10**6)
    | st.text(max_size=20)
    | st.lists(st.text(max_size=8), max_size=4)
    | st.none()
    | st.floats(allow_nan=True)
    | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)
)
ADAPTERS = st.sampled_from(sorted(resolve_builtins()))


@settings(max_examples=400, deadline=None)
@given(name=ADAPTERS, options=st.dictionaries(NAMES, VALUES, max_size=6), endpoint=st.booleans())
def test_random_options_render_or_fail_typed(name: str, options: dict[str, Any], endpoint: bool) -> None:
    adapter = resolve_builtins()[name]
    target = Endpoint("http://127.0.0.1:1", api_key="sk-property") if endpoint else None
    try:
        plan = plan_run(
            adapter,
            "p",
            options=options,
            workdir=Path("/w"),
            home=Path("/h/home"),
            endpoint=target,
            environ={},
        )
    except UnsupportedOptionError as exc:
        assert exc.adapter == name and exc.option in options
        assert name in str(exc) and exc.option in str(exc)
    except OptionError:
        pass
    else:
        assert plan.argv[0] == adapter.spec.executable
        assert all(isinstance(element, str) for element in plan.argv)
        for option in options:
            assert getattr(adapter.spec.options, option) is not None
