"""Local servers are found when the model list is asked for: each probed on its port, quickly, and usable."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from pi_plugins import local_models

from pi_core.testing.fake_server import FakeModelServer, Reply
from tests.providers.pi16 import clean_env, listed_ids, run_pi


def _dead_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


@pytest.fixture
def silent_server() -> Iterator[str]:
    """Accepts connections and never answers: a hung server must not hold pi up."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join(2)
    for conn in held:
        conn.close()
    listener.close()


def _env(tmp_path: Path, **urls: str) -> dict[str, str]:
    env = clean_env(tmp_path, urls)
    (tmp_path / "agent" / "settings.json").write_text("{}")  # probing on: this is what is under test
    return env


def test_list_models_shows_what_each_running_server_serves(tmp_path: Path, silent_server: str) -> None:
    with FakeModelServer() as ollama, FakeModelServer() as vllm:
        ollama.model_list = ["qwen3:8b", "llama3.2:3b"]
        vllm.model_list = ["Qwen/Qwen3-8B"]
        env = _env(tmp_path, OLLAMA_HOST=ollama.url.removeprefix("http://"), VLLM_BASE_URL=vllm.url + "/v1",
                   LLAMA_BASE_URL=_dead_url(), LMSTUDIO_BASE_URL=silent_server)
        done = run_pi(["--list-models"], env, tmp_path)  # the hung LM Studio is given up on, not waited for
    assert done.returncode == 0, done.stderr
    assert listed_ids(done.stdout) == {("ollama", "qwen3:8b"), ("ollama", "llama3.2:3b"), ("vllm", "Qwen/Qwen3-8B")}


def test_a_discovered_model_answers_through_the_chat_completions_wire(tmp_path: Path) -> None:
    with FakeModelServer() as vllm:
        vllm.model_list = ["Qwen/Qwen3-8B"]
        vllm.add(Reply(text="local hello"))
        env = _env(tmp_path, VLLM_BASE_URL=vllm.url, OLLAMA_HOST=_dead_url(), LLAMA_BASE_URL=_dead_url(),
                   LMSTUDIO_BASE_URL=_dead_url())
        done = run_pi(["-p", "--model", "vllm/Qwen/Qwen3-8B", "hi"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "local hello" in done.stdout
    request = vllm.requests[0]
    assert request.path == "/v1/chat/completions" and request.body["model"] == "Qwen/Qwen3-8B"
    assert request.headers["authorization"] == "Bearer vllm"  # the dummy key: vLLM without --api-key ignores it


def test_the_setting_moves_a_server_or_turns_probing_off(tmp_path: Path) -> None:
    with FakeModelServer() as llama:
        llama.model_list = ["gemma-3-4b-it"]
        env = _env(tmp_path, OLLAMA_HOST=_dead_url(), VLLM_BASE_URL=_dead_url(), LMSTUDIO_BASE_URL=_dead_url())
        settings = tmp_path / "agent" / "settings.json"
        settings.write_text(json.dumps({"localServers": {"llama.cpp": llama.url}}))
        found = run_pi(["--list-models"], env, tmp_path)
        settings.write_text(json.dumps({"localServers": {"llama.cpp": False}}))
        off = run_pi(["--list-models"], env, tmp_path)
    assert listed_ids(found.stdout) == {("llama.cpp", "gemma-3-4b-it")}
    assert listed_ids(off.stdout) == set()


def test_probe_reads_each_servers_own_list_format() -> None:
    ollama, lmstudio, llama = (next(s for s in local_models.SERVERS if s.provider == p)
                               for p in ("ollama", "lmstudio", "llama.cpp"))
    found = local_models._models_from(ollama, "http://h:1", {"models": [{"name": "a:1", "model": "a:1"}]}, True)
    assert [(m.id, m.base_url, m.api) for m in found] == [("a:1", "http://h:1/v1", "openai-completions")]
    studio = local_models._models_from(lmstudio, "http://h:2", {"data": [
        {"id": "vision-7b", "type": "vlm", "max_context_length": 32768}, {"id": "embed", "type": "embeddings"}]},
        True)
    assert [(m.id, m.input, m.context_window) for m in studio] == [("vision-7b", ["text", "image"], 32768)]
    cpp = local_models._models_from(llama, "http://h:3", {"data": [{"id": "g", "meta": {"n_ctx_train": 8192}}]}, True)
    assert cpp[0].context_window == 8192
