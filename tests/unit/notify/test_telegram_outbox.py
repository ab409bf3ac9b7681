"""The outbox through real HTTP against the fake Bot API: order, budgets, halts, drops, migrations.

Every outbox a test keeps goes through :func:`stored` (the state file's encoding) where a next run
would read it back.
"""

from __future__ import annotations

import io
import logging
from datetime import timedelta

from notify_helpers import stored
from pydantic import SecretStr
from telegram_fixtures import GROUP, PRIVATE, TOKEN

from monitor.notify.documents import MAX_PENDING, Outbox
from monitor.notify.messages import Message
from monitor.notify.outbox import HALT_AFTER_ALIKE, chat_id_for, deliver, enqueue, sender_for
from monitor.notify.telegram import PrintingSender, TelegramSender
from sheet_sandbox.http import HTTPServerThread, Response


def telegram(server, http, clock, chat_id=PRIVATE, **kwargs) -> TelegramSender:
    return TelegramSender(TOKEN, chat_id, server.base_url, client=http, clock=clock, **kwargs)


def outbox_of(clock, *texts: str) -> Outbox:
    outbox, added = enqueue(Outbox(), [Message(f"k{n}", text) for n, text in enumerate(texts)], clock.now())
    assert added == len(texts)
    return outbox


# ---- enqueueing ----------------------------------------------------------------------------------


def test_a_message_pending_or_delivered_is_not_enqueued_again(clock):
    outbox = outbox_of(clock, "a", "b")
    same, added = enqueue(outbox, [Message("k1", "b"), Message("k1", "b again")], clock.now())
    assert same is outbox and added == 0
    outbox, _ = deliver(outbox, PrintingSender(io.StringIO()), clock.now())
    assert outbox.pending == () and outbox.sent_keys == ("k0", "k1")
    assert enqueue(stored(outbox), [Message("k0", "a")], clock.now()).added == 0


def test_a_full_outbox_drops_the_oldest_and_counts_them(clock, caplog):
    caplog.set_level(logging.WARNING)
    outbox = outbox_of(clock, *(f"m{n}" for n in range(MAX_PENDING)))
    outbox, added = enqueue(outbox, [Message("new1", "n1"), Message("new2", "n2")], clock.now())
    assert added == 2 and len(outbox.pending) == MAX_PENDING and outbox.overflowed == 2
    assert [entry.key for entry in outbox.pending[:1]] == ["k2"] and outbox.pending[-1].key == "new2"
    assert [r.getMessage() for r in caplog.records] == ["outbox_overflowed"]


# ---- delivering ----------------------------------------------------------------------------------


def test_a_forced_429_is_waited_out_and_nothing_is_lost(server, http, clock, fake):
    fake.force_rate_limit(count=2, retry_after=7, chat_id=PRIVATE)
    started = clock.monotonic()
    outbox, results = deliver(
        outbox_of(clock, "message 0", "message 1", "message 2"), telegram(server, http, clock), clock.now()
    )
    assert [r.outcome for r in results] == ["sent", "sent", "sent"] and outbox.pending == ()
    assert [m.text for m in fake.messages(PRIVATE)] == ["message 0", "message 1", "message 2"]
    assert fake.stats()["sends"] == {"429": 2, "200": 3}
    assert clock.monotonic() - started >= 14 + 2  # two waits of 7 s, then 1 s between messages


def test_a_rate_limit_longer_than_the_sender_may_wait_keeps_the_message(server, http, clock, fake):
    fake.force_rate_limit(count=1, retry_after=600, chat_id=PRIVATE)
    outbox, [result] = deliver(
        outbox_of(clock, "hello"), telegram(server, http, clock, max_wait=60), clock.now()
    )
    assert result.outcome == "kept" and result.error.status == 429 and result.error.error == "RateLimited"
    outbox = stored(outbox)
    assert outbox.pending[0].attempts == 1 and outbox.pending[0].last_error.at == clock.now()
    assert deliver(outbox, telegram(server, http, clock), clock.now()).results[0].outcome == "sent"


def test_a_backlog_drains_oldest_first_within_the_send_budget_of_each_run(server, http, clock, fake):
    outbox = outbox_of(clock, *(f"m{n}" for n in range(45)))
    for sent in (20, 20, 5):  # three runs
        outbox, results = deliver(
            outbox, telegram(server, http, clock, chat_id=GROUP), clock.now(), budget=20
        )
        assert len(results) == sent
        outbox = stored(outbox)
        clock.advance(300)
    assert [m.text for m in fake.messages(GROUP)] == [f"m{n}" for n in range(45)]
    assert fake.stats()["sends"] == {"200": 45}


def test_the_checkpoint_sees_the_outbox_after_each_attempt(clock):
    seen: list[tuple[int, tuple[str, ...]]] = []

    def checkpoint(outbox: Outbox) -> None:
        seen.append((len(outbox.pending), outbox.sent_keys, outbox.sending))

    final, _ = deliver(
        outbox_of(clock, "a", "b", "c"), PrintingSender(io.StringIO()), clock.now(), 2, checkpoint
    )
    # Each message is marked as being sent before its request, and recorded after it; the budget
    # of two stopped the pass.
    assert seen == [(3, (), "k0"), (2, ("k0",), None), (2, ("k0",), "k1"), (1, ("k0", "k1"), None)]
    assert final.sent_keys == ("k0", "k1") and [entry.key for entry in final.pending] == ["k2"]


def test_a_blocked_bot_is_one_clear_error_not_a_storm_and_the_messages_wait(
    server, http, clock, fake, caplog
):
    caplog.set_level(logging.INFO)
    fake.block_chat(PRIVATE)
    outbox = outbox_of(clock, *(f"m{n}" for n in range(5)))
    for _ in range(3):  # three runs
        outbox, [result] = deliver(outbox, telegram(server, http, clock), clock.now())
        outbox = stored(outbox)
        assert result.outcome == "kept" and result.error.scope == "chat"
        clock.advance(300)
    assert fake.stats()["sends"] == {"403": 3}  # one request per run
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert [r.getMessage() for r in errors] == ["telegram_delivery_halted"]
    assert "blocked" in outbox.halted.description
    assert [entry.text for entry in outbox.pending] == ["m0\n\nm1\n\nm2\n\nm3\n\nm4"]  # kept, as one
    assert set(outbox.sent_keys) == {f"k{n}" for n in range(5)}  # composed again, recognised as done
    assert outbox.halted.at == clock.now() - timedelta(seconds=900) and outbox.halted.chat_id == str(PRIVATE)
    fake.block_chat(PRIVATE, blocked=False)
    outbox, [result] = deliver(outbox, telegram(server, http, clock), clock.now())
    assert result.outcome == "sent" and outbox.halted is None and outbox.pending == ()
    [message] = fake.messages(PRIVATE)
    assert message.plain_text.startswith("📵 Held back since") and message.plain_text.endswith("m3\n\nm4")
    assert "telegram_delivery_resumed" in [r.getMessage() for r in caplog.records]


def test_a_message_telegram_cannot_parse_is_dropped_and_the_next_goes(server, http, clock, fake):
    outbox, _ = enqueue(Outbox(), [Message("bad", "<b>never closed"), Message("good", "fine")], clock.now())
    outbox, results = deliver(outbox, telegram(server, http, clock), clock.now())
    assert [r.outcome for r in results] == ["dropped", "sent"]
    [dropped] = stored(outbox).dropped
    assert dropped.key == "bad" and "parse entities" in dropped.error.description
    assert dropped.dropped_at == clock.now() and dropped.error.scope == "message"


def test_a_migrated_group_is_followed_and_remembered(server, http, clock, fake):
    new_id = fake.migrate_chat(GROUP)
    outbox, results = deliver(
        outbox_of(clock, "first", "second"), telegram(server, http, clock, chat_id=GROUP), clock.now()
    )
    assert [r.outcome for r in results] == ["sent", "sent"]
    assert [m.text for m in fake.messages(new_id)] == ["first", "second"]
    outbox = stored(outbox)
    assert outbox.migrations == {str(GROUP): str(new_id)}
    assert chat_id_for(outbox, GROUP) == str(new_id)
    assert chat_id_for(outbox, -5555) == "-5555"  # the config now names another chat
    migrated_again = Outbox(migrations={**outbox.migrations, str(new_id): "-100999"})
    assert chat_id_for(migrated_again, GROUP) == "-100999"
    assert chat_id_for(Outbox(migrations={"1": "2", "2": "1"}), 1) in {"1", "2"}  # a cycle ends


def test_the_config_decides_between_telegram_and_the_printer(server, http, clock, fake):
    from monitor.config import TelegramConfig

    assert isinstance(sender_for(TelegramConfig(), Outbox(), io.StringIO()), PrintingSender)
    configured = TelegramConfig(chat_id=str(GROUP), api_base=server.base_url).model_copy(
        update={"bot_token": SecretStr(TOKEN)}
    )
    outbox = Outbox(migrations={str(GROUP): str(PRIVATE)})
    sender_for(configured, outbox, io.StringIO(), clock=clock, client=http).send("hi")
    assert [m.text for m in fake.messages(PRIVATE)] == ["hi"]


# ---- a channel that refuses everything ------------------------------------------------------------


def refusing_everything(status: int, body: str, content_type: str = "application/json") -> HTTPServerThread:
    """Something at api_base (a proxy, a wrong server) that answers ``status`` to every request."""
    return HTTPServerThread(lambda request: Response(status, body.encode(), content_type))


PROXY_400 = '{"ok":false,"error_code":400,"description":"Bad Request: wrong parameter action in request"}'


def test_a_channel_refusing_every_message_alike_halts_and_keeps_them_all(server, http, clock, fake, caplog):
    caplog.set_level(logging.INFO)
    outbox = outbox_of(clock, "m0", "m1", "m2", "m3")
    with refusing_everything(400, PROXY_400) as proxy:
        for _ in range(2):  # two runs: three requests each, never a message lost
            outbox, results = deliver(outbox, TelegramSender(TOKEN, PRIVATE, proxy.base_url, client=http,
                                                             clock=clock), clock.now())
            outbox = stored(outbox)
            assert [r.outcome for r in results] == ["kept"] * HALT_AFTER_ALIKE
    assert outbox.dropped == () and [e.key for e in outbox.pending] == ["k0", "k1", "k2", "k3"]
    assert outbox.halted.status == 400 and "wrong parameter" in outbox.halted.description
    assert outbox.halted.chat_id == str(PRIVATE)
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == ["telegram_delivery_halted"]  # said once, not once per message or per run
    outbox, results = deliver(outbox, telegram(server, http, clock), clock.now())  # the channel is fixed
    assert [r.outcome for r in results] == ["sent"] * 4 and outbox.halted is None
    first, *others = [m.text for m in fake.messages(PRIVATE)]
    assert first.startswith("📵 <i>Held back since") and first.endswith("</i>\n\nm0")  # why it came late
    assert others == ["m1", "m2", "m3"]  # refused each for itself: sent each as itself


def test_a_proxy_page_refusing_a_send_halts_at_once(http, clock):
    with refusing_everything(400, "<html><body>400 Bad Request</body></html>", "text/html") as proxy:
        outbox, [result] = deliver(outbox_of(clock, "m0", "m1"),
                                   TelegramSender(TOKEN, PRIVATE, proxy.base_url, client=http, clock=clock),
                                   clock.now())
    assert result.outcome == "kept" and result.error.scope == "chat"
    assert "without a Bot API answer" in stored(outbox).halted.description and len(outbox.pending) == 2


def test_a_lone_refused_message_waits_for_the_next_to_tell_whose_fault_it_was(server, http, clock, fake):
    outbox = outbox_of(clock, "<b>never closed")
    outbox, [result] = deliver(outbox, telegram(server, http, clock), clock.now())
    assert result.outcome == "kept" and stored(outbox).dropped == () and outbox.halted is None
    outbox = enqueue(outbox, [Message("later", "fine")], clock.now()).outbox
    outbox, results = deliver(outbox, telegram(server, http, clock), clock.now())
    assert [(r.key, r.outcome) for r in results] == [("k0", "dropped"), ("later", "sent")]
