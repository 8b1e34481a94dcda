"""web_fetch through the pi testing kit: arguments validated and errors worded exactly as the model sees them."""

from __future__ import annotations

from pi_web_tools import web_fetch

from pi_core.testing.fake_provider import reply
from pi_core.testing.kit import result_text


def test_html_page_becomes_plain_text(pi_plugin, pi_run_tool, web: str) -> None:
    loaded = pi_plugin(web_fetch)
    result, is_error = pi_run_tool(loaded, "web_fetch", {"url": f"{web}/page.html"})
    assert not is_error
    text = result_text(result)
    assert "Release notes" in text and "Version 2 & more" in text
    assert "secret" not in text and "p{}" not in text
    assert result.details["status"] == 200 and result.details["contentType"] == "text/html"


def test_raw_keeps_the_markup(pi_plugin, pi_run_tool, web: str) -> None:
    result, is_error = pi_run_tool(pi_plugin(web_fetch), "web_fetch", {"url": f"{web}/page.html", "raw": True})
    assert not is_error and "<h1>Release notes</h1>" in result_text(result)


def test_redirects_are_followed_and_charset_honoured(pi_plugin, pi_run_tool, web: str) -> None:
    loaded = pi_plugin(web_fetch)
    result, _ = pi_run_tool(loaded, "web_fetch", {"url": f"{web}/moved"})
    assert result_text(result) == "line one\nline two\n"
    assert result.details["url"].endswith("/notes.txt")
    result, _ = pi_run_tool(loaded, "web_fetch", {"url": f"{web}/latin1.txt"})
    assert result_text(result) == "café"


def test_long_documents_are_truncated_with_a_notice(pi_plugin, pi_run_tool, web: str) -> None:
    result, is_error = pi_run_tool(pi_plugin(web_fetch), "web_fetch", {"url": f"{web}/big.txt"})
    text = result_text(result)
    assert not is_error
    assert text.startswith("row 0\nrow 1\n") and "row 4999" not in text
    assert "[Showing the first 2000 lines" in text and "of 5001 lines" in text
    assert result.details["truncation"]["truncatedBy"] == "lines"


def test_http_errors_reach_the_model_as_tool_errors(pi_plugin, pi_run_tool, web: str) -> None:
    result, is_error = pi_run_tool(pi_plugin(web_fetch), "web_fetch", {"url": f"{web}/missing"})
    assert is_error
    assert result_text(result) == f"HTTP 404 Not Found fetching {web}/missing"


def test_binary_content_is_refused(pi_plugin, pi_run_tool, web: str) -> None:
    result, is_error = pi_run_tool(pi_plugin(web_fetch), "web_fetch", {"url": f"{web}/image.png"})
    assert is_error and "returned image/png, not text" in result_text(result)


def test_timeouts_are_reported(pi_plugin, pi_run_tool, web: str) -> None:
    result, is_error = pi_run_tool(pi_plugin(web_fetch), "web_fetch", {"url": f"{web}/slow", "timeout": 0.2})
    assert is_error
    assert result_text(result) == f"Timed out after 0.2s fetching {web}/slow; retry, or pass a larger timeout"


def test_bad_urls_and_arguments(pi_plugin, pi_run_tool, web: str) -> None:
    loaded = pi_plugin(web_fetch)
    result, is_error = pi_run_tool(loaded, "web_fetch", {"url": "file:///etc/passwd"})
    assert is_error and "only http:// and https://" in result_text(result)
    result, is_error = pi_run_tool(loaded, "web_fetch", {"url": "http://127.0.0.1:1/"})
    assert is_error and result_text(result).startswith("Could not connect to 127.0.0.1:1")
    result, is_error = pi_run_tool(loaded, "web_fetch", {})
    assert is_error and result_text(result).startswith('Validation failed for tool "web_fetch"')


def test_the_model_is_offered_web_fetch_and_reads_the_page(pi_plugin, pi_conversation, web: str) -> None:
    convo = pi_conversation(pi_plugin(web_fetch), [
        reply(tool_calls=[("web_fetch", {"url": f"{web}/notes.txt"})]),
        reply("The notes have two lines."),
    ], "what do the notes say?")
    assert convo.sent_tool_names() == ["web_fetch"]
    second_request = convo.provider.contexts[1]
    assert second_request.messages[-1].content[0].text == "line one\nline two\n"
