"""A fake OAuth authorization server and an HTTP MCP server built with the SDK that demands sign-in.

``python oauth_servers.py --port-file F [--token-lifetime S] [--wrong-issuer]`` serves both on free loopback
ports and writes ``{"as": ..., "mcp": ...}`` (their base URLs) to F once they listen. The authorization server
approves every request at once (no login page), checks PKCE, registers clients dynamically, issues short-lived
tokens and refreshes them; ``GET /_state`` shows what happened. With ``--wrong-issuer`` the MCP server's
protected-resource metadata names an authorization server that does not exist.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import json
import secrets
import socket
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

parser = argparse.ArgumentParser()
parser.add_argument("--port-file", required=True)
parser.add_argument("--token-lifetime", type=int, default=3600)
parser.add_argument("--wrong-issuer", action="store_true")
options = parser.parse_args()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


AS_PORT, MCP_PORT = free_port(), free_port()
ISSUER = f"http://127.0.0.1:{AS_PORT}"
RESOURCE = f"http://127.0.0.1:{MCP_PORT}/mcp"
PRECONFIGURED = {"client_id": "registered-client", "client_secret": "s3cret"}

clients: dict[str, dict[str, Any]] = {PRECONFIGURED["client_id"]: {**PRECONFIGURED, "client_name": "preconfigured"}}
codes: dict[str, dict[str, Any]] = {}
tokens: dict[str, dict[str, Any]] = {}
refresh_tokens: dict[str, dict[str, Any]] = {}
state: dict[str, Any] = {"registrations": [], "authorizations": [], "token_requests": [], "refreshes": 0}


async def metadata(_request: Request) -> Response:
    return JSONResponse({
        "issuer": ISSUER, "authorization_endpoint": f"{ISSUER}/authorize", "token_endpoint": f"{ISSUER}/token",
        "registration_endpoint": f"{ISSUER}/register", "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"], "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_post"], "scopes_supported": ["mcp:read"],
        "authorization_response_iss_parameter_supported": True})


async def register(request: Request) -> Response:
    body = await request.json()
    client_id = "client-" + secrets.token_hex(4)
    clients[client_id] = {"client_id": client_id, **body}
    state["registrations"].append(body)
    return JSONResponse({"client_id": client_id, "client_id_issued_at": int(time.time()),
                         **{k: v for k, v in body.items() if k != "client_secret"},
                         "token_endpoint_auth_method": "none"}, status_code=201)


async def authorize(request: Request) -> Response:
    query = dict(request.query_params)
    state["authorizations"].append(query)
    client = clients.get(query.get("client_id", ""))
    if client is None:
        return JSONResponse({"error": "invalid_client"}, status_code=400)
    if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
        return JSONResponse({"error": "invalid_request", "error_description": "PKCE required"}, status_code=400)
    code = secrets.token_urlsafe(16)
    codes[code] = {**query}
    target = query["redirect_uri"] + "?" + urlencode({"code": code, "state": query.get("state", ""),
                                                      "iss": ISSUER})
    return RedirectResponse(target, status_code=302)


def issue(client_id: str, scope: str) -> dict[str, Any]:
    access, refresh = "at-" + secrets.token_hex(8), "rt-" + secrets.token_hex(8)
    tokens[access] = {"client_id": client_id, "scope": scope, "expires_at": time.time() + options.token_lifetime}
    refresh_tokens[refresh] = {"client_id": client_id, "scope": scope}
    return {"access_token": access, "token_type": "Bearer", "expires_in": options.token_lifetime,
            "refresh_token": refresh, "scope": scope}


async def token(request: Request) -> Response:
    form = dict(await request.form())
    state["token_requests"].append({k: v for k, v in form.items() if k not in ("code_verifier",)})
    client = clients.get(form.get("client_id", ""))
    if client is None:
        return JSONResponse({"error": "invalid_client"}, status_code=401)
    if client.get("client_secret") and form.get("client_secret") != client["client_secret"]:
        return JSONResponse({"error": "invalid_client", "error_description": "bad secret"}, status_code=401)
    if form.get("grant_type") == "authorization_code":
        grant = codes.pop(form.get("code", ""), None)
        if grant is None:
            return JSONResponse({"error": "invalid_grant"}, status_code=400)
        digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
        if base64.urlsafe_b64encode(digest).decode().rstrip("=") != grant["code_challenge"]:
            return JSONResponse({"error": "invalid_grant", "error_description": "PKCE mismatch"}, status_code=400)
        return JSONResponse(issue(client["client_id"], grant.get("scope") or "mcp:read"))
    if form.get("grant_type") == "refresh_token":
        known = refresh_tokens.pop(form.get("refresh_token", ""), None)
        if known is None:
            return JSONResponse({"error": "invalid_grant"}, status_code=400)
        state["refreshes"] += 1
        return JSONResponse(issue(known["client_id"], known["scope"]))
    return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)


async def show_state(_request: Request) -> Response:
    return JSONResponse(state)


authorization_server = Starlette(routes=[
    Route("/.well-known/oauth-authorization-server", metadata),
    Route("/register", register, methods=["POST"]),
    Route("/authorize", authorize),
    Route("/token", token, methods=["POST"]),
    Route("/_state", show_state),
])


class Verifier:
    async def verify_token(self, value: str) -> AccessToken | None:
        known = tokens.get(value)
        if known is None or known["expires_at"] < time.time():
            return None
        return AccessToken(token=value, client_id=known["client_id"], scopes=known["scope"].split(),
                           expires_at=int(known["expires_at"]))


advertised = "http://127.0.0.1:9/nowhere" if options.wrong_issuer else ISSUER
mcp = MCPServer("secure", instructions="A server that needs sign-in.", token_verifier=Verifier(),
                auth=AuthSettings(issuer_url=advertised, resource_server_url=RESOURCE, required_scopes=["mcp:read"]))


@mcp.tool(description="Say which OAuth client the call was made with.")
def whoami(ctx: Context) -> str:
    return "signed in"


async def main() -> None:
    servers = [uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
               for app, port in ((authorization_server, AS_PORT), (mcp.streamable_http_app(), MCP_PORT))]
    tasks = [asyncio.ensure_future(server.serve()) for server in servers]
    while not all(server.started for server in servers):
        await asyncio.sleep(0.05)
    Path(options.port_file).write_text(json.dumps({"as": ISSUER, "mcp": RESOURCE}))
    await asyncio.gather(*tasks)


asyncio.run(main())
