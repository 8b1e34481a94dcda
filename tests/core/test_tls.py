"""Deferred-trust TLS contexts: same settings and CA store as the eager ones, loaded at the first wrap."""

from __future__ import annotations

import ssl

import pytest

from pi_core.llm.tls import DeferredTrustContext, default_context, httpx_default_context


def _wrap(context: ssl.SSLContext) -> None:
    context.wrap_bio(ssl.MemoryBIO(), ssl.MemoryBIO(), server_hostname="example.com")


def _ca_der(context: ssl.SSLContext) -> list[bytes]:
    return sorted(context.get_ca_certs(binary_form=True))


def test_default_context_matches_create_default_context_after_first_wrap() -> None:
    eager = ssl.create_default_context()
    lazy = default_context()
    assert isinstance(lazy, DeferredTrustContext)
    assert lazy.verify_mode == ssl.CERT_REQUIRED and lazy.check_hostname
    assert lazy.cert_store_stats()["x509_ca"] == 0  # nothing loaded yet
    _wrap(lazy)
    assert lazy.cert_store_stats() == eager.cert_store_stats()
    assert _ca_der(lazy) == _ca_der(eager)
    assert lazy.options == eager.options and lazy.minimum_version == eager.minimum_version


def test_httpx_default_context_matches_httpx2_after_first_wrap() -> None:
    httpx2 = pytest.importorskip("httpx2")
    eager = httpx2.create_ssl_context()
    lazy = httpx_default_context()
    _wrap(lazy)
    assert lazy.verify_mode == eager.verify_mode and lazy.check_hostname == eager.check_hostname
    assert lazy.cert_store_stats() == eager.cert_store_stats()
    assert _ca_der(lazy) == _ca_der(eager)


def test_load_runs_once_and_a_failed_load_is_retried() -> None:
    calls: list[int] = []

    def load(context: ssl.SSLContext) -> None:
        calls.append(1)
        if len(calls) == 1:
            raise ssl.SSLError("bundle unreadable")

    context = DeferredTrustContext.create(load)
    with pytest.raises(ssl.SSLError, match="bundle unreadable"):
        _wrap(context)
    _wrap(context)
    _wrap(context)
    assert len(calls) == 2


@pytest.mark.parametrize("variable", ["SSL_CERT_FILE", "SSL_CERT_DIR", None])
def test_httpx_default_context_follows_the_ssl_cert_environment(monkeypatch: pytest.MonkeyPatch,
                                                                variable: str | None) -> None:
    httpx2 = pytest.importorskip("httpx2")
    paths = ssl.get_default_verify_paths()
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    if variable == "SSL_CERT_FILE":
        if not paths.cafile:
            pytest.skip("no default CA file on this system")
        monkeypatch.setenv(variable, paths.cafile)
    elif variable == "SSL_CERT_DIR":
        if not paths.capath:
            pytest.skip("no default CA directory on this system")
        monkeypatch.setenv(variable, paths.capath)
    eager = httpx2.create_ssl_context()
    lazy = httpx_default_context()
    _wrap(lazy)
    assert lazy.cert_store_stats() == eager.cert_store_stats()
    assert _ca_der(lazy) == _ca_der(eager)
