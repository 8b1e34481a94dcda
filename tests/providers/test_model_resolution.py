"""CLI model resolution (docs/models.md#choosing-a-model): --provider/--model, scope, initial model, --list-models."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_core.errors import PiError
from pi_core.models.auth import AuthStorage
from pi_core.models.registry import ModelRegistry, ModelSources
from pi_core.models.resolution import (
    ScopedModel,
    format_model_list,
    format_token_count,
    initial_model,
    resolve_cli_model,
    resolve_model,
    resolve_scope,
)
from pi_core.types import Model


def m(provider: str, model_id: str, name: str = "", **fields: object) -> Model:
    api = {"anthropic": "anthropic-messages", "openai": "openai-responses"}.get(provider, "openai-completions")
    return Model(id=model_id, name=name or model_id, provider=provider, api=api, base_url=f"https://{provider}", **fields)


MODELS = [
    m("anthropic", "claude-sonnet-4-5-20250929", "Claude Sonnet 4.5", reasoning=True),
    m("anthropic", "claude-sonnet-4-5", "Claude Sonnet 4.5 (alias)", reasoning=True),
    m("anthropic", "claude-sonnet-4-6", "Claude Sonnet 4.6", reasoning=True, input=["text", "image"],
      context_window=1_000_000, max_tokens=64_000),
    m("anthropic", "claude-3-5-haiku-20241022", "Claude Haiku 3.5"),
    m("anthropic", "claude-3-5-haiku-20240307", "Claude Haiku 3.5 old"),
    m("openai", "gpt-4o", "GPT-4o", input=["text", "image"]),
    m("openai", "gpt-5.4", "GPT-5.4", reasoning=True),
    m("zai", "glm-5", "GLM-5"),
    m("vercel-ai-gateway", "zai/glm-5", "GLM 5 via gateway"),
    m("openrouter", "openai/gpt-4o:extended", "GPT-4o extended"),
    m("openrouter", "qwen/qwen3:free", "Qwen3 free"),
]


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModelRegistry:
    for name in list(os.environ):
        if name.endswith(("_API_KEY", "_TOKEN")):
            monkeypatch.delenv(name)
    return ModelRegistry(ModelSources(list(MODELS)), AuthStorage.load(tmp_path / "auth.json"))


def ids(result: tuple[Model, str | None]) -> tuple[str, str, str | None]:
    model, thinking = result
    return model.provider, model.id, thinking


@pytest.mark.parametrize("provider,pattern,expected", [
    (None, "gpt-4o", ("openai", "gpt-4o", None)),
    (None, "OPENAI/GPT-4O", ("openai", "gpt-4o", None)),
    ("openai", "gpt-4o", ("openai", "gpt-4o", None)),
    ("OpenAI", "openai/gpt-4o", ("openai", "gpt-4o", None)),
    (None, "zai/glm-5", ("zai", "glm-5", None)),  # a provider prefix wins over a gateway id with a slash
    (None, "sonnet", ("anthropic", "claude-sonnet-4-6", None)),  # aliases first, highest id
    (None, "haiku", ("anthropic", "claude-3-5-haiku-20241022", None)),  # no alias: latest date
    (None, "sonnet:high", ("anthropic", "claude-sonnet-4-6", "high")),
    ("anthropic", "claude-sonnet-4-5:low", ("anthropic", "claude-sonnet-4-5", "low")),
    (None, "openai/gpt-4o:extended", ("openrouter", "openai/gpt-4o:extended", None)),
    (None, "qwen/qwen3:free:medium", ("openrouter", "qwen/qwen3:free", "medium")),
    (None, "GPT-5.4", ("openai", "gpt-5.4", None)),
])
def test_model_patterns(registry: ModelRegistry, provider: str | None, pattern: str,
                        expected: tuple[str, str, str | None]) -> None:
    assert ids(resolve_model(registry, provider, pattern)) == expected


def test_unknown_provider(registry: ModelRegistry) -> None:
    with pytest.raises(PiError) as err:
        resolve_model(registry, "nope", "x")
    assert str(err.value) == 'Unknown provider "nope". Use --list-models to see available providers/models.'


def test_invalid_thinking_suffix_is_strict_for_model(registry: ModelRegistry) -> None:
    with pytest.raises(PiError) as err:
        resolve_model(registry, None, "gpt-4o:turbo")
    assert str(err.value) == 'Model "gpt-4o:turbo" not found. Use --list-models to see available models.'


def test_unknown_model_of_known_provider_becomes_a_custom_id(registry: ModelRegistry) -> None:
    resolved = resolve_cli_model(registry, "openai", "gpt-9-preview")
    assert resolved.model.id == resolved.model.name == "gpt-9-preview"
    assert resolved.model.api == "openai-responses"  # copied from the provider's default model (gpt-5.4)
    assert resolved.warnings == ['Model "gpt-9-preview" not found for provider "openai". Using custom model id.']
    chosen = initial_model(registry, cli_provider="openai", cli_model="gpt-9-preview")
    assert chosen.model.id == "gpt-9-preview" and chosen.warnings == resolved.warnings


def test_no_models_at_all(tmp_path: Path) -> None:
    empty = ModelRegistry(ModelSources([]), AuthStorage.load(tmp_path / "auth.json"))
    with pytest.raises(PiError, match=r"^No models available\. Check your installation or add models to models\.json\.$"):
        resolve_model(empty, None, "x")


def test_scope_uses_credentialed_models_globs_and_levels(registry: ModelRegistry,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    warnings: list[str] = []
    scope = resolve_scope(registry, ["anthropic/*haiku*:low", "sonnet", "claude-sonnet-4-6", "gpt-4o",
                                     "sonnet:turbo", " "], warnings.append)
    assert [(s.model.id, s.thinking) for s in scope] == [
        ("claude-3-5-haiku-20241022", "low"), ("claude-3-5-haiku-20240307", "low"), ("claude-sonnet-4-6", None)]
    assert warnings == ['No models match pattern "gpt-4o"',
                        'Invalid thinking level "turbo" in pattern "sonnet:turbo". Using default instead.']


def test_initial_model_priorities(registry: ModelRegistry, monkeypatch: pytest.MonkeyPatch) -> None:
    assert initial_model(registry).model is None
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert initial_model(registry).model.id == "gpt-5.4"  # provider default, in table order
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert initial_model(registry).model.id == "gpt-5.4"  # anthropic's default (opus 4.7) is not in this list
    saved = initial_model(registry, default_provider="openai", default_model="gpt-4o")
    assert saved.model.id == "gpt-4o"
    scope = [ScopedModel(registry.find("anthropic", "claude-sonnet-4-6"), "high")]
    scoped = initial_model(registry, scope=scope, default_provider="openai", default_model="gpt-4o")
    assert (scoped.model.id, scoped.thinking) == ("claude-sonnet-4-6", "high")
    cli = initial_model(registry, cli_provider="openai", cli_model="gpt-4o:low", scope=scope)
    assert (cli.model.id, cli.thinking) == ("gpt-4o", "low")


def test_initial_model_restores_the_session_model(registry: ModelRegistry, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    restored = initial_model(registry, has_messages=True, session_model=("openai", "gpt-4o"))
    assert restored.model.id == "gpt-4o" and restored.message is None
    fallback = initial_model(registry, has_messages=True, session_model=("anthropic", "claude-sonnet-4-6"))
    assert fallback.model.id == "gpt-5.4"
    assert fallback.message == "Could not restore model anthropic/claude-sonnet-4-6. Using openai/gpt-5.4"


def test_list_models_table(registry: ModelRegistry, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    text = format_model_list(registry.available_models(), "sonnet 4 6")
    assert text.splitlines() == [
        "provider   model              context  max-out  thinking  images",
        "anthropic  claude-sonnet-4-6  1M       64K      yes       yes   ",
    ]
    table = format_model_list(registry.available_models()).splitlines()
    assert [line.split()[:2] for line in table[1:3]] == [["anthropic", "claude-3-5-haiku-20240307"],
                                                          ["anthropic", "claude-3-5-haiku-20241022"]]
    assert table[-1].split()[:2] == ["openai", "gpt-5.4"] and len(table) == 8
    assert format_model_list(registry.available_models(), "zzz") == 'No models matching "zzz"'
    assert format_model_list([]).startswith("No models available. Use /login (or `pi auth login <provider>`) to log into a "
                                            "provider")


@pytest.mark.parametrize("count,text", [(200_000, "200K"), (1_000_000, "1M"), (1_500_000, "1.5M"), (16_384, "16.4K"),
                                        (999, "999"), (8_000, "8K")])
def test_token_counts(count: int, text: str) -> None:
    assert format_token_count(count) == text


def test_fuzzy_search_swaps_letters_and_digits(registry: ModelRegistry, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    lines = format_model_list(registry.available_models(), "54gpt").splitlines()
    assert [line.split()[1] for line in lines[1:]] == ["gpt-5.4"]
