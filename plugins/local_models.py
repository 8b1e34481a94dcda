"""local_models: find the models that local Ollama, llama.cpp, LM Studio and vLLM servers serve.

Each server is probed on its default local port (or where its variable or the ``localServers`` setting
points) when the user asks for the model list: ``--list-models``, ``/model``, RPC ``get_available_models``.
A server that is not running costs nothing (a refused loopback connection fails at once); one that
accepts but does not answer is given up after ``PROBE_TIMEOUT_S``. Every server is reached through its
OpenAI-compatible ``/v1`` endpoint, so a found model works with ``openai-completions``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pi_core import ProviderPreset, hookimpl

if TYPE_CHECKING:
    from pi_core.types import Model

PROBE_TIMEOUT_S = 0.8
SETTINGS_KEY = "localServers"
_DEFAULT_CONTEXT = 128_000
_DEFAULT_MAX_TOKENS = 16_384


@dataclass(frozen=True, repr=False)
class LocalServer:
    """One kind of local server: where it listens by default and how it lists its models."""

    provider: str
    name: str
    default_url: str
    url_env: str
    key_env: str
    dummy_key: str
    list_path: str  # the model-list endpoint, relative to the server root
    compat: dict[str, Any]


SERVERS: tuple[LocalServer, ...] = (
    LocalServer("ollama", "Ollama", "http://127.0.0.1:11434", "OLLAMA_HOST", "OLLAMA_API_KEY", "ollama",
                "/api/tags", {"supportsDeveloperRole": False, "supportsReasoningEffort": False}),
    LocalServer("llama.cpp", "llama.cpp", "http://127.0.0.1:8080", "LLAMA_BASE_URL", "LLAMA_API_KEY", "llama.cpp",
                "/v1/models", {"supportsDeveloperRole": False, "supportsStore": False}),
    LocalServer("lmstudio", "LM Studio", "http://127.0.0.1:1234", "LMSTUDIO_BASE_URL", "LMSTUDIO_API_KEY",
                "lm-studio", "/api/v0/models", {"supportsDeveloperRole": False}),
    LocalServer("vllm", "vLLM", "http://127.0.0.1:8000", "VLLM_BASE_URL", "VLLM_API_KEY", "vllm",
                "/v1/models", {"supportsDeveloperRole": False}),
)


def _normalize(url: str) -> str:
    url = url.strip().rstrip("/")
    if "://" not in url:  # OLLAMA_HOST is often just host:port
        url = f"http://{url}"
    return url.removesuffix("/v1")


def server_urls(settings: dict[str, Any] | None = None) -> dict[str, str]:
    """Where to look for each server: the ``localServers`` setting, else its variable, else the default.

    A setting of ``false`` (or ``""``) for a server turns its probe off; ``localServers: false`` turns all off.
    """
    configured = (settings or {}).get(SETTINGS_KEY)
    if configured is False:
        return {}
    table = configured if isinstance(configured, dict) else {}
    urls: dict[str, str] = {}
    for server in SERVERS:
        value = table.get(server.provider, None)
        if value is False or value == "":
            continue
        url = value if isinstance(value, str) else os.environ.get(server.url_env) or server.default_url
        urls[server.provider] = _normalize(url)
    return urls


def _models_from(server: LocalServer, root: str, payload: Any, native: bool) -> list[Model]:
    """Models from the server's own list (``native``) or from the OpenAI-style ``/v1/models`` list."""
    from pi_core.types import Model

    ollama = native and server.list_path == "/api/tags"
    rows = payload.get("models") if ollama else payload.get("data")
    models: list[Model] = []
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict) or row.get("type") == "embeddings":  # LM Studio lists embedders too
            continue
        model_id = (row.get("model") or row.get("name")) if ollama else row.get("id")
        if not isinstance(model_id, str) or not model_id:
            continue
        meta: dict[str, Any] = row["meta"] if isinstance(row.get("meta"), dict) else {}
        context = row.get("max_model_len") or row.get("max_context_length") or meta.get("n_ctx_train")
        vision = row.get("type") == "vlm" or "vision" in (row.get("capabilities") or [])
        models.append(Model(
            id=model_id, name=model_id, api="openai-completions", provider=server.provider,
            base_url=f"{root}/v1", input=["text", "image"] if vision else ["text"],
            context_window=context if isinstance(context, int) and context > 0 else _DEFAULT_CONTEXT,
            max_tokens=_DEFAULT_MAX_TOKENS, compat=dict(server.compat)))
    return models


def probe(server: LocalServer, root: str, timeout_s: float = PROBE_TIMEOUT_S) -> list[Model]:
    """The models ``server`` at ``root`` lists, or ``[]`` when nothing usable answers in time."""
    import httpx2

    headers = {"accept": "application/json"}
    key = os.environ.get(server.key_env)
    if key:
        headers["authorization"] = f"Bearer {key}"
    try:
        with httpx2.Client(timeout=httpx2.Timeout(timeout_s), trust_env=False) as client:
            response = client.get(root + server.list_path, headers=headers)
            native = response.status_code == 200
            if not native and server.list_path != "/v1/models":  # an older build: the OpenAI list only
                response = client.get(root + "/v1/models", headers=headers)
            if response.status_code != 200:
                return []
            return _models_from(server, root, response.json(), native)
    except (httpx2.HTTPError, ValueError, AttributeError):
        return []


def discover(settings: dict[str, Any] | None = None, timeout_s: float = PROBE_TIMEOUT_S) -> list[Model]:
    """Probe every configured server at once; the models of those that answered."""
    urls = server_urls(settings)
    servers = [(server, urls[server.provider]) for server in SERVERS if server.provider in urls]
    if not servers:
        return []
    from concurrent.futures import ThreadPoolExecutor  # only with servers to probe

    with ThreadPoolExecutor(max_workers=len(servers)) as pool:
        found = list(pool.map(lambda pair: probe(pair[0], pair[1], timeout_s), servers))
    return [model for server_models in found for model in server_models]


def presets() -> dict[str, ProviderPreset]:
    """Provider defaults, so a ``models.toml`` entry for a local server only has to name its models."""
    urls = server_urls()
    return {server.provider: ProviderPreset(name=server.name, api="openai-completions",
                                            base_url=f"{urls.get(server.provider, server.default_url)}/v1",
                                            api_key=server.dummy_key, compat=dict(server.compat))
            for server in SERVERS}


@hookimpl
def pi_provider_presets() -> dict[str, ProviderPreset]:
    return presets()


@hookimpl
def pi_discover_models(settings: dict[str, Any], timeout_s: float) -> list[Model]:
    return discover(settings, timeout_s)
