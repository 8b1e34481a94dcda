"""models.json / models.toml custom models, auth.json credentials and API-key resolution."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from pi_plugins import catalog, local_models

from pi_core import ProviderPreset, config_paths, hookimpl
from pi_core.errors import MissingApiKey, PiError
from pi_core.models.auth import AuthStorage
from pi_core.models.custom import read_models_toml, upsert_custom_model
from pi_core.models.registry import ModelRegistry, ModelSources
from pi_core.plugins import load_plugins, register_module
from pi_core.types import Model


def provider_presets() -> dict:
    return {**catalog.provider_presets(), **{name: preset.to_json() for name, preset in local_models.presets().items()}}


BUILTIN = [
    Model(id="gpt-4o", name="GPT-4o", api="openai-responses", provider="openai",
          base_url="https://api.openai.com/v1", cost={"input": 2.5, "output": 10, "cacheRead": 1.25, "cacheWrite": 0}),
    Model(id="gpt-5.4", name="GPT-5.4", api="openai-responses", provider="openai", reasoning=True,
          base_url="https://api.openai.com/v1"),
    Model(id="claude-sonnet-4-6", name="Claude Sonnet 4.6", api="anthropic-messages", provider="anthropic",
          base_url="https://api.anthropic.com"),
]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN", "MY_KEY", "GROQ_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def registry(tmp_path: Path) -> ModelRegistry:
    sources = ModelSources(BUILTIN, provider_presets(), [tmp_path / "models.json", tmp_path / "models.toml"])
    return ModelRegistry(sources, AuthStorage.load(tmp_path / "auth.json"))


def write_json(tmp_path: Path, data: dict | str) -> Path:
    path = tmp_path / "models.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_agent_dir_honours_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    assert config_paths.agent_dir() == tmp_path / "agent"
    assert config_paths.auth_path() == tmp_path / "agent" / "auth.json"
    assert config_paths.models_toml_path().name == "models.toml"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", "~/elsewhere")
    assert config_paths.agent_dir() == Path.home() / "elsewhere"
    monkeypatch.delenv("PI_CODING_AGENT_DIR")
    assert config_paths.agent_dir() == Path.home() / ".pi" / "agent"


def test_custom_provider_without_api_key_is_kept_as_a_keyless_local_server(tmp_path: Path) -> None:
    """Issue 16 item 10 (a deliberate difference: Pi requires "apiKey")."""
    write_json(tmp_path, {"providers": {"x": {"baseUrl": "http://localhost:1/v1", "api": "openai-completions",
                                              "models": [{"id": "m"}]}}})
    reg = registry(tmp_path)
    assert reg.errors == []
    assert [m.id for m in reg.all_models()] == [*[m.id for m in BUILTIN], "m"]
    assert reg.has_auth("x") and reg.keyless("x")
    model = reg.find("x", "m")
    assert model is not None and model in reg.available_models()


def test_comments_and_trailing_commas_are_allowed(tmp_path: Path) -> None:
    write_json(tmp_path, """{
      // my local server
      "providers": {
        "local": {"baseUrl": "http://localhost:8080/v1", "apiKey": "none", "api": "openai-completions",
                  "models": [{"id": "qwen3", "name": "a // not a comment",},],},
      },
    }""")
    reg = registry(tmp_path)
    assert reg.errors == []
    assert reg.find("local", "qwen3").name == "a // not a comment"


def test_minimal_model_gets_pi_defaults(tmp_path: Path) -> None:
    write_json(tmp_path, {"providers": {"ollama": {"baseUrl": "http://localhost:11434/v1", "apiKey": "ollama",
                                                   "api": "openai-completions", "models": [{"id": "llama3.1:8b"}]}}})
    model = registry(tmp_path).find("ollama", "llama3.1:8b")
    assert model.name == "llama3.1:8b" and model.context_window == 128000 and model.max_tokens == 16384
    assert model.input == ["text"] and model.cost.input == 0 and model.reasoning is False
    assert model.base_url == "http://localhost:11434/v1"


def test_preset_providers_need_only_model_ids(tmp_path: Path) -> None:
    (tmp_path / "models.toml").write_text('[[providers.ollama.models]]\nid = "qwen3:8b"\nreasoning = true\n')
    reg = registry(tmp_path)
    model = reg.find("ollama", "qwen3:8b")
    assert reg.errors == []
    assert (model.api, model.base_url, model.reasoning) == ("openai-completions", "http://127.0.0.1:11434/v1", True)
    assert model.compat["supportsDeveloperRole"] is False
    assert reg.api_key_for(model) == "ollama" and model in reg.available_models()


@pytest.mark.parametrize("value,env,expected", [("MY_KEY", "abc", "abc"), ("MY_KEY", None, "MY_KEY"),
                                                ("!echo hi", None, "hi")])
def test_api_key_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, env: str | None,
                        expected: str) -> None:
    if env is not None:
        monkeypatch.setenv("MY_KEY", env)
    write_json(tmp_path, {"providers": {"p": {"baseUrl": "http://h/v1", "apiKey": value, "api": "openai-completions",
                                              "models": [{"id": "m"}]}}})
    reg = registry(tmp_path)
    assert reg.api_key_for(reg.find("p", "m")) == expected


def test_failing_key_command_names_the_command(tmp_path: Path) -> None:
    write_json(tmp_path, {"providers": {"p": {"baseUrl": "http://h/v1", "apiKey": "!exit 3",
                                              "api": "openai-completions", "models": [{"id": "m"}]}}})
    reg = registry(tmp_path)
    assert reg.has_auth("p")  # availability never runs commands
    with pytest.raises(PiError, match=r'^Failed to resolve API key for provider "p" from shell command: exit 3$'):
        reg.api_key_for(reg.find("p", "m"))


@pytest.mark.parametrize("config,message", [
    ({"providers": {"x": {}}},
     'Provider x: must specify "baseUrl", "headers", "compat", "modelOverrides", or "models".'),
    ({"providers": {"x": {"baseUrl": "http://h", "apiKey": "k", "models": [{"id": "m"}]}}},
     'Provider x, model m: no "api" specified. Set at provider or model level.'),
    ({"providers": {"x": {"baseUrl": "http://h", "apiKey": "k", "api": "openai-completions",
                          "models": [{"id": "m", "contextWindow": 0}]}}},
     "Provider x, model m: invalid contextWindow"),
    ({"providers": {"x": {"apiKey": "k", "api": "openai-completions", "models": [{"id": "m"}]}}},
     'Provider x: "baseUrl" is required when defining custom models.'),
])
def test_semantic_errors(tmp_path: Path, config: dict, message: str) -> None:
    path = write_json(tmp_path, config)
    [error] = registry(tmp_path).errors
    assert error.startswith(f"{path}:") and error.endswith(f": {message}") and "\n" not in error


def test_schema_and_syntax_errors(tmp_path: Path) -> None:
    path = write_json(tmp_path, {"providers": {"x": {"baseUrl": "http://h", "apiKey": "k", "api": "a",
                                                     "models": [{"id": "m", "maxTokens": "big"}]}}})
    assert registry(tmp_path).errors == [f"{path}:1:108: /providers/x/models/0/maxTokens: must be number"]
    write_json(tmp_path, '{"providers": {')
    assert registry(tmp_path).errors == [f"{path}:1:16: Expecting property name enclosed in double quotes"]


def test_overrides_patch_builtin_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "secret-header")
    write_json(tmp_path, {"providers": {"openai": {
        "baseUrl": "https://proxy.example/v1", "headers": {"X-Team": "MY_KEY", "X-Empty": "!true"},
        "modelOverrides": {"gpt-4o": {"name": "Four-O", "cost": {"input": 1}, "compat": {"sendSessionIdHeader": False}},
                           "no-such-model": {"name": "ignored"}},
        "models": [{"id": "gpt-5.4", "name": "Replaced", "reasoning": False}]}}})
    reg = registry(tmp_path)
    assert reg.errors == []
    four = reg.find("openai", "gpt-4o")
    assert four.name == "Four-O" and four.base_url == "https://proxy.example/v1"
    assert (four.cost.input, four.cost.output, four.cost.cache_read) == (1, 10, 1.25)
    assert four.headers == {"X-Team": "secret-header"}
    assert four.compat == {"sendSessionIdHeader": False}
    replaced = reg.find("openai", "gpt-5.4")
    assert replaced.name == "Replaced" and replaced.api == "openai-responses"
    assert [m.id for m in reg.all_models()].count("gpt-5.4") == 1


def test_native_toml_with_snake_case_and_later_file_wins(tmp_path: Path) -> None:
    write_json(tmp_path, {"providers": {"lab": {"baseUrl": "http://json", "apiKey": "k", "api": "openai-completions",
                                                "models": [{"id": "a"}]}}})
    (tmp_path / "models.toml").write_text(
        '[providers.lab]\nbase_url = "http://toml/v1"\napi_key = "k"\napi = "openai-completions"\n'
        '[[providers.lab.models]]\nid = "b"\ncontext_window = 32000\nmax_tokens = 4096\n'
        'input = ["text", "image"]\ncost = { input = 1.0, output = 2.0, cache_read = 0.1, cache_write = 0.0 }\n')
    reg = registry(tmp_path)
    assert reg.find("lab", "a") is None
    model = reg.find("lab", "b")
    assert (model.base_url, model.context_window, model.max_tokens) == ("http://toml/v1", 32000, 4096)
    assert model.input == ["text", "image"] and model.cost.cache_read == 0.1


def test_toml_errors_name_the_toml_file(tmp_path: Path) -> None:
    path = tmp_path / "models.toml"
    path.write_text("[providers\n")
    assert registry(tmp_path).errors == [f"{path}:1:11: Expected ']' at the end of a table declaration"]


def test_upsert_writes_toml_that_loads_back(tmp_path: Path) -> None:
    path = tmp_path / "models.toml"
    upsert_custom_model(path, "vllm", {"id": "Qwen/Qwen3-8B", "contextWindow": 32768})
    upsert_custom_model(path, "vllm", {"id": "Qwen/Qwen3-8B", "contextWindow": 65536})
    upsert_custom_model(path, "vllm", {"id": "other"}, {"baseUrl": "http://gpu:8000/v1"})
    assert [m["id"] for m in read_models_toml(path)["providers"]["vllm"]["models"]] == ["Qwen/Qwen3-8B", "other"]
    model = registry(tmp_path).find("vllm", "Qwen/Qwen3-8B")
    assert model.context_window == 65536 and model.base_url == "http://gpu:8000/v1"


def test_key_priority_runtime_auth_env_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_json(tmp_path, {"providers": {"openai": {"apiKey": "from-config", "baseUrl": "https://api.openai.com/v1"}}})
    reg = registry(tmp_path)
    gpt = reg.find("openai", "gpt-4o")
    assert reg.api_key_for(gpt) == "from-config"
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    assert reg.api_key_for(gpt) == "from-env"
    reg.auth.set_api_key("openai", "from-auth")
    assert reg.api_key_for(gpt) == "from-auth"
    reg.set_runtime_key("openai", "from-flag")
    assert reg.api_key_for(gpt) == "from-flag"
    assert reg.api_key_for(gpt, override="explicit") == "explicit"


def test_auth_file_is_private_and_keeps_other_entries(tmp_path: Path) -> None:
    auth = AuthStorage.load(tmp_path / "agent" / "auth.json")
    auth.set_api_key("openai", "sk-1")
    auth.set_api_key("groq", "gsk-2")
    path = tmp_path / "agent" / "auth.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == {"openai": {"type": "api_key", "key": "sk-1"},
                                            "groq": {"type": "api_key", "key": "gsk-2"}}
    auth.remove("openai")
    assert AuthStorage.load(path).providers() == ["groq"]


def test_world_readable_auth_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    path.write_text(json.dumps({"openai": {"type": "api_key", "key": "sk-leaked"}}))
    os.chmod(path, 0o644)
    reg = registry(tmp_path)
    assert reg.warnings and "chmod 600" in reg.warnings[0] and str(path) in reg.warnings[0]
    assert not reg.has_auth("openai")
    with pytest.raises(PiError):
        reg.auth.set_api_key("openai", "x")
    assert json.loads(path.read_text())["openai"]["key"] == "sk-leaked"  # nothing lost


def test_missing_key_names_the_variable(tmp_path: Path) -> None:
    reg = registry(tmp_path)
    with pytest.raises(MissingApiKey, match="OPENAI_API_KEY"):
        reg.api_key_for(reg.find("openai", "gpt-4o"))
    with pytest.raises(MissingApiKey, match="ANTHROPIC_OAUTH_TOKEN or ANTHROPIC_API_KEY"):
        reg.api_key_for(reg.find("anthropic", "claude-sonnet-4-6"))
    custom = Model(id="m", api="openai-completions", provider="nowhere")
    with pytest.raises(MissingApiKey, match='"apiKey"'):
        reg.api_key_for(custom)


def test_available_models_are_those_with_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reg = registry(tmp_path)
    assert reg.available_models() == []
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert [m.id for m in reg.available_models()] == ["claude-sonnet-4-6"]


def test_auth_header_adds_bearer_token(tmp_path: Path) -> None:
    write_json(tmp_path, {"providers": {
        "gw": {"baseUrl": "http://gw/v1", "apiKey": "tok", "authHeader": True, "api": "openai-completions",
               "headers": {"X-A": "1"}, "models": [{"id": "m", "headers": {"X-B": "2"}}]},
        "broken": {"baseUrl": "http://b/v1", "apiKey": "!false", "authHeader": True, "api": "openai-completions",
                   "models": [{"id": "m"}]}}})
    reg = registry(tmp_path)
    model = reg.find("gw", "m")
    assert model.headers == {"X-A": "1", "X-B": "2", "Authorization": "Bearer tok"}
    assert reg.request_headers(model) == model.headers
    assert reg.request_headers(reg.find("openai", "gpt-4o")) is None
    with pytest.raises(PiError, match='^No API key found for "broken"$'):
        reg.request_headers(reg.find("broken", "m"))


def test_refresh_rereads_the_files(tmp_path: Path) -> None:
    reg = registry(tmp_path)
    assert reg.find("local", "m") is None
    write_json(tmp_path, {"providers": {"local": {"baseUrl": "http://h/v1", "apiKey": "k", "api": "openai-completions",
                                                  "models": [{"id": "m"}]}}})
    reg.refresh()
    assert reg.find("local", "m") is not None


def test_load_errors_surface_as_warnings(tmp_path: Path) -> None:
    path = write_json(tmp_path, "{oops")
    [warning] = registry(tmp_path).warnings
    assert warning == f"errors loading models.json:\n{path}:1:2: Expecting property name enclosed in double quotes"


def test_every_error_of_a_file_at_once_as_path_line_col(tmp_path: Path) -> None:
    """JSON with comments and TOML (snake_case keys) print the same ``path:line:col: message`` lines."""
    path = tmp_path / "models.json"
    path.write_text('{\n  // two mistakes\n  "providers": {"p": {"baseUrl": "http://h", "api": "a", "models": [\n'
                    '    {"id": "m", "maxTokens": "big"},\n    {"contextWindow": true},\n  ]}}\n}\n')
    assert registry(tmp_path).errors == ["\n".join([
        f"{path}:4:30: /providers/p/models/0/maxTokens: must be number",
        f"{path}:5:5: /providers/p/models/1: must have required property 'id'",
        f"{path}:5:23: /providers/p/models/1/contextWindow: must be number"])]
    path.unlink()
    toml = tmp_path / "models.toml"
    toml.write_text('[providers.p]\nbase_url = "http://h"\napi = "a"\n\n[[providers.p.models]]\nid = "m"\n\n'
                    '[[providers.p.models]]\nid = "n"\nmax_tokens = "big"\n  context_window = false\n')
    assert registry(tmp_path).errors == ["\n".join([
        f"{toml}:10:1: /providers/p/models/1/maxTokens: must be number",
        f"{toml}:11:3: /providers/p/models/1/contextWindow: must be number"])]


@pytest.mark.parametrize("preset", [ProviderPreset(api="openai-completions", base_url="http://h:9/v1", api_key="K",
                                                   name="Acme", compat={"supportsStore": False}),
                                    {"api": "openai-completions", "baseUrl": "http://h:9/v1", "apiKey": "K",
                                     "name": "Acme", "compat": {"supportsStore": False}}],
                         ids=["record", "dict (one more release)"])
def test_a_plugins_provider_preset_lets_a_models_file_name_only_model_ids(tmp_path: Path, preset: object) -> None:
    class Plugin:
        @staticmethod
        @hookimpl
        def pi_provider_presets() -> dict[str, object]:
            return {"acme": preset}

    plugins = load_plugins(load_entry_points=False, discover_extensions=False)
    register_module(plugins, Plugin, "acme")
    (tmp_path / "models.toml").write_text('[[providers.acme.models]]\nid = "m1"\n')
    reg = ModelRegistry.from_plugins(plugins, agent_dir=tmp_path)
    model = reg.find("acme", "m1")
    assert reg.errors == []
    assert (model.api, model.base_url, model.compat) == ("openai-completions", "http://h:9/v1", {"supportsStore": False})
    assert reg.api_key_for(model) == "K" and reg.provider_name("acme") == "Acme"
