"""Choosing a model from CLI input (docs/models.md#choosing-a-model): ``--provider``/``--model`` patterns,
``--models`` scope, the initial model when none is given, and the ``--list-models`` table
(docs/models.md#listing-models)."""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from pi_core.errors import PiError
from pi_core.types import THINKING_LEVELS, Model, ScopedModel

if TYPE_CHECKING:
    from pi_core.models.entries import ModelEntry
    from pi_core.models.registry import ModelRegistry


class Named(Protocol):
    """What matching reads: a ``Model``, or a registry entry whose ``Model`` is built only once chosen."""

    @property
    def provider(self) -> str: ...

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...


M = TypeVar("M", bound=Named)

# Provider defaults in priority order (0.73.1).
DEFAULT_MODEL_PER_PROVIDER: dict[str, str] = {
    "amazon-bedrock": "us.anthropic.claude-opus-4-6-v1",
    "anthropic": "claude-opus-4-7",
    "openai": "gpt-5.4",
    "azure-openai-responses": "gpt-5.4",
    "openai-codex": "gpt-5.5",
    "deepseek": "deepseek-v4-pro",
    "google": "gemini-3.1-pro-preview",
    "google-vertex": "gemini-3.1-pro-preview",
    "github-copilot": "gpt-5.4",
    "openrouter": "moonshotai/kimi-k2.6",
    "vercel-ai-gateway": "zai/glm-5.1",
    "xai": "grok-4.20-0309-reasoning",
    "groq": "openai/gpt-oss-120b",
    "cerebras": "zai-glm-4.7",
    "zai": "glm-5.1",
    "mistral": "devstral-medium-latest",
    "minimax": "MiniMax-M2.7",
    "minimax-cn": "MiniMax-M2.7",
    "moonshotai": "kimi-k2.6",
    "moonshotai-cn": "kimi-k2.6",
    "opencode": "kimi-k2.6",
    "opencode-go": "kimi-k2.6",
    "huggingface": "moonshotai/Kimi-K2.6",
    "fireworks": "accounts/fireworks/models/kimi-k2p6",
    "kimi-coding": "kimi-for-coding",
    "cloudflare-workers-ai": "@cf/moonshotai/kimi-k2.6",
    "cloudflare-ai-gateway": "workers-ai/@cf/moonshotai/kimi-k2.6",
    "xiaomi": "mimo-v2.5-pro",
    "xiaomi-token-plan-cn": "mimo-v2.5-pro",
    "xiaomi-token-plan-ams": "mimo-v2.5-pro",
    "xiaomi-token-plan-sgp": "mimo-v2.5-pro",
}

_DATED = re.compile(r"-\d{8}$")


def is_thinking_level(value: str) -> bool:
    return value in THINKING_LEVELS


def _is_alias(model_id: str) -> bool:
    return model_id.endswith("-latest") or not _DATED.search(model_id)


def _highest(models: list[M]) -> M:
    # JS localeCompare is roughly case-insensitive first, then case.
    return max(models, key=lambda m: (m.id.lower(), m.id))


def find_exact(reference: str, models: Sequence[M]) -> M | None:
    """Exact ``provider/id`` or bare ``id`` (case-insensitive); an ambiguous match gives None."""
    ref = reference.strip().lower()
    if not ref:
        return None
    canonical = [m for m in models if f"{m.provider}/{m.id}".lower() == ref]
    if canonical:
        return canonical[0] if len(canonical) == 1 else None
    if "/" in ref:
        provider, _, model_id = ref.partition("/")
        if provider.strip() and model_id.strip():
            pair = [m for m in models if m.provider.lower() == provider.strip() and m.id.lower() == model_id.strip()]
            if pair:
                return pair[0] if len(pair) == 1 else None
    by_id = [m for m in models if m.id.lower() == ref]
    return by_id[0] if len(by_id) == 1 else None


def match_model(pattern: str, models: Sequence[M]) -> M | None:
    """Exact match, else substring of id or name: prefer undated aliases, else the latest dated id."""
    exact = find_exact(pattern, models)
    if exact:
        return exact
    needle = pattern.lower()
    hits = [m for m in models if needle in m.id.lower() or needle in (m.name or "").lower()]
    if not hits:
        return None
    aliases = [m for m in hits if _is_alias(m.id)]
    return _highest(aliases or hits)


@dataclass(eq=False, repr=False)
class PatternMatch(Generic[M]):
    """A model pattern's match (None: none), its thinking suffix and a warning."""

    model: M | None
    thinking: str | None = None
    warning: str | None = None


def parse_model_pattern(pattern: str, models: Sequence[M], *, strict: bool) -> PatternMatch[M]:
    """Match ``pattern``, peeling ``:<level>`` suffixes from the right (ids may contain colons).

    ``strict`` (``--model``): an invalid suffix fails the match. Otherwise (scope) it warns and is dropped.
    """
    model = match_model(pattern, models)
    if model:
        return PatternMatch(model)
    prefix, colon, suffix = pattern.rpartition(":")
    if not colon:
        return PatternMatch(None)
    if is_thinking_level(suffix):
        inner = parse_model_pattern(prefix, models, strict=strict)
        if inner.model and not inner.warning:
            inner.thinking = suffix
        return inner
    if strict:
        return PatternMatch(None)
    inner = parse_model_pattern(prefix, models, strict=strict)
    if inner.model:
        return PatternMatch(inner.model, None,
                            f'Invalid thinking level "{suffix}" in pattern "{pattern}". Using default instead.')
    return inner


@dataclass(eq=False, repr=False)
class ResolvedModel:
    """A model named on the command line, its thinking level and the warnings."""

    model: Model
    thinking: str | None = None
    warnings: list[str] = field(default_factory=list)


def _fallback_model(provider: str, model_id: str, models: Sequence[ModelEntry]) -> Model | None:
    own = [m for m in models if m.provider == provider]
    if not own:
        return None
    default_id = DEFAULT_MODEL_PER_PROVIDER.get(provider)
    base = next((m for m in own if m.id == default_id), own[0])
    return base.model.model_copy(update={"id": model_id, "name": model_id})


def _exact_anywhere(text: str, models: Sequence[M]) -> M | None:
    lower = text.lower()
    return next((m for m in models if m.id.lower() == lower or f"{m.provider}/{m.id}".lower() == lower), None)


def resolve_cli_model(registry: ModelRegistry, provider: str | None, pattern: str) -> ResolvedModel:
    """``--provider``/``--model`` against *all* models (so ``--api-key`` works on first use).

    Raises PiError with Pi's messages. A synthesized custom model id comes back with a warning (plain text;
    print it as ``Warning: <text>``).
    """
    providers = registry.providers()  # a provider's entries are made when the pattern reaches it
    if not providers:
        raise PiError("No models available. Check your installation or add models to models.json.")
    by_lower = {name.lower(): name for name in providers}
    chosen = by_lower.get(provider.lower()) if provider else None
    if provider and not chosen:
        raise PiError(f'Unknown provider "{provider}". Use --list-models to see available providers/models.')

    everything: list[ModelEntry] = []

    def models() -> list[ModelEntry]:  # only the chosen entry's Model gets built
        if not everything:
            everything.extend(registry.entries())
        return everything

    text, inferred = pattern, False
    if not chosen and "/" in pattern:
        head, _, rest = pattern.partition("/")
        if head.lower() in by_lower:
            chosen, text, inferred = by_lower[head.lower()], rest, True
    if not chosen:
        exact = _exact_anywhere(pattern, models())
        if exact:
            return ResolvedModel(exact.model)
    if provider and chosen and pattern.lower().startswith(f"{chosen}/".lower()):
        text = pattern[len(chosen) + 1:]

    candidates = registry.provider_entries(chosen) if chosen else models()
    found = parse_model_pattern(text, candidates, strict=True)
    if found.model:
        return ResolvedModel(found.model.model, found.thinking, [found.warning] if found.warning else [])

    if inferred:
        exact = _exact_anywhere(pattern, models())
        if exact:
            return ResolvedModel(exact.model)
        again = parse_model_pattern(pattern, models(), strict=True)
        if again.model:
            return ResolvedModel(again.model.model, again.thinking, [again.warning] if again.warning else [])

    if chosen:
        synthetic = _fallback_model(chosen, text, candidates)
        if synthetic:
            note = f'Model "{text}" not found for provider "{chosen}". Using custom model id.'
            return ResolvedModel(synthetic, None, [note])

    display = f"{chosen}/{text}" if chosen else pattern
    raise PiError(f'Model "{display}" not found. Use --list-models to see available models.')


def resolve_model(registry: ModelRegistry, provider: str | None, pattern: str) -> tuple[Model, str | None]:
    """The lead's entry point: ``(model, thinking level from a ":level" suffix or None)``.

    Warnings (a synthesized custom model id) are dropped here; use ``resolve_cli_model`` to show them.
    """
    resolved = resolve_cli_model(registry, provider, pattern)
    return resolved.model, resolved.thinking




def resolve_scope(registry: ModelRegistry, patterns: list[str],
                  warn: Callable[[str], None] = lambda _msg: None) -> list[ScopedModel]:
    """``--models`` / ``enabledModels``: globs and fuzzy patterns over models *with* credentials.

    ``warn`` receives plain texts; print them as ``Warning: <text>``."""
    available = registry.available_models()
    scoped: list[ScopedModel] = []
    seen: set[tuple[str, str]] = set()

    def add(model: Model, thinking: str | None) -> None:
        if (model.provider, model.id) not in seen:
            seen.add((model.provider, model.id))
            scoped.append(ScopedModel(model, thinking))

    for pattern in (p.strip() for p in patterns):
        if not pattern:
            continue
        if any(ch in pattern for ch in "*?["):
            glob, thinking = pattern, None
            head, colon, suffix = pattern.rpartition(":")
            if colon and is_thinking_level(suffix):
                glob, thinking = head, suffix
            hits = [m for m in available if _glob(f"{m.provider}/{m.id}", glob) or _glob(m.id, glob)]
            if not hits:
                warn(f'No models match pattern "{pattern}"')
            for model in hits:
                add(model, thinking)
            continue
        found = parse_model_pattern(pattern, available, strict=False)
        if found.warning:
            warn(found.warning)
        if not found.model:
            warn(f'No models match pattern "{pattern}"')
            continue
        add(found.model, found.thinking)
    return scoped


def _glob(name: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(name.lower(), pattern.lower())


@dataclass(eq=False, repr=False)
class InitialModel:
    """The model a session starts with, where it came from and what to tell the user."""

    model: Model | None
    thinking: str | None = None  # an explicit level from the chosen source, else None (caller's default)
    message: str | None = None  # "Could not restore model ..." fallback note
    warnings: list[str] = field(default_factory=list)  # e.g. a synthesized custom model id (docs/models.md)


def default_available_model(registry: ModelRegistry) -> Model | None:
    """A provider default with credentials (in the table's order), else the first model with credentials."""
    available = registry.available_entries()
    for provider, model_id in DEFAULT_MODEL_PER_PROVIDER.items():
        hit = next((m for m in available if m.provider == provider and m.id == model_id), None)
        if hit:
            return hit.model
    return available[0].model if available else None


def initial_model(
    registry: ModelRegistry,
    *,
    cli_provider: str | None = None,
    cli_model: str | None = None,
    scope: list[ScopedModel] | None = None,
    has_messages: bool = False,
    session_model: tuple[str, str] | None = None,
    default_provider: str | None = None,
    default_model: str | None = None,
) -> InitialModel:
    """First match wins: --model; scope (new session); the session's model; settings default; a provider
    default with credentials; the first model with credentials; none (docs/models.md#initial-model)."""
    if cli_model:
        resolved = resolve_cli_model(registry, cli_provider, cli_model)
        return InitialModel(resolved.model, resolved.thinking, warnings=resolved.warnings)
    if scope and not has_messages:
        saved = registry.find(default_provider, default_model) if default_provider and default_model else None
        chosen = next((s for s in scope if saved and (s.model.provider, s.model.id) == (saved.provider, saved.id)),
                      scope[0])
        return InitialModel(chosen.model, chosen.thinking)
    if has_messages and session_model:
        provider, model_id = session_model
        restored = registry.find(provider, model_id)
        if restored and registry.has_auth(restored.provider):
            return InitialModel(restored)
        fallback = _settings_or_default(registry, default_provider, default_model)
        if fallback:
            return InitialModel(fallback, None, f"Could not restore model {provider}/{model_id}. "
                                                f"Using {fallback.provider}/{fallback.id}")
        return InitialModel(None)
    return InitialModel(_settings_or_default(registry, default_provider, default_model))


def _settings_or_default(registry: ModelRegistry, provider: str | None, model_id: str | None) -> Model | None:
    if provider and model_id:
        saved = registry.find(provider, model_id)
        if saved:
            return saved
    return default_available_model(registry)


# --- --list-models ---------------------------------------------------------------------------------


def format_token_count(count: int) -> str:
    """200000 -> 200K, 1000000 -> 1M, 1500000 -> 1.5M (one decimal unless whole)."""
    for size, unit in ((1_000_000, "M"), (1_000, "K")):
        if count >= size:
            value = count / size
            return f"{int(value)}{unit}" if value == int(value) else f"{value:.1f}{unit}"
    return str(count)


def _in_order(query: str, text: str) -> bool:
    pos = 0
    for ch in query:
        pos = text.find(ch, pos)
        if pos < 0:
            return False
        pos += 1
    return True


_LETTERS_DIGITS = re.compile(r"^([a-z]+)([0-9]+)$|^([0-9]+)([a-z]+)$")


def fuzzy_match(query: str, text: str) -> bool:
    """Every whitespace-separated token's characters appear in order in ``text`` (case-insensitive);
    a token like ``gpt5`` also matches with its letter and digit runs swapped."""
    haystack = text.lower()
    for token in query.lower().split():
        if _in_order(token, haystack):
            continue
        parts = _LETTERS_DIGITS.match(token)
        if not parts:
            return False
        swapped = (parts[2] + parts[1]) if parts[1] else (parts[4] + parts[3])
        if not _in_order(swapped, haystack):
            return False
    return True


def no_models_text() -> str:
    """What to do when no model has credentials: Pi's /login pointer, the key variables, the models file, and
    the guides (files that exist in a wheel install too)."""
    from pi_core.config_paths import docs_root, models_toml_path

    docs = docs_root() / "docs"
    return ("No models available. Use /login (or `pi auth login <provider>`) to log into a provider via OAuth or "
            "API key, set the provider's key in the environment (e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY, "
            f"GEMINI_API_KEY), or add models to {models_toml_path()}. See:\n"
            f"  {docs / 'providers.md'}\n  {docs / 'models.md'}")


def format_model_list(models: list[Model], search: str | None = None) -> str:
    """The ``--list-models`` text for models *with credentials* (pass ``registry.available_models()``)."""
    if not models:
        return no_models_text()
    if search:
        models = [m for m in models if fuzzy_match(search, f"{m.provider} {m.id}")]
        if not models:
            return f'No models matching "{search}"'
    ordered = sorted(models, key=functools.cmp_to_key(_provider_then_id))
    rows = [("provider", "model", "context", "max-out", "thinking", "images")]
    rows += [(m.provider, m.id, format_token_count(m.context_window), format_token_count(m.max_tokens),
              "yes" if m.reasoning else "no", "yes" if "image" in m.input else "no") for m in ordered]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) for row in rows)


def _locale_key(text: str) -> tuple[str, str]:
    return (text.lower(), text)


def _provider_then_id(a: Model, b: Model) -> int:
    left, right = (_locale_key(a.provider), _locale_key(a.id)), (_locale_key(b.provider), _locale_key(b.id))
    return (left > right) - (left < right)
