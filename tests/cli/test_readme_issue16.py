"""Issue 16 item 18: every models.toml example in the README is valid, one local-server recipe works against
the fake model server, and the example packs are installed by path in every doc."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from pi_core.models.custom_check import check_semantics
from pi_core.models.custom_schema import check_schema
from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import CLI, pi_runner

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
TOML_BLOCKS = re.findall(r"```toml\n(.*?)```", README, flags=re.DOTALL)
WIRES = ("anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai",
         "mistral-conversations")


def _models_tables() -> list[dict]:
    return [tomllib.loads(block) for block in TOML_BLOCKS if "[providers." in block]


def test_every_models_toml_example_parses_and_passes_pis_checks() -> None:
    tables = _models_tables()
    assert len(tables) >= 5
    for table in tables:
        assert check_schema(table) == []
        assert check_semantics(table, {"ollama": {}, "lmstudio": {}, "vllm": {}, "anthropic": {}}) == []
    apis = {provider.get("api") for table in tables for provider in table["providers"].values()}
    assert set(WIRES) <= apis  # one example per wire
    keys = {key for table in tables for provider in table["providers"].values() for key in provider}
    documented = set(re.findall(r"^\| `(\w+)`", README, flags=re.MULTILINE))
    assert keys <= documented  # every key an example uses is in the reference tables


def test_the_readme_names_every_local_server_recipe() -> None:
    for server in ("Ollama", "llama.cpp", "vLLM", "LM Studio"):
        assert f"\n{server}" in README
    local = [t for t in _models_tables() if any("127.0.0.1" in p.get("baseUrl", "") for p in t["providers"].values())]
    assert len(local) == 4 and all("apiKey" not in p for t in local for p in t["providers"].values())


@pytest.mark.parametrize("server", ["llama.cpp"])
def test_a_recipe_runs_against_the_fake_server(tmp_path: Path, server: str) -> None:
    recipe = next(block for block in TOML_BLOCKS if f'[providers."{server}"]' in block)
    with pi_runner(tmp_path, "openai-completions") as pi:
        (pi.home / "models.json").unlink()  # only the recipe: no key anywhere
        url = pi.server.base_url_for("openai-completions")
        (pi.home / "models.toml").write_text(re.sub(r'baseUrl = "[^"]+"', f'baseUrl = "{url}"', recipe))
        model_id = tomllib.loads(recipe)["providers"][server]["models"][0]["id"]
        pi.server.add(Reply(text="from the local server"))
        env = {k: v for k, v in pi.env().items() if not k.endswith(("_API_KEY", "_TOKEN"))}
        env["PI_OFFLINE"] = "1"
        done = subprocess.run([*CLI, "--model", f"{server}/{model_id}", "-p", "hi"], capture_output=True, text=True,
                              cwd=pi.cwd, env=env, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "from the local server\n"
        body = pi.server.requests[0].body
        assert body["model"] == model_id
        assert all(m["role"] != "developer" for m in body["messages"])  # the recipe's compat applied


def test_example_packs_are_installed_by_path_in_every_doc() -> None:
    packs = [p.name for p in (REPO / "examples").iterdir() if (p / "pyproject.toml").is_file()]
    docs = [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("*.md")),
            *sorted((REPO / "examples").glob("*/README.md"))]
    for doc in docs:
        text = doc.read_text(encoding="utf-8")
        for pack in packs:
            bare = re.findall(rf"pi install (?:-[el] )*{re.escape(pack)}\b", text)
            assert not bare, f"{doc.relative_to(REPO)} installs {pack} by name: {bare}"
