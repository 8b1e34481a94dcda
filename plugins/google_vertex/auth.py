"""Where a Vertex AI request goes and how it is signed: project, location, the URL, and the credential
(``GOOGLE_CLOUD_API_KEY``, else Application Default Credentials through google-auth, the ``vertex`` extra)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from pi_plugins.google_vertex.hosts import CATALOG_BASE, GLOBAL_HOST

from pi_core.errors import ProviderError
from pi_core.models.env_keys import AUTHENTICATED, env_value
from pi_core.types import Model

EXTRA_HINT = 'Google Vertex AI with Application Default Credentials needs the vertex extra: pip install "pi-harness[vertex]"'
SCOPE = "https://www.googleapis.com/auth/cloud-platform"
API_VERSION = "v1"

_lock = threading.Lock()
_credentials: dict[str | None, Any] = {}  # GOOGLE_APPLICATION_CREDENTIALS (None: the default chain) -> credentials


@dataclass
class VertexTarget:
    base: str  # ends with ``/publishers/{publisher}``: a wire appends ``/models/{id}:...``
    headers: dict[str, str]
    api_key: str | None  # Vertex express mode: the key goes as x-goog-api-key


Env = dict[str, str] | None  # a stored credential's settings, over the process environment


def api_key(options_key: str | None, env: Env = None) -> str | None:
    """A real key: the runtime/stored one, else ``GOOGLE_CLOUD_API_KEY`` (never the ADC marker)."""
    key = (options_key or "").strip()
    if key and key != AUTHENTICATED and not (key.startswith("<") and key.endswith(">")):
        return key
    return env_value("GOOGLE_CLOUD_API_KEY", env)


def project(env: Env = None) -> str:
    found = env_value("GOOGLE_CLOUD_PROJECT", env) or env_value("GCLOUD_PROJECT", env)
    if not found:
        raise ProviderError("Vertex AI requires a project ID. Set GOOGLE_CLOUD_PROJECT/GCLOUD_PROJECT.", retryable=False)
    return found


def location(env: Env = None) -> str:
    found = env_value("GOOGLE_CLOUD_LOCATION", env)
    if not found:
        raise ProviderError("Vertex AI requires a location. Set GOOGLE_CLOUD_LOCATION.", retryable=False)
    return found


def _has_version(base: str) -> bool:
    import re

    return re.search(r"/v\d+(?:beta\d*)?(?:/|$)", base) is not None


def base_url(model: Model, publisher: str, *, with_project: bool, env: Env = None) -> str:
    """``https://{location}-aiplatform.googleapis.com/v1/projects/P/locations/L/publishers/X`` (``global``:
    no location prefix on the host); a base URL with ``{location}`` is filled the same way. A base URL
    without it (a proxy) is the collection root: ``{base}/v1/publishers/X``, as Google's SDK does."""
    template = (model.base_url or "").strip().rstrip("/") or CATALOG_BASE
    if "{location}" not in template:
        root = template if _has_version(template) else f"{template}/{API_VERSION}"
        return f"{root}/publishers/{publisher}"
    if not with_project:  # express mode (an API key): one global endpoint, no project in the path
        host = GLOBAL_HOST if template == CATALOG_BASE else template.replace("{location}", "global")
        return f"{host}/{API_VERSION}/publishers/{publisher}"
    where = location(env)
    host = GLOBAL_HOST if template == CATALOG_BASE and where == "global" else template.replace("{location}", where)
    return f"{host}/{API_VERSION}/projects/{project(env)}/locations/{where}/publishers/{publisher}"


def adc_token(env: Env = None) -> str:
    """An access token from Application Default Credentials (``GOOGLE_APPLICATION_CREDENTIALS``, else gcloud's
    ``application_default_credentials.json``, else the metadata server), refreshed when it expires."""
    try:
        import google.auth
        import google.auth.exceptions
        import google.auth.transport.requests
    except ImportError:
        raise ProviderError(EXTRA_HINT, retryable=False) from None
    path = env_value("GOOGLE_APPLICATION_CREDENTIALS", env)
    try:
        with _lock:
            credentials = _credentials.get(path)
            if credentials is None:
                if path:
                    credentials, _ = google.auth.load_credentials_from_file(path, scopes=[SCOPE])
                else:
                    credentials, _ = google.auth.default(scopes=[SCOPE])
                _credentials[path] = credentials
            if not credentials.valid:
                credentials.refresh(google.auth.transport.requests.Request())
            return str(credentials.token)
    except google.auth.exceptions.GoogleAuthError as err:
        raise ProviderError(f"Google Vertex AI credentials failed: {err}", retryable=False) from None


async def target(model: Model, options_key: str | None, publisher: str, *, keys: bool = True,
                 env: Env = None) -> VertexTarget:
    """Project/location/URL and the credential for one request (``keys``: an API key may be used; Claude
    on Vertex takes only OAuth tokens); the ADC refresh runs off the event loop."""
    import asyncio

    key = api_key(options_key, env) if keys else None
    if key:
        return VertexTarget(base_url(model, publisher, with_project=False, env=env), {}, key)
    base = base_url(model, publisher, with_project=True, env=env)
    token = await asyncio.to_thread(adc_token, env)
    return VertexTarget(base, {"Authorization": f"Bearer {token}"}, None)
