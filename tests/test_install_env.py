"""An npm install recipe's variables reach the installer (letta needs npm_config_nodedir), and only it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tackroom.adapters.checks import check_adapter
from tackroom.adapters.resolve import load_adapters, resolve_builtins
from tackroom.adapters.schema import Install
from tackroom.families import engines
from tackroom.install import install

NPM = textwrap.dedent(
    """\
    #!/bin/sh
    [ "$1" = install ] || exit 9
    prefix=$3
    mkdir -p "$prefix/node_modules/.bin"
    printf '%s' "${npm_config_nodedir:-unset}" > "$prefix/nodedir"
    printf '#!/bin/sh\\necho 1.0.0\\n' > "$prefix/node_modules/.bin/fakeh"
    chmod +x "$prefix/node_modules/.bin/fakeh"
    """
)


def adapter_table(install: str) -> str:
    return (
        '[adapter.fakeh]\nextends = "grok"\nexecutable = "fakeh"\nverified_with = "1.0.0"\n'
        f'min_version = "1.0.0"\n[adapter.fakeh.install]\n{install}\n'
    )


def test_the_recipes_variables_reach_npm(
    config_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npm").write_text(NPM, encoding="utf-8")
    (bin_dir / "npm").chmod(0o755)
    table = adapter_table('npm = "fakeh"\n[adapter.fakeh.install.env]\nnpm_config_nodedir = "/usr"')
    (config_dir / "adapters.d" / "fakeh.toml").write_text(table, encoding="utf-8")
    adapter = load_adapters(config=config_dir)["fakeh"]
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "XDG_DATA_HOME": str(tmp_path)}
    done = install(adapter, env=env)
    assert (done.prefix / "nodedir").read_text() == "/usr"
    # Without the recipe's table the installer sees the caller's environment as it is.
    env.pop("npm_config_nodedir", None)
    (config_dir / "adapters.d" / "fakeh.toml").write_text(adapter_table('npm = "fakeh"'), encoding="utf-8")
    plain = load_adapters(config=config_dir)["fakeh"]
    assert plain.spec.install is not None and plain.spec.install.env == {}


def test_installer_variables_with_pip_are_refused() -> None:
    spec = resolve_builtins()["grok"].spec
    pip = spec.model_copy(update={"install": Install(pip="fakeh", env={"PIP_INDEX_URL": "x"})})
    refused = (("install", "env"), "installer variables are only supported with npm")
    assert refused in check_adapter(pip, engines())
    assert not [f for f in check_adapter(spec, engines()) if f[0][0] == "install"]


SLOW_NPM = textwrap.dedent(
    """\
    #!/bin/sh
    [ "$1" = install ] || exit 9
    prefix=$3
    echo "$$" >> "$NPM_LOG"
    mkdir -p "$prefix/node_modules/.bin"
    sleep 1
    printf '#!/bin/sh\\necho 1.0.0\\n' > "$prefix/node_modules/.bin/fakeh"
    chmod +x "$prefix/node_modules/.bin/fakeh"
    """
)


def test_two_installs_of_one_version_at_once_install_it_once(
    config_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two processes (two runs, two test workers) installing the same version would each delete
    # the other's half-made prefix; the second must wait for the first and find it installed.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npm").write_text(SLOW_NPM, encoding="utf-8")
    (bin_dir / "npm").chmod(0o755)
    (config_dir / "adapters.d" / "fakeh.toml").write_text(adapter_table('npm = "fakeh"'), encoding="utf-8")
    log = tmp_path / "npm.log"
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "NPM_LOG": str(log),
    }
    code = (
        "import os, pathlib, sys\n"
        "from tackroom.adapters.resolve import load_adapters\n"
        "from tackroom.install import install\n"
        "done = install(load_adapters(config=pathlib.Path(sys.argv[1]))['fakeh'], env=os.environ)\n"
        "print(done.executable, done.already)\n"
    )
    argv = [sys.executable, "-c", code, str(config_dir)]
    both = [subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [p.communicate(timeout=60)[0].split() for p in both]
    assert [p.returncode for p in both] == [0, 0]
    assert len(log.read_text().split()) == 1, "npm ran more than once"
    assert sorted(out[1] for out in outputs) == ["False", "True"]
    executable = Path(outputs[0][0])
    assert executable == Path(outputs[1][0]) and executable.is_file()
