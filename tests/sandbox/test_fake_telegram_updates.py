"""getUpdates, long polling and webhooks on the fake Telegram, through real HTTP.

The fake runs on a ManualClock: a long poll is ended by moving the clock (or by an update), never
by waiting; the real waits here are for another thread's request to reach the fake.
"""

from __future__ import annotations

import pytest
from fake_telegram_helpers import (
    GROUP,
    IVAN,
    PRIVATE,
    Poll,
    failure,
    http_client,
    keyboard,
    make_fake,
    wait_until,
)

from sheet_sandbox.http import HTTPServerThread
from sheet_sandbox.telegram import FakeTelegram

TERMINATED = ("Conflict: terminated by other getUpdates request; make sure that only one bot "
              "instance is running")
WEBHOOK_ACTIVE = ("Conflict: can't use getUpdates method while webhook is active; use "
                  "deleteWebhook to delete the webhook first")


@pytest.fixture
def fake(served_fake):
    return served_fake


def poll(http, token: str, **params) -> Poll:
    return Poll(http, token, **params)


def ids(answer: list[dict]) -> list[int]:
    return [update["update_id"] for update in answer]


def written(fake, count: int, clock=None) -> None:
    for n in range(count):
        fake.write(PRIVATE, f"message {n}")


# ---- reading and confirming ----------------------------------------------------------------------


def test_updates_come_in_order_and_an_offset_past_one_confirms_it(bot, fake, clock):
    written(fake, 3)
    first = bot.result("getUpdates")
    assert [u["message"]["text"] for u in first] == ["message 0", "message 1", "message 2"]
    assert ids(first) == list(range(ids(first)[0], ids(first)[0] + 3))  # one by one, upwards
    clock.advance(4)  # past the server's guard against repeating an offset
    assert ids(bot.result("getUpdates", offset=ids(first)[1])) == ids(first)[1:]
    assert [u.state for u in fake.updates()] == ["confirmed", "delivered", "delivered"]
    assert fake.pending_updates() == 2
    clock.advance(4)
    assert bot.result("getUpdates", offset=ids(first)[2] + 1) == []
    assert fake.pending_updates() == 0


def test_update_ids_start_anywhere_and_never_go_back(bot, fake, clock):
    fake.write(PRIVATE, "one")
    [first] = bot.result("getUpdates")
    assert first["update_id"] > 2_000_000  # a client must not expect ids from 1
    fake.reset()
    fake.write(PRIVATE, "after a reset")
    clock.advance(4)
    assert ids(bot.result("getUpdates"))[0] == first["update_id"] + 1


@pytest.mark.parametrize(("limit", "count"), [(2, 2), (0, 1), (500, 5), ("abc", 1), (-3, 1)])
def test_limit_is_clamped_to_1_100_not_refused(bot, fake, limit, count):
    written(fake, 5)
    assert len(bot.result("getUpdates", limit=limit)) == count


def test_a_negative_offset_keeps_only_the_last_updates(bot, fake, clock):
    written(fake, 4)
    assert [u["message"]["text"] for u in bot.result("getUpdates", offset=-2)] == ["message 2",
                                                                                    "message 3"]
    assert [u.state for u in fake.updates()][:2] == ["dropped", "dropped"]
    clock.advance(4)
    assert len(bot.result("getUpdates")) == 2


def test_an_offset_far_ahead_is_ignored_and_one_just_ahead_confirms_all(bot, fake, clock):
    written(fake, 2)
    next_id = fake.updates()[-1].update_id + 1
    assert len(bot.result("getUpdates", offset=next_id + 11)) == 2  # beyond the sane range: head
    clock.advance(4)
    assert bot.result("getUpdates", offset=next_id + 10) == []
    assert fake.pending_updates() == 0


def test_allowed_updates_is_remembered_until_changed(bot, fake, control, clock):
    sent = bot.result("sendMessage", chat_id=PRIVATE, text="x", reply_markup=keyboard([("Ack", "a")]))
    assert bot.result("getUpdates", allowed_updates=["callback_query"]) == []
    written_answer = fake.write(PRIVATE, "not wanted")
    assert written_answer["delivered"] is False
    assert written_answer["reason"] == "the bot's allowed_updates leave out message"
    fake.press(PRIVATE, sent["message_id"], callback_data="a")
    clock.advance(4)
    assert [list(u)[1] for u in bot.result("getUpdates")] == ["callback_query"]  # still filtered
    assert bot.result("getWebhookInfo")["allowed_updates"] == ["callback_query"]
    assert [u["state"] for u in control.get("updates")["result"]] == ["not_allowed", "delivered"]
    clock.advance(4)
    bot.result("getUpdates", offset=-1, allowed_updates=[])  # empty: the default kinds again
    fake.write(PRIVATE, "wanted again")
    clock.advance(4)
    assert [u["message"]["text"] for u in bot.result("getUpdates", offset=0)[-1:]] == ["wanted again"]
    assert "allowed_updates" not in bot.result("getWebhookInfo")


def test_allowed_updates_does_not_touch_updates_already_queued(bot, fake):
    fake.write(PRIVATE, "queued before")
    assert [u["message"]["text"] for u in bot.result("getUpdates", allowed_updates=["callback_query"])] \
        == ["queued before"]


def test_messages_are_kept_a_day_and_callback_queries_150_seconds(bot, fake, clock):
    sent = bot.result("sendMessage", chat_id=PRIVATE, text="x", reply_markup=keyboard([("Ack", "a")]))
    fake.write(PRIVATE, "hello")
    fake.press(PRIVATE, sent["message_id"], callback_data="a")
    clock.advance(150)
    assert fake.pending_updates() == 2  # at 150 s the press is still there
    clock.advance(1)
    assert fake.pending_updates() == 1
    assert [u.state for u in fake.updates()] == ["pending", "expired"]
    clock.advance(86400 - 151)
    assert fake.pending_updates() == 1
    clock.advance(1)
    assert bot.result("getUpdates") == [] and fake.updates()[0].state == "expired"


# ---- long polling --------------------------------------------------------------------------------


def test_a_long_poll_answers_as_soon_as_an_update_arrives(telegram_http, bot_token, fake):
    waiting = poll(telegram_http, bot_token, timeout=30)
    assert wait_until(lambda: fake.waiting_polls() == 1)
    fake.write(PRIVATE, "/status")
    answer = waiting.join()
    assert [u["message"]["text"] for u in answer["result"]] == ["/status"]
    assert waiting.seconds < 1.0


def test_a_long_poll_ends_empty_when_the_clock_passes_its_timeout(telegram_http, bot_token, fake, clock):
    waiting = poll(telegram_http, bot_token, timeout=20)
    assert wait_until(lambda: fake.waiting_polls() == 1)
    clock.advance(19.9)
    assert not wait_until(waiting.done, 0.05)  # just before the timeout: still waiting
    clock.advance(0.1)
    assert waiting.join() == {"ok": True, "result": []}


def test_timeout_is_clamped_to_50_seconds(telegram_http, bot_token, fake, clock):
    waiting = poll(telegram_http, bot_token, timeout=3600)
    assert wait_until(lambda: fake.waiting_polls() == 1)
    clock.advance(49.9)
    assert not wait_until(waiting.done, 0.05)
    clock.advance(0.1)
    assert waiting.join()["result"] == []


def test_a_poll_on_a_clock_nobody_moves_gives_up_after_the_real_time_cap(
        telegram_http, telegram_board, bot_token, clock):
    fake = make_fake(clock, bot_token, long_poll_cap=0.1)
    telegram_board.app = fake
    waiting = poll(telegram_http, bot_token, timeout=50)
    assert waiting.join() == {"ok": True, "result": []}
    assert 0.1 <= waiting.seconds < 1.0


def test_a_second_waiting_poll_ends_the_first_with_409(telegram_http, bot_token, fake):
    first = poll(telegram_http, bot_token, timeout=30)
    assert wait_until(lambda: fake.waiting_polls() == 1)
    second = poll(telegram_http, bot_token, timeout=30)
    answer = first.join()
    assert answer == {"ok": False, "error_code": 409, "description": TERMINATED}
    assert not second.done() and fake.waiting_polls() == 1  # the newer one keeps waiting
    fake.write(PRIVATE, "for the second")
    assert [u["message"]["text"] for u in second.join()["result"]] == ["for the second"]


def test_a_conflict_within_3_seconds_of_the_last_is_answered_3_seconds_late(
        telegram_http, bot_token, fake, clock):
    first = poll(telegram_http, bot_token, timeout=30)
    assert wait_until(lambda: fake.waiting_polls() == 1)
    second = poll(telegram_http, bot_token, timeout=30)
    assert first.join()["error_code"] == 409
    third = poll(telegram_http, bot_token, timeout=30)
    assert wait_until(lambda: fake.waiting_polls() == 2)  # the third waits, the second is held
    assert not wait_until(second.done, 0.05)  # ended, but its 409 is held back
    clock.advance(3)
    assert second.join()["description"] == TERMINATED
    assert not third.done() and fake.waiting_polls() == 1


def test_a_poll_that_does_not_wait_leaves_the_waiting_one_alone(telegram_http, bot, bot_token, fake):
    waiting = poll(telegram_http, bot_token, timeout=30)
    assert wait_until(lambda: fake.waiting_polls() == 1)
    assert bot.result("getUpdates", offset=5) == []  # timeout 0: answered at once, no conflict
    fake.write(PRIVATE, "still delivered")
    assert waiting.join()["ok"] is True


def test_repeating_an_offset_within_3_seconds_waits_3_seconds(telegram_http, bot, bot_token, fake, clock):
    assert bot.result("getUpdates", offset=0) == []
    again = poll(telegram_http, bot_token, offset=0)  # timeout 0, but the same offset right away
    assert wait_until(lambda: fake.waiting_polls() == 1)
    clock.advance(3)
    assert again.join() == {"ok": True, "result": []}


def test_repeating_an_offset_within_half_a_second_gets_one_update(bot, fake, clock):
    written(fake, 3)
    assert len(bot.result("getUpdates")) == 3
    clock.advance(0.4)
    assert len(bot.result("getUpdates")) == 1
    clock.advance(3)
    assert len(bot.result("getUpdates")) == 3


def test_stopping_the_server_releases_a_waiting_poll_at_once(bot_token):
    fake = FakeTelegram()  # the real clock: the poll would wait its whole 30 s
    fake.add_token(bot_token)
    server = HTTPServerThread(fake).start()
    with http_client(server.base_url) as http:
        waiting = Poll(http, bot_token, timeout=30)
        assert wait_until(lambda: fake.waiting_polls() == 1)
        server.stop()
        assert waiting.join() == {"ok": True, "result": []} and waiting.seconds < 2


# ---- webhooks ------------------------------------------------------------------------------------


def test_while_a_webhook_is_set_get_updates_is_409_and_updates_wait(bot, fake, clock):
    answer = bot.call("setWebhook", url="https://monitor.example.com/hook").json()
    assert answer == {"ok": True, "result": True, "description": "Webhook was set"}
    fake.write(PRIVATE, "waits for the webhook")
    assert failure(bot.call("getUpdates")) == (409, f"{WEBHOOK_ACTIVE}")
    assert bot.result("getWebhookInfo") == {
        "url": "https://monitor.example.com/hook", "has_custom_certificate": False,
        "pending_update_count": 1, "max_connections": 40, "ip_address": "<unknown>"}
    assert bot.call("deleteWebhook").json()["description"] == "Webhook was deleted"
    assert [u["message"]["text"] for u in bot.result("getUpdates")] == ["waits for the webhook"]
    assert bot.result("getWebhookInfo") == {"url": "", "has_custom_certificate": False,
                                            "pending_update_count": 1}


def test_webhook_409s_come_at_most_every_3_seconds(telegram_http, bot, bot_token, fake, clock):
    fake.set_webhook("https://monitor.example.com/hook")
    assert failure(bot.call("getUpdates"))[0] == 409
    second = poll(telegram_http, bot_token)
    assert wait_until(lambda: fake.waiting_polls() == 1) and not wait_until(second.done, 0.05)
    clock.advance(3)
    assert second.join()["description"] == WEBHOOK_ACTIVE


def test_delete_webhook_can_drop_pending_updates(bot, fake):
    fake.set_webhook("https://monitor.example.com/hook")
    fake.write(PRIVATE, "dropped")
    answer = bot.call("deleteWebhook", drop_pending_updates=True).json()
    assert answer["description"] == "Webhook was deleted"
    assert bot.result("getUpdates") == [] and fake.updates()[0].state == "dropped"
    assert bot.call("deleteWebhook").json()["description"] == "Webhook is already deleted"


def test_setting_a_webhook_ends_a_waiting_poll_with_its_own_409(telegram_http, bot, bot_token, fake):
    waiting = poll(telegram_http, bot_token, timeout=30)
    assert wait_until(lambda: fake.waiting_polls() == 1)
    bot.call("setWebhook", url="https://monitor.example.com/hook")
    assert waiting.join()["description"] == "Conflict: terminated by setWebhook request"


def test_setting_the_same_webhook_again_changes_nothing_and_soon_after_is_429(bot, clock):
    assert bot.call("setWebhook", url="https://a.example.com/h").json()["description"] == \
        "Webhook was set"
    assert failure(bot.call("setWebhook", url="https://a.example.com/h")) == (
        429, "Too Many Requests: retry after 1")
    clock.advance(1)
    assert bot.call("setWebhook", url="https://a.example.com/h").json()["description"] == \
        "Webhook is already set"


@pytest.mark.parametrize(("url", "description"), [
    ("http://monitor.example.com/hook", "bad webhook: An HTTPS URL must be provided for webhook"),
    ("https://monitor.example.com:9000/hook",
     "bad webhook: Webhook can be set up only on ports 80, 88, 443 or 8443"),
    ("https://10.1.2.3/hook", "bad webhook: IP address 10.1.2.3 is reserved"),
    ("https://localhost:8443/hook", "bad webhook: IP address 127.0.0.1 is reserved"),
    ("https://[2001:db8::1]/hook", "bad webhook: IPv6-only addresses are not allowed"),
    ("https:///nohost", "invalid webhook URL specified"),
])
def test_webhook_urls_are_checked_as_telegram_checks_them(bot, fake, url, description):
    assert failure(bot.call("setWebhook", url=url)) == (400, f"Bad Request: {description}")
    assert bot.result("getWebhookInfo")["url"] == "" and bot.call("getUpdates").status_code == 200


def test_the_control_api_sets_and_deletes_a_webhook(bot, control, clock):
    assert control.post("webhook", url="https://monitor.example.com/hook")["result"] == \
        "Webhook was set"
    assert failure(bot.call("getUpdates"))[0] == 409
    assert control.post("webhook", url=None)["result"] == "Webhook was deleted"
    clock.advance(3)
    assert bot.call("getUpdates").status_code == 200
    bad = control.post("webhook", url="http://x.example.com/")
    assert bad == {"ok": False, "error_code": 400, "description":
                   "Bad Request: bad webhook: An HTTPS URL must be provided for webhook"}


def test_the_updates_listing_shows_every_update_with_its_state(bot, control, fake):
    fake.write(PRIVATE, "first", user=None)
    fake.write(GROUP, "plain talk", user=IVAN)  # privacy mode: never reaches the bot
    bot.result("getUpdates")
    listed = control.get("updates")["result"]
    assert [(u["kind"], u["state"], u["deliveries"]) for u in listed] == [("message", "delivered", 1)]
    assert listed[0]["update"]["message"]["text"] == "first"
    assert control.get("updates", bot="nobody") == {
        "ok": False, "error_code": 400,
        "description": f"Bad Request: no bot 'nobody'; registered: {bot.token.split(':')[0]} "
                       "@stock_monitor_bot"}
