"""An installed pack that is broken (a misspelt hook, an import that raises) is skipped with a warning that names
it, and pi still starts; ``pi install`` of it exits non-zero."""

from __future__ import annotations

import pytest

from pi_core.testing.fake_server import Reply

from .conftest import Eco

pytestmark = pytest.mark.venv

PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "broken-pack"
version = "0.1.0"

[project.entry-points.pi]
typo_hooks = "broken_pack.typo"
crashing = "broken_pack.crash"
"""
TYPO = "from pi_core import hookimpl\n\n\n@hookimpl\ndef pi_toolz():\n    return []\n"
CRASH = "def _setup():\n    raise RuntimeError('the config server is down')\n\n\n_setup()\n"


@pytest.fixture(scope="module")
def installed(eco: Eco, tmp_path_factory: pytest.TempPathFactory) -> str:
    pack = tmp_path_factory.mktemp("src") / "broken-pack"
    (pack / "broken_pack").mkdir(parents=True)
    (pack / "pyproject.toml").write_text(PYPROJECT)
    (pack / "broken_pack" / "__init__.py").write_text("")
    (pack / "broken_pack" / "typo.py").write_text(TYPO)
    (pack / "broken_pack" / "crash.py").write_text(CRASH)
    result = eco.pi("install", "-e", str(pack))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAILED: RuntimeError: the config server is down" in result.stdout
    assert 'FAILED: hook "pi_toolz" matches no hook specification; did you mean "pi_tools"?' in result.stdout
    assert "its plugins crashing, typo_hooks failed to load" in result.stderr
    return str(pack / "broken_pack" / "typo.py")


def test_print_mode_runs_and_names_each_broken_plugin(eco: Eco, installed: str) -> None:
    eco.server.add(Reply(text="still here"))
    result = eco.ask("hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "still here\n"
    assert (f'Failed to load plugin "typo_hooks" (broken-pack 0.1.0): hook "pi_toolz" matches no hook '
            f'specification; did you mean "pi_tools"? at {installed}:4; skipped') in result.stderr
    assert ('Failed to load plugin "crashing" (broken-pack 0.1.0): RuntimeError: the config server is down; '
            "skipped") in result.stderr
    assert "Traceback" not in result.stderr


def test_verbose_shows_the_traceback(eco: Eco, installed: str) -> None:
    eco.server.add(Reply(text="ok"))
    result = eco.ask("--verbose", "hi")
    assert result.returncode == 0, result.stderr
    assert "Traceback (most recent call last)" in result.stderr and "in _setup" in result.stderr


def test_listings_warn_too(eco: Eco, installed: str) -> None:
    tools = eco.pi("tools")
    models = eco.pi("--list-models", "fake")
    assert tools.returncode == 0 and models.returncode == 0, tools.stderr + models.stderr
    for result in (tools, models):
        assert 'Failed to load plugin "typo_hooks"' in result.stderr and 'plugin "crashing"' in result.stderr
    assert " read " in tools.stdout
