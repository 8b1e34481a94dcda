"""One ConverseStream request: region and endpoint, credentials (botocore's chain) and SigV4 or a Bedrock
bearer token, then the AWS event-stream answer decoded with botocore's parser into pi events."""

from __future__ import annotations

import asyncio
import base64
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from pi_plugins._streaming import (
    StreamAborted,
    StreamRun,
    apply_payload_hook,
    new_builder,
    reported_stop,
)
from pi_plugins.bedrock.convert import build_body, dumps

from pi_core.errors import ProviderError
from pi_core.llm.stream import REDACTED_THINKING_TEXT, MessageBuilder
from pi_core.llm.transport import WireRequest
from pi_core.models.env_keys import AUTHENTICATED, env_value
from pi_core.providers import StreamOptions
from pi_core.types import (
    AssistantMessageEvent,
    Context,
    Model,
    StopReason,
    ThinkingContent,
)

EXTRA_HINT = 'Amazon Bedrock needs the bedrock extra: pip install "pi-harness[bedrock]"'
DEFAULT_REGION = "us-east-1"
SERVICE = "bedrock"
_STANDARD_HOST = re.compile(r"^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$")
_ARN_REGION = re.compile(r"^arn:aws(?:-[a-z0-9-]+)?:bedrock:([a-z0-9-]+):")
_RESERVED = ("authorization", "host")
# Bedrock's exception names, worded as Pi words them (the retry layer reads "server error", "unavailable").
_PREFIXES = {"internalServerException": "Internal server error", "modelStreamErrorException": "Model stream error",
             "validationException": "Validation error", "throttlingException": "Throttling error",
             "serviceUnavailableException": "Service unavailable"}
_BY_STATUS = {400: "validationException", 429: "throttlingException", 500: "internalServerException",
              503: "serviceUnavailableException"}
_STOPS: dict[str, StopReason] = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
                                 "model_context_window_exceeded": "length", "tool_use": "toolUse"}


class BedrockError(ProviderError):
    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=None)


Env = dict[str, str] | None  # a stored credential's settings (auth.json ``env``), over the process environment


def _env(name: str, env: Env = None) -> str | None:
    return env_value(name, env)


@dataclass
class Target:
    url: str
    region: str


def target(model: Model, env: Env = None) -> Target:
    """Region: an inference-profile ARN's, else AWS_REGION / AWS_DEFAULT_REGION, else a custom endpoint's or
    the profile's, else us-east-1. The catalog's standard endpoint follows that region; any other base URL
    (a VPC endpoint, a proxy) is used as it is."""
    base = (model.base_url or "").rstrip("/")
    configured = _env("AWS_REGION", env) or _env("AWS_DEFAULT_REGION", env)
    host = re.sub(r"^https?://", "", base).split("/", 1)[0].split(":", 1)[0].lower()
    standard = _STANDARD_HOST.match(host)
    explicit = not standard or not (configured or _env("AWS_PROFILE", env))
    arn = _ARN_REGION.match(model.id)
    region = (arn.group(1) if arn else None) or configured or (standard.group(1) if standard and explicit else None)
    if region is None:
        region = _profile_region(_env("AWS_PROFILE", env)) or DEFAULT_REGION
    endpoint = base if explicit and base else f"https://bedrock-runtime.{region}.amazonaws.com"
    return Target(f"{endpoint}/model/{quote(model.id, safe='')}/converse-stream", region)


def _profile_region(profile: str | None) -> str | None:
    try:
        import botocore.session
        from botocore.exceptions import BotoCoreError
    except ImportError:
        return None
    try:
        region = botocore.session.Session(profile=profile).get_config_variable("region")
    except BotoCoreError as err:
        raise ProviderError(f"Amazon Bedrock: could not read the AWS configuration: {err}", retryable=False) from None
    return str(region) if region else None


def bearer_token(options: StreamOptions) -> str | None:
    key = options.api_key
    if key and key != AUTHENTICATED:
        return key
    return _env("AWS_BEARER_TOKEN_BEDROCK", options.env)


def sign(url: str, region: str, body: bytes, headers: dict[str, str], env: Env = None) -> dict[str, str]:
    """SigV4 over the exact body. A profile named in the credential's settings wins; else keys from the
    settings or the environment (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``); else
    botocore's chain (AWS_PROFILE, SSO, container and web-identity roles, instance metadata).
    ``AWS_BEDROCK_SKIP_AUTH=1`` signs with dummy keys for proxies that need none."""
    try:
        import botocore.session
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials
        from botocore.exceptions import BotoCoreError
    except ImportError:
        raise ProviderError(EXTRA_HINT, retryable=False) from None
    stored_profile = (env or {}).get("AWS_PROFILE")
    key_id, secret = _env("AWS_ACCESS_KEY_ID", env), _env("AWS_SECRET_ACCESS_KEY", env)
    if _env("AWS_BEDROCK_SKIP_AUTH", env) == "1":
        credentials: Any = Credentials("dummy-access-key", "dummy-secret-key")
    elif key_id and secret and not stored_profile:
        credentials = Credentials(key_id, secret, _env("AWS_SESSION_TOKEN", env))
    else:
        try:
            found = botocore.session.Session(profile=_env("AWS_PROFILE", env)).get_credentials()
        except BotoCoreError as err:
            raise ProviderError(f"Amazon Bedrock: could not load AWS credentials: {err}", retryable=False) from None
        if found is None:
            raise ProviderError("Amazon Bedrock: no AWS credentials found. Set AWS_PROFILE, AWS_ACCESS_KEY_ID and "
                                "AWS_SECRET_ACCESS_KEY, or AWS_BEARER_TOKEN_BEDROCK.", retryable=False)
        credentials = found.get_frozen_credentials()
    request = AWSRequest(method="POST", url=url, data=body, headers=headers)
    SigV4Auth(credentials, SERVICE, region).add_auth(request)
    return dict(request.headers.items())


def status_text(status: int, body: str) -> str:
    """``Validation error: {message}`` for Bedrock's modelled errors, else ``{status}: {body}``."""
    try:
        parsed = json.loads(body) if body else None
    except ValueError:
        parsed = None
    message = parsed.get("message") or parsed.get("Message") if isinstance(parsed, dict) else None
    name = _BY_STATUS.get(status)
    if name and isinstance(message, str):
        return f"{_PREFIXES[name]}: {message}"
    return f"{status}: {body}" if body else f"{status}: status code {status} (no body)"


def _hint(text: str) -> str:
    if re.search(r"data retention mode", text, re.IGNORECASE):
        return f"{text} See https://docs.aws.amazon.com/bedrock/latest/userguide/data-retention.html for supported " \
               "data retention modes."
    return text


class _Reader:
    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.open: dict[int, int] = {}  # Bedrock's contentBlockIndex -> pi content index
        self.redacted: dict[int, list[bytes]] = {}
        self.stop: StopReason | None = None
        self.stop_text: str | None = None

    def message(self, headers: dict[str, Any], payload: bytes) -> list[AssistantMessageEvent]:
        kind = headers.get(":message-type")
        if kind == "exception":
            name = str(headers.get(":exception-type") or "")
            text = (_json(payload).get("message") or payload.decode("utf-8", "replace")).strip()
            raise BedrockError(_hint(f"{_PREFIXES.get(name, name)}: {text}"))
        if kind == "error":
            raise BedrockError(f"{headers.get(':error-code')}: {headers.get(':error-message')}")
        event, data = headers.get(":event-type"), _json(payload)
        if event == "messageStart" and data.get("role") not in (None, "assistant"):
            raise BedrockError("Unexpected assistant message start but got user message start instead")
        if event == "contentBlockStart":
            return self._start(data)
        if event == "contentBlockDelta":
            return self._delta(data)
        if event == "contentBlockStop":
            return self._stop(int(data.get("contentBlockIndex") or 0))
        if event == "messageStop":
            raw = data.get("stopReason")
            self.stop = _STOPS.get(raw or "", "error")
            self.stop_text = None if self.stop != "error" else (f"Provider stopped with: {raw}" if raw else None)
        elif event == "metadata":
            usage = data.get("usage") or {}
            if usage:
                input_tokens, output = usage.get("inputTokens") or 0, usage.get("outputTokens") or 0
                self.builder.set_usage(input=input_tokens, output=output, cache_read=usage.get("cacheReadInputTokens") or 0,
                                       cache_write=usage.get("cacheWriteInputTokens") or 0,
                                       total_tokens=usage.get("totalTokens") or input_tokens + output)
        return []

    def _start(self, data: dict[str, Any]) -> list[AssistantMessageEvent]:
        tool = (data.get("start") or {}).get("toolUse")
        if not tool:
            return []
        event = self.builder.toolcall_start(tool.get("toolUseId") or "", tool.get("name") or "")
        assert event.content_index is not None
        self.open[int(data.get("contentBlockIndex") or 0)] = event.content_index
        return [event]

    def _delta(self, data: dict[str, Any]) -> list[AssistantMessageEvent]:
        block_index, delta = int(data.get("contentBlockIndex") or 0), data.get("delta") or {}
        index = self.open.get(block_index)
        builder = self.builder
        if "text" in delta:
            events = []
            if index is None:  # text blocks get no contentBlockStart
                start = builder.text_start()
                assert start.content_index is not None
                index = self.open[block_index] = start.content_index
                events.append(start)
            events.append(builder.text_delta(index, delta["text"]))
            return events
        if "toolUse" in delta and index is not None:
            return [builder.toolcall_delta(index, (delta["toolUse"] or {}).get("input") or "")]
        reasoning = delta.get("reasoningContent")
        if not isinstance(reasoning, dict):
            return []
        events = []
        if index is None:
            start = builder.thinking_start("")
            assert start.content_index is not None
            index = self.open[block_index] = start.content_index
            events.append(start)
        block = builder.message.content[index]
        if not isinstance(block, ThinkingContent):
            return events
        if reasoning.get("text"):
            events.append(builder.thinking_delta(index, reasoning["text"]))
        if reasoning.get("signature") and not block.redacted:
            builder.add_thinking_signature(index, reasoning["signature"])
        if reasoning.get("redactedContent"):  # encrypted reasoning (e.g. OpenAI models): kept to replay it
            if not block.redacted:
                block.redacted, block.thinking_signature = True, ""
                events.append(builder.thinking_delta(index, REDACTED_THINKING_TEXT))
            self.redacted.setdefault(index, []).append(base64.b64decode(reasoning["redactedContent"]))
        return events

    def _stop(self, block_index: int) -> list[AssistantMessageEvent]:
        index = self.open.pop(block_index, None)
        return [] if index is None else [self._end(index)]

    def _end(self, index: int) -> AssistantMessageEvent:
        block = self.builder.message.content[index]
        if isinstance(block, ThinkingContent):
            chunks = self.redacted.pop(index, None)
            if chunks:
                block.thinking_signature = base64.b64encode(b"".join(chunks)).decode()
            return self.builder.thinking_end(index)
        if block.type == "text":
            return self.builder.text_end(index)
        return self.builder.toolcall_end(index)

    def finish(self) -> list[AssistantMessageEvent]:
        """Blocks the stream left open are ended (a stream may settle without stopping each one)."""
        events = [self._end(index) for index in self.open.values()]
        self.open.clear()
        return events


def _json(payload: bytes) -> dict[str, Any]:
    try:
        value = json.loads(payload) if payload else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


async def stream_bedrock(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
    builder = new_builder(model)
    reader = _Reader(builder)
    run = StreamRun(builder, options, settle=reader.finish)
    async with run:
        try:
            from botocore.eventstream import EventStreamBuffer, ParserError
        except ImportError:
            raise ProviderError(EXTRA_HINT, retryable=False) from None
        where = target(model, options.env)
        body = await apply_payload_hook(build_body(model, context, options, where.region), model, options)
        raw = dumps(body)
        headers = {"content-type": "application/json", "accept": "application/vnd.amazon.eventstream"}
        headers.update({k: v for k, v in {**(model.headers or {}), **(options.headers or {})}.items()
                        if k.lower() not in _RESERVED and not k.lower().startswith("x-amz-")})
        token = bearer_token(options) if _env("AWS_BEDROCK_SKIP_AUTH", options.env) != "1" else None
        if token:
            headers["authorization"] = f"Bearer {token}"
        else:  # credential lookup may reach the network (SSO, instance metadata): off the event loop
            headers = await asyncio.to_thread(sign, where.url, where.region, raw, headers, options.env)
        request = WireRequest(model.provider, where.url, headers, raw)
        stream = await run.open(request, status_text, model)
        yield builder.start()
        decoder = EventStreamBuffer()
        async for chunk in stream.raw():
            decoder.add_data(chunk)
            try:
                messages = list(decoder)
            except ParserError as err:
                raise BedrockError(f"Malformed Bedrock event stream: {err}") from None
            for message in messages:
                stream.progress()
                for event in reader.message(message.headers, message.payload):
                    yield event
        for event in reader.finish():
            yield event
        if options.signal.aborted:
            raise StreamAborted()
        yield builder.done(reported_stop(reader, "Bedrock stream ended without a stop reason", BedrockError))
    if run.failure is not None:
        yield run.failure
