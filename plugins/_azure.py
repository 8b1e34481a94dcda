"""Azure OpenAI's endpoint rules, shared by the Responses and Chat Completions wires for the ``azure`` provider.

The base URL is ``AZURE_OPENAI_BASE_URL``, else ``https://{AZURE_OPENAI_RESOURCE_NAME}.openai.azure.com/openai/v1``,
else the model's; a resource root under ``openai.azure.com``, ``cognitiveservices.azure.com`` or
``ai.azure.com`` gets the ``/openai/v1`` path. The model id is the deployment name unless
``AZURE_OPENAI_DEPLOYMENT_NAME_MAP`` (``model=deployment,...``) says otherwise. Responses requests carry
``?api-version=`` (``AZURE_OPENAI_API_VERSION``, default ``v1``) and the key as ``api-key``, or an Entra ID
token as ``Authorization: Bearer`` (``AZURE_OPENAI_AD_TOKEN``, or azure-identity's default credential with
``AZURE_OPENAI_ENTRA_ID=1``, the ``azure`` extra).
"""

from __future__ import annotations

import threading
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pi_core.errors import ProviderError
from pi_core.models.env_keys import env_value
from pi_core.types import Model

PROVIDER = "azure"
RESPONSES_API = "azure-openai-responses"
DEFAULT_API_VERSION = "v1"
ENTRA_SCOPE = "https://cognitiveservices.azure.com/.default"
EXTRA_HINT = 'Azure OpenAI with Entra ID needs the azure extra: pip install "pi-harness[azure]"'
_AZURE_HOSTS = (".openai.azure.com", ".cognitiveservices.azure.com", ".ai.azure.com")

_lock = threading.Lock()
_token: dict[str, Any] = {}


def deployment(model: Model) -> str:
    for entry in (env_value("AZURE_OPENAI_DEPLOYMENT_NAME_MAP") or "").split(","):
        model_id, _, name = entry.strip().partition("=")
        if model_id.strip() == model.id and name.strip():
            return name.strip()
    return model.id


def _normalize(base: str) -> str:
    trimmed = base.strip().rstrip("/")
    parts = urlsplit(trimmed)
    if not parts.scheme or not parts.netloc:
        raise ProviderError(f"Invalid Azure OpenAI base URL: {base}", retryable=False)
    path = parts.path.rstrip("/")
    if (parts.hostname or "").endswith(_AZURE_HOSTS) and path in ("", "/openai", "/openai/v1/responses"):
        return urlunsplit((parts.scheme, parts.netloc, "/openai/v1", "", ""))
    return trimmed


def base_url(model: Model) -> str:
    explicit = (env_value("AZURE_OPENAI_BASE_URL") or "").strip()
    resource = env_value("AZURE_OPENAI_RESOURCE_NAME")
    chosen = explicit or (f"https://{resource}.openai.azure.com/openai/v1" if resource else "") or model.base_url
    if not chosen:
        raise ProviderError("Azure OpenAI base URL is required. Set AZURE_OPENAI_BASE_URL or "
                            "AZURE_OPENAI_RESOURCE_NAME, or give the model a baseUrl in models.json.", retryable=False)
    return _normalize(chosen)


def api_version() -> str:
    return env_value("AZURE_OPENAI_API_VERSION") or DEFAULT_API_VERSION


def entra_token() -> str:
    """An Entra ID token for Azure OpenAI from azure-identity's DefaultAzureCredential (cached until it expires)."""
    try:
        from azure.core.exceptions import ClientAuthenticationError
        from azure.identity import DefaultAzureCredential
    except ImportError:
        raise ProviderError(EXTRA_HINT, retryable=False) from None
    with _lock:
        cached = _token.get("value")
        if cached is not None and cached.expires_on - 60 > time.time():
            return str(cached.token)
        try:
            _token["value"] = DefaultAzureCredential().get_token(ENTRA_SCOPE)
        except ClientAuthenticationError as err:
            raise ProviderError(f"Azure Entra ID sign-in failed: {err.message}", retryable=False) from None
        return str(_token["value"].token)
