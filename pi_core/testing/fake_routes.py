"""How the fake model server reads a request's path and headers: the wire it speaks (``wire_for_path``), the
model it names when the body does not (Gemini, Bedrock, Vertex put it in the URL), and whether a Bedrock
request is signed the way AWS wants (SigV4 over host and x-amz-date, or a Bedrock bearer token)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-case names
    body: Any  # open: the request body, parsed JSON (None when it was none)
    raw: bytes
    wire: str | None
    arrived: float = 0.0  # time.perf_counter() when the request was read (bench: spawn → first request)
    finished: float | None = None  # when its reply was fully sent (bench: per-turn gaps, last reply → exit)
    socket: int | None = None  # the WebSocket (1, 2, … in accept order) a ``WS`` request came over

    def to_json(self) -> dict[str, Any]:  # open: JSON
        return {"method": self.method, "path": self.path, "query": self.query, "headers": self.headers,
                "body": self.body, "wire": self.wire, "socket": self.socket}


def wire_for_path(path: str) -> str | None:
    if path.endswith(("/messages", ":streamRawPredict")):  # the latter: Claude on Vertex AI
        return "anthropic-messages"
    if path.endswith("/codex/responses"):
        return "openai-codex-responses"
    if path.endswith("/chat/completions"):
        return "mistral-conversations" if path.startswith("/mistral/") else "openai-completions"
    if path.endswith("/responses"):
        return "openai-responses"
    if path.startswith("/model/") and path.endswith("/converse-stream"):
        return "bedrock-converse-stream"
    if ":streamGenerateContent" in path:
        return "google-generative-ai"
    return None


_SIGV4 = re.compile(r"^AWS4-HMAC-SHA256 Credential=[^/\s]+/\d{8}/[a-z0-9-]+/bedrock/aws4_request, "
                    r"SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$")


def aws_authorized(headers: dict[str, str]) -> bool:
    """A SigV4 signature in the right shape that signs host and x-amz-date (sent), or a Bearer token."""
    value = headers.get("authorization", "")
    if value.startswith("Bearer ") and len(value) > 7:
        return True
    if not _SIGV4.match(value) or "x-amz-date" not in headers:
        return False
    signed = value.split("SignedHeaders=", 1)[1].split(",", 1)[0].split(";")
    return "host" in signed and "x-amz-date" in signed


def model_from_path(path: str) -> str:
    if path.startswith("/model/"):  # Bedrock: /model/{id}/converse-stream
        from urllib.parse import unquote

        return unquote(path.split("/")[2])
    tail = path.rsplit("/models/", 1)[-1]
    return tail.split(":", 1)[0]
