"""A pip recipe's Python versions: install picks a real interpreter from the machine, or says which it sought.

Every interpreter here is a real one (pyenv's, under ``$PYENV_ROOT/versions``);
PATH and the pyenv root are fakes made of links to them, so each test sees
exactly the interpreters it sets up.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tackroom.adapters.resolve import load_adapters, resolve_builtins
from tackroom.errors import ConfigError, InstallError
from tackroom.install import find_python, install

PYENV = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"


def real_python(version: str) -> Path:
    """pyenv's interpreter for ``version`` (``3.12``), or skip the test."""
    for path in sorted(PYENV.glob(f"{version}.*/bin/python{version}")):
        if subprocess.run([path, "-c", "pass"], check=False).returncode == 0:
            return path
    pytest.skip(f"no Python {version} under {PYENV}")


def fake_path(tmp_path: Path, links: dict[str, Path]) -> str:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, target in links.items():
        (bin_dir / name).symlink_to(target)
    return str(bin_dir)


def no_pyenv(tmp_path: Path) -> str:
    root = tmp_path / "no-pyenv"
    root.mkdir()
    return str(root)


def test_an_interpreter_on_path_is_found(tmp_path: Path) -> None:
    python = real_python("3.12")
    env = {"PATH": fake_path(tmp_path, {"python3.12": python}), "PYENV_ROOT": no_pyenv(tmp_path)}
    assert find_python(["3.12"], env) == str(tmp_path / "bin" / "python3.12")


def test_the_first_version_found_in_the_recipes_order_wins(tmp_path: Path) -> None:
    links = {"python3.12": real_python("3.12"), "python3.13": real_python("3.13")}
    env = {"PATH": fake_path(tmp_path, links), "PYENV_ROOT": no_pyenv(tmp_path)}
    assert find_python(["3.10", "3.13", "3.12"], env) == str(tmp_path / "bin" / "python3.13")


def test_a_name_that_lies_about_its_version_is_not_taken(tmp_path: Path) -> None:
    env = {"PATH": fake_path(tmp_path, {"python3.12": real_python("3.13")}), "PYENV_ROOT": no_pyenv(tmp_path)}
    assert find_python(["3.12"], env) is None


def test_pyenv_versions_are_found_when_path_has_none(tmp_path: Path) -> None:
    python = real_python("3.13")
    root = tmp_path / "pyenv"
    (root / "versions").mkdir(parents=True)
    (root / "versions" / python.parents[1].name).symlink_to(python.parents[1])
    env = {"PATH": fake_path(tmp_path, {}), "PYENV_ROOT": str(root)}
    found = find_python(["3.13"], env)
    assert found is not None and Path(found).resolve() == python.resolve()
    # "3.1" is not 3.13: a version's directory is the version itself or the version and a dot.
    assert find_python(["3.1"], env) is None


def test_a_shim_that_fails_is_not_taken(tmp_path: Path) -> None:
    shim = tmp_path / "shim"
    shim.write_text("#!/bin/sh\necho 'pyenv: python3.13: command not found' >&2\nexit 127\n")
    shim.chmod(0o755)
    env = {"PATH": fake_path(tmp_path, {"python3.13": shim}), "PYENV_ROOT": no_pyenv(tmp_path)}
    assert find_python(["3.13"], env) is None


def test_install_names_the_versions_it_looked_for_when_none_fits(tmp_path: Path) -> None:
    kimi = resolve_builtins()["kimi"]
    assert kimi.spec.install is not None and kimi.spec.install.python == ["3.13"]
    env = {
        "PATH": fake_path(tmp_path, {"python3.12": real_python("3.12")}),
        "PYENV_ROOT": no_pyenv(tmp_path),
        "HOME": str(tmp_path / "home"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    with pytest.raises(InstallError) as caught:
        install(kimi, env=env)
    message = str(caught.value)
    assert "needs Python 3.13" in message and "python3.13" in message
    assert str(Path(env["PYENV_ROOT"]) / "versions") in message
    # Nothing half-made is left behind.
    prefix_root = tmp_path / "data" / "tackroom" / "harnesses" / "kimi"
    assert not prefix_root.exists() or not any(prefix_root.iterdir())


def load_problems(config_dir: Path, text: str) -> list[str]:
    (config_dir / "tackroom.toml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_adapters(config=config_dir)
    return [f"{p.key}: {p.message}" for p in caught.value.problems]


def test_a_python_version_is_only_for_pip_and_names_major_and_minor(config_dir: Path) -> None:
    found = load_problems(config_dir, '[adapter.claude-code.install]\npython = ["3.12"]\n')
    assert found == ["adapter.claude-code.install.python: a Python version is only meaningful with pip"]
    found = load_problems(config_dir, '[adapter.kimi.install]\npython = ["3"]\n')
    assert len(found) == 1 and found[0].startswith("adapter.kimi.install.python")
