"""TelegramSender through real HTTP against the fake Bot API: pacing, 429s, refusals, the token.

The fake and the sender share one ManualClock: the sender's pacing and 429 waits advance it, the
fake's flood control reads it, so nothing here sleeps.
"""

from __future__ import annotations

import io
import logging

import pytest
from telegram_fixtures import GROUP, PRIVATE, TOKEN, closed_port_url

from monitor.notify.telegram import (
    PermanentChatError,
    PermanentMessageError,
    PrintingSender,
    RateLimited,
    RetryableDeliveryError,
    TelegramSender,
    html_to_text,
)
from sheet_sandbox.http import HTTPServerThread, Request, Response


def sender_for(server, http, clock, chat_id=PRIVATE, token=TOKEN, **kwargs) -> TelegramSender:
    return TelegramSender(token, chat_id, server.base_url, client=http, clock=clock, **kwargs)


# ---- rate limits and pacing ----------------------------------------------------------------------


def test_a_forced_429_is_waited_out_on_the_clock(server, http, clock, fake):
    fake.force_rate_limit(count=2, retry_after=7, chat_id=PRIVATE)
    started = clock.monotonic()
    sent = sender_for(server, http, clock).send("hello")
    assert sent.chat_id == str(PRIVATE) and sent.message_id is not None
    assert fake.stats()["sends"] == {"429": 2, "200": 1}
    assert clock.monotonic() - started == pytest.approx(14)  # two waits of 7 s, nothing more


def test_a_rate_limit_longer_than_the_sender_may_wait_is_not_waited(server, http, clock, fake):
    fake.force_rate_limit(count=1, retry_after=61, chat_id=PRIVATE)
    started = clock.monotonic()
    with pytest.raises(RateLimited) as caught:
        sender_for(server, http, clock, max_wait=60).send("hello")
    assert isinstance(caught.value, RetryableDeliveryError) and not caught.value.permanent
    assert caught.value.status == 429 and caught.value.retry_after == 61
    assert clock.monotonic() == started and fake.stats()["sends"] == {"429": 1}


def test_a_rate_limit_of_exactly_the_longest_wait_is_waited(server, http, clock, fake):
    fake.force_rate_limit(count=1, retry_after=60, chat_id=PRIVATE)
    started = clock.monotonic()
    sender_for(server, http, clock, max_wait=60).send("hello")
    assert clock.monotonic() - started == pytest.approx(60)


def test_rate_limits_are_retried_at_most_max_rate_limit_retries_times(server, http, clock, fake):
    fake.force_rate_limit(count=10, retry_after=2, chat_id=PRIVATE)
    started = clock.monotonic()
    with pytest.raises(RateLimited):
        sender_for(server, http, clock, max_rate_limit_retries=3).send("hello")
    assert fake.stats()["sends"] == {"429": 4}  # the first try and three retries
    assert clock.monotonic() - started == pytest.approx(6)  # three waits, none after the last


def test_one_message_a_second_to_a_private_chat(server, http, clock, fake):
    sender = sender_for(server, http, clock)
    started = clock.monotonic()
    for n in range(5):
        sender.send(f"m{n}")
    assert fake.stats()["sends"] == {"200": 5}
    assert clock.monotonic() - started == pytest.approx(4.0)


def test_twenty_messages_a_minute_to_a_group(server, http, clock, fake):
    sender = sender_for(server, http, clock, chat_id=GROUP)
    started = clock.monotonic()
    for n in range(21):
        sender.send(f"m{n}")
    assert fake.stats()["sends"] == {"200": 21}
    assert clock.monotonic() - started == pytest.approx(60)  # the 21st waits for the first to age out


def test_a_pacing_wait_longer_than_the_sender_may_wait_is_retryable(server, http, clock, fake):
    sender = sender_for(server, http, clock, chat_id=GROUP, max_wait=30)
    for n in range(20):
        sender.send(f"m{n}")
    with pytest.raises(RetryableDeliveryError, match="paced"):
        sender.send("one too many")


# ---- refusals ------------------------------------------------------------------------------------


@pytest.mark.parametrize("setup", ["unknown_token", "chat_not_found", "blocked"])
def test_bad_token_unknown_chat_and_a_blocked_bot_are_permanent_for_the_chat(
    server, http, clock, fake, setup
):
    if setup == "unknown_token":
        sender = sender_for(server, http, clock, token="999:not-registered")
    elif setup == "chat_not_found":
        sender = sender_for(server, http, clock, chat_id=777)
    else:
        fake.block_chat(PRIVATE)
        sender = sender_for(server, http, clock)
    with pytest.raises(PermanentChatError) as caught:
        sender.send("hello")
    assert caught.value.permanent and caught.value.scope == "chat"


def test_a_message_telegram_cannot_parse_is_permanent_for_that_message_only(server, http, clock, fake):
    with pytest.raises(PermanentMessageError) as caught:
        sender_for(server, http, clock).send("<i>oops")
    assert caught.value.scope == "message" and "parse entities" in caught.value.description


def test_telegram_unreachable_is_retryable(http, clock):
    sender = TelegramSender(TOKEN, PRIVATE, closed_port_url(), client=http, clock=clock)
    with pytest.raises(RetryableDeliveryError) as caught:
        sender.send("hello")
    assert not caught.value.permanent
    # not chained: httpx's exception holds the request, whose URL holds the token
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_a_server_error_without_a_telegram_answer_is_retryable(http, clock):
    with (
        HTTPServerThread(lambda request: Response(502, b"<html>bad gateway</html>")) as proxy,
        pytest.raises(RetryableDeliveryError, match="HTTP 502") as caught,
    ):
        sender_for(proxy, http, clock).send("x")
    assert caught.value.status == 502


def test_a_migrated_group_is_followed_and_the_new_id_reported(server, http, clock, fake):
    new_id = fake.migrate_chat(GROUP)
    sender = sender_for(server, http, clock, chat_id=GROUP)
    assert sender.send("first").chat_id == str(new_id)
    assert sender.chat_id == str(new_id)
    assert [m.text for m in fake.messages(new_id)] == ["first"]


def test_messages_go_to_the_configured_topic(server, http, clock, fake):
    fake.add_chat(-1001234567890, title="Ops", topics=[7])
    sender = sender_for(server, http, clock, chat_id=-1001234567890, thread_id=7)
    sender.send("in the topic")
    assert fake.messages(-1001234567890)[0].message_thread_id == 7


# ---- the token stays secret ----------------------------------------------------------------------


def test_the_token_never_appears_in_logs_errors_or_reprs(server, http, clock, fake, caplog):
    caplog.set_level(logging.DEBUG)
    down = TelegramSender(TOKEN, PRIVATE, closed_port_url(), clock=clock)  # its own httpx client
    up = sender_for(server, http, clock)
    fake.force_rate_limit(count=1, retry_after=2)
    up.send("rate limited once, then sent")
    errors = []
    fake.block_chat(PRIVATE)
    for bad in (up, sender_for(server, http, clock, chat_id=777), down):
        try:
            bad.send("x")
        except Exception as error:  # noqa: BLE001 - every error's text is checked below
            errors.append(error)
    down.close()
    assert len(errors) == 3
    # httpx and httpcore would log every URL at DEBUG/INFO (see the next tests); the sender mutes them.
    assert not any(r.name.startswith(("httpx", "httpcore")) for r in caplog.records)
    secret = TOKEN.split(":")[1]
    texts = [caplog.text, repr(up), repr(down), *map(str, errors), *(repr(vars(e)) for e in errors)]
    assert all(secret not in text for text in texts)


def test_an_answer_echoing_the_token_is_scrubbed_and_a_malformed_token_is_not_quoted(http, clock):
    def echo(request: Request) -> Response:  # a misbehaving proxy that repeats the URL back
        body = {"ok": False, "error_code": 400, "description": f"Bad Request: {request.raw_path}"}
        return Response.json(400, body)

    with HTTPServerThread(echo) as proxy, pytest.raises(PermanentMessageError) as caught:
        sender_for(proxy, http, clock).send("x")
    assert "/bot[token]/sendMessage" in str(caught.value)
    assert TOKEN not in str(caught.value)
    broken = TOKEN + "\n"  # e.g. read from a file with its newline
    with pytest.raises(PermanentChatError) as caught:
        TelegramSender(broken, PRIVATE, "http://127.0.0.1:9", client=http, clock=clock).send("x")
    assert TOKEN not in str(caught.value) and "bad Telegram URL" in str(caught.value)


def test_httpx_would_have_logged_the_token_without_the_sender(server, http, caplog):
    """The check above can fail: httpx's INFO line carries the URL and so the token."""
    caplog.set_level(logging.INFO, logger="httpx")  # as a host app's logging setup might
    http.post(f"{server.base_url}/bot{TOKEN}/getMe")
    assert TOKEN in caplog.text


# ---- without Telegram ----------------------------------------------------------------------------


def test_the_printer_writes_readable_text_and_never_fails():
    stream = io.StringIO()
    html = '<b>sheet-monitor: 1 failing</b>\n🔴 <a href="https://e.com/a">R &lt;b&gt; &amp; D</a> is failing'
    sent = PrintingSender(stream).send(html)
    assert sent.chat_id == "stdout"
    assert stream.getvalue() == "sheet-monitor: 1 failing\n🔴 R <b> & D (https://e.com/a) is failing\n\n"
    assert html_to_text("&lt;b&gt;") == "<b>"
