"""``pi update --models``: the catalog rebuilt from the newest pi-ai package on the npm registry, or a clear no."""

from __future__ import annotations

import io
import json
import socket
import tarfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from pi_plugins import catalog

from pi_core.models.catalog_build import CatalogBuildError, refresh_cached_catalog
from tests.providers.pi16 import clean_env, listed_ids, run_pi

NEW_MODEL = {"id": "groq-next-1", "name": "Groq Next 1", "api": "openai-completions", "provider": "groq",
             "baseUrl": "https://api.groq.com/openai/v1", "reasoning": True, "input": ["text"],
             "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0}, "contextWindow": 256000,
             "maxTokens": 32000, "type": "chat"}


def _tarball(version: str, model: dict[str, Any] = NEW_MODEL) -> bytes:
    files = {
        "package/package.json": json.dumps({"name": "@earendil-works/pi-ai", "version": version}),
        "package/dist/providers/data/.manifest.json": json.dumps({"generatedAt": "2099-01-01T00:00:00.000Z"}),
        "package/dist/providers/data/groq.json": json.dumps({"openai-completions": {"chat:groq-next-1": model}}),
        "package/dist/providers/groq.js": 'return createProvider({\n  id: "groq",\n  name: "Groq",\n});',
    }
    blob = io.BytesIO()
    with tarfile.open(fileobj=blob, mode="w:gz") as archive:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return blob.getvalue()


@contextmanager
def fake_registry(tarball: bytes) -> Iterator[str]:
    """A fake npm registry serving ``tarball`` as the newest pi-ai package (9.9.9)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            base = f"http://127.0.0.1:{self.server.server_address[1]}"
            if self.path == "/@earendil-works%2fpi-ai/latest":
                body = json.dumps({"name": "@earendil-works/pi-ai", "version": "9.9.9",
                                   "dist": {"tarball": f"{base}/pi-ai-9.9.9.tgz"}}).encode()
            elif self.path == "/pi-ai-9.9.9.tgz":
                body = tarball
            else:
                self.send_response(404)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def registry() -> Iterator[str]:
    """A fake npm registry serving one newer pi-ai package."""
    with fake_registry(_tarball("9.9.9")) as url:
        yield url


def test_update_models_rebuilds_the_catalog_from_the_registry(tmp_path: Path, registry: str) -> None:
    env = clean_env(tmp_path, {"PI_NPM_REGISTRY": registry, "GROQ_API_KEY": "gsk-dummy-0123456789"})
    env.pop("PI_OFFLINE")
    before = run_pi(["--list-models", "groq"], env, tmp_path)
    assert ("groq", "groq-next-1") not in listed_ids(before.stdout)
    done = run_pi(["update", "--models"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Model catalogs refreshed (@earendil-works/pi-ai 9.9.9: 1 providers, 1 models)"
    cached = json.loads((tmp_path / "agent" / "models-catalog.json").read_text())
    assert cached["source"]["version"] == "9.9.9"
    after = run_pi(["--list-models", "groq"], env, tmp_path)
    assert ("groq", "groq-next-1") in listed_ids(after.stdout)


def test_update_models_says_when_the_registry_is_unreachable(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    env = clean_env(tmp_path, {"PI_NPM_REGISTRY": dead, "GROQ_API_KEY": "gsk-dummy-0123456789"})
    env.pop("PI_OFFLINE")
    done = run_pi(["update", "--models"], env, tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith(f"Error: Could not refresh model catalogs: the npm registry at {dead} is not "
                                  "reachable")
    assert "pi keeps the catalog it has." in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "agent" / "models-catalog.json").exists()
    assert ("groq", "llama-3.3-70b-versatile") in listed_ids(run_pi(["--list-models", "groq"], env, tmp_path).stdout)
    offline = run_pi(["update", "--models"], {**env, "PI_OFFLINE": "1"}, tmp_path)
    assert offline.returncode == 1 and "Offline (PI_OFFLINE): model catalogs not refreshed" in offline.stderr


@pytest.mark.parametrize(("model", "reason"), [
    ({**NEW_MODEL, "contextWindow": "large"},
     "has models this pi cannot read: a groq model has an invalid contextWindow (Input should be a valid integer"),
    ({k: v for k, v in NEW_MODEL.items() if k != "baseUrl"},
     "the groq model data of @earendil-works/pi-ai 9.9.9 is not in the shape pi reads (a model has no baseUrl)"),
])
def test_a_package_pi_cannot_read_is_refused_and_the_catalog_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  model: dict[str, Any], reason: str) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("PI_OFFLINE", raising=False)
    with fake_registry(_tarball("9.9.9", model)) as url, pytest.raises(CatalogBuildError) as refused:
        refresh_cached_catalog(url)
    assert str(refused.value).startswith("Could not refresh model catalogs: ")
    assert reason in str(refused.value) and str(refused.value).endswith("pi keeps the catalog it has.")
    assert not (tmp_path / "agent" / "models-catalog.json").exists()


def test_a_saved_catalog_pi_cannot_read_gives_way_to_the_bundled_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    saved = tmp_path / "agent" / "models-catalog.json"
    saved.parent.mkdir(parents=True)
    saved.write_text(json.dumps({"format": 1, "source": {"generatedAt": "2999-01-01T00:00:00.000Z"}, "providers": {
        "groq": {"name": "Groq", "api": "openai-completions", "models": [{"id": "m", "maxTokens": "many"}]}}}))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    catalog.loaded_catalog.cache_clear()
    try:
        models = {(m.provider, m.id) for m in catalog.catalog_models()}
    finally:
        catalog.loaded_catalog.cache_clear()
    assert ("groq", "llama-3.3-70b-versatile") in models and ("groq", "m") not in models
    assert ("anthropic", "claude-sonnet-4-6") in models  # every other provider is still there
    warning = capsys.readouterr().err
    assert warning.startswith(f"Warning: ignoring {saved}: a groq model has an invalid maxTokens (")
    assert "run `pi update --models` again or delete the file." in warning
