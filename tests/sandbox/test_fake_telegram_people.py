"""The people in the fake Telegram's chats, through real HTTP: what they write and press becomes the
updates the bot receives; the bot answers the presses and edits its messages, with Telegram's
refusals; the control API shows all of it."""

from __future__ import annotations

import json

import pytest
from fake_telegram_helpers import (
    BOT_USERNAME,
    FORUM,
    GROUP,
    IVAN,
    PRIVATE,
    SUPERGROUP,
    BotClient,
    failure,
    keyboard,
    make_token,
)

from sheet_sandbox.telegram_commands import bot_commands

TOO_OLD = "Bad Request: query is too old and response timeout expired or query ID is invalid"
NOT_MODIFIED = ("Bad Request: message is not modified: specified new message content and reply "
                "markup are exactly the same as a current content and reply markup of the message")
ALERT = keyboard([("Acknowledge", "ack:7"), ("Mute 1d", "mute:7:1d")], [("Check again", "chk:7")])


@pytest.fixture
def fake(served_fake):
    return served_fake


def alert(bot, chat_id: int = GROUP, **params) -> dict:
    return bot.result("sendMessage", chat_id=chat_id, text="Store 014 is failing",
                      reply_markup=ALERT, **params)


def received(bot) -> list[dict]:
    return bot.result("getUpdates")


# ---- people write --------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "commands"), [
    ("/status", [(0, 7)]),
    ("/mute@stock_monitor_bot Store 014 1d", [(0, 23)]),
    ("please /help", [(7, 5)]),
    ("a/b //x /x/ /x@ab and /ok.", [(22, 3)]),
    ("🙂 /s", [(3, 2)]),  # offsets count UTF-16 units: the emoji is two
])
def test_commands_are_marked_as_telegram_marks_them(text, commands):
    assert [(e["offset"], e["length"]) for e in bot_commands(text)] == commands
    assert all(e["type"] == "bot_command" for e in bot_commands(text))


def test_a_command_in_a_private_chat_reaches_the_bot_with_its_entity(bot, control):
    answer = control.post("write", chat_id=PRIVATE, text="/status")["result"]
    assert answer["delivered"] is True
    [update] = received(bot)
    assert update["update_id"] == answer["update_id"]
    message = update["message"]
    assert message["from"] == {"id": PRIVATE, "is_bot": False, "first_name": "Olga", "username": "olga"}
    assert message["chat"]["type"] == "private" and message["text"] == "/status"
    assert message["entities"] == [{"offset": 0, "length": 7, "type": "bot_command"}]


def test_in_groups_privacy_mode_lets_through_only_commands_for_the_bot_and_replies(bot, fake):
    sent = alert(bot)
    outcomes = {
        text: fake.write(GROUP, text, user=IVAN)["delivered"]
        for text in ("hello all", f"/mute@{BOT_USERNAME} 1d", "/status", "/status@other_bot")
    }
    assert outcomes == {"hello all": False, f"/mute@{BOT_USERNAME} 1d": True, "/status": True,
                        "/status@other_bot": False}
    assert fake.write(GROUP, "thanks", user=IVAN, reply_to_message_id=sent["message_id"])["delivered"]
    refused = fake.write(GROUP, "more talk", user=IVAN)
    assert refused["reason"].startswith("privacy mode") and refused["update_id"] is None
    texts = [u["message"]["text"] for u in received(bot)]
    assert texts == [f"/mute@{BOT_USERNAME} 1d", "/status", "thanks"]


def test_a_plain_command_goes_to_the_last_bot_that_wrote_in_the_group(bot, fake, clock):
    other = make_token()
    fake.add_token(other, username="other_bot")
    assert bot.send(GROUP, "mine").status_code == 200
    clock.advance(1)  # one message a second in a chat
    assert BotClient(bot.http, other).send(GROUP, "theirs").status_code == 200
    assert fake.write(GROUP, "/status", user=IVAN, bot=BOT_USERNAME)["delivered"] is False
    assert fake.write(GROUP, "/status", user=IVAN, bot="other_bot")["delivered"] is True


def test_without_privacy_mode_the_bot_reads_everything(bot, fake, control):
    control.post("tokens", token=bot.token, username=BOT_USERNAME, privacy=False)
    assert bot.result("getMe")["can_read_all_group_messages"] is True
    assert fake.write(GROUP, "hello all", user=IVAN)["delivered"] is True


def test_a_blocked_chat_sends_the_bot_nothing(fake):
    fake.block_chat(GROUP)
    answer = fake.write(GROUP, "/status", user=IVAN)
    assert answer == {**answer, "delivered": False, "update_id": None}
    assert answer["reason"] == ("Forbidden: bot was kicked from the group chat: the bot receives "
                                "nothing from this chat")


def test_topic_messages_carry_their_thread_and_replies_in_general_a_thread_of_their_own(
        bot, fake, clock):
    in_topic = fake.write(FORUM, "/status", user=IVAN, message_thread_id=7)["message"]
    assert in_topic["message_thread_id"] == 7 and in_topic["is_topic_message"] is True
    sent = alert(bot, FORUM)  # in General: no topic
    reply = fake.write(FORUM, "on it", user=IVAN, reply_to_message_id=sent["message_id"])["message"]
    assert reply["message_thread_id"] == sent["message_id"] and "is_topic_message" not in reply
    assert reply["reply_to_message"]["reply_markup"] == ALERT
    # A thread that is not a topic cannot be written to (tdlib/telegram-bot-api#447).
    assert failure(bot.send(FORUM, "x", message_thread_id=reply["message_thread_id"])) == (
        400, "Bad Request: message thread not found")
    clock.advance(1)
    assert bot.send(FORUM, "x", message_thread_id=9).json()["result"]["is_topic_message"] is True


def test_a_reply_in_a_supergroup_without_topics_is_in_the_replied_messages_thread(bot, fake):
    sent = bot.result("sendMessage", chat_id=SUPERGROUP, text="alert")
    reply = fake.write(SUPERGROUP, "ack", user=IVAN, reply_to_message_id=sent["message_id"])
    assert reply["message"]["message_thread_id"] == sent["message_id"]


@pytest.mark.parametrize(("body", "description"), [
    ({"chat_id": -5, "text": "x"}, "no chat -5 in the sandbox; add it with POST /_sandbox/chats"),
    ({"chat_id": PRIVATE, "text": "x", "user": IVAN},
     f"chat {PRIVATE} is a private chat: only its person (id {PRIVATE}) writes or presses there, "
     f"not {IVAN['id']}"),
    ({"chat_id": GROUP, "text": "x", "message_thread_id": 7},
     f"chat {GROUP} has no topics (it is not a forum)"),
    ({"chat_id": FORUM, "text": "x", "message_thread_id": 8},
     f"chat {FORUM} has no topic 8; its topics: [7, 9]"),
    ({"chat_id": GROUP, "text": "x", "reply_to_message_id": 99},
     f"no message 99 in chat {GROUP} to reply to"),
    ({"chat_id": GROUP, "text": "x", "user": {"id": "five"}}, "user.id must be a positive integer"),
    ({"chat_id": GROUP, "text": "x", "colour": "red"},
     "unknown field(s) ['colour']; allowed: ['bot', 'chat_id', 'message_thread_id', "
     "'reply_to_message_id', 'text', 'user']"),
])
def test_writing_what_cannot_be_written_is_refused_with_the_reason(control, body, description):
    assert control.post("write", **body) == {
        "ok": False, "error_code": 400, "description": f"Bad Request: {description}"}


# ---- people press --------------------------------------------------------------------------------


def test_a_press_reaches_the_bot_as_telegram_sends_a_callback_query(bot, control):
    sent = alert(bot, FORUM, message_thread_id=7)
    pressed = control.post("press", chat_id=FORUM, message_id=sent["message_id"],
                           callback_data="mute:7:1d", user=IVAN)["result"]
    [update] = received(bot)
    query = update["callback_query"]
    assert query["id"] == pressed["callback_query_id"] and query["data"] == "mute:7:1d"
    assert query["from"] == {"id": 5001, "is_bot": False, "first_name": "Ivan", "username": "ivan"}
    assert query["message"] == sent  # the whole message, its buttons and topic included
    assert query["chat_instance"].lstrip("-").isdigit()
    again = control.post("press", chat_id=FORUM, message_id=sent["message_id"], text="Acknowledge",
                         user=IVAN)["result"]
    assert again["update"]["callback_query"]["chat_instance"] == query["chat_instance"]


def test_a_button_can_be_named_by_its_position(bot, fake):
    sent = alert(bot)
    answer = fake.press(GROUP, sent["message_id"], position=(1, 0), user=IVAN)
    assert answer["update"]["callback_query"]["data"] == "chk:7"


def test_a_press_on_an_old_message_carries_an_inaccessible_message(bot, fake, clock):
    sent = alert(bot)
    clock.advance(48 * 3600)
    assert fake.press(GROUP, sent["message_id"], callback_data="ack:7", user=IVAN)["update"][
        "callback_query"]["message"] == sent  # at 48 hours still shown
    clock.advance(1)
    shown = fake.press(GROUP, sent["message_id"], callback_data="ack:7", user=IVAN)["update"][
        "callback_query"]["message"]
    assert shown == {"chat": sent["chat"], "message_id": sent["message_id"], "date": 0}


@pytest.mark.parametrize(("press", "description"), [
    ({"callback_data": "nope"}, "has no such button; its buttons: [0, 0] 'Acknowledge' data 'ack:7'"),
    ({}, "say which button with exactly one of callback_data, text or position"),
    ({"callback_data": "ack:7", "text": "Acknowledge"},
     "say which button with exactly one of callback_data, text or position"),
    ({"text": "Site"}, "button 'Site' is a URL button: pressing it opens https://example.com/ and "
                       "makes no callback query"),
])
def test_pressing_what_cannot_be_pressed_is_refused_with_the_buttons_there_are(
        bot, control, press, description):
    markup = {"inline_keyboard": [[{"text": "Acknowledge", "callback_data": "ack:7"},
                                   {"text": "Site", "url": "https://example.com/"}]]}
    sent = bot.result("sendMessage", chat_id=GROUP, text="x", reply_markup=markup)
    answer = control.post("press", chat_id=GROUP, message_id=sent["message_id"], user=IVAN, **press)
    assert answer["ok"] is False and description in answer["description"]


def test_only_a_bots_message_with_buttons_can_be_pressed(bot, fake, control):
    plain = bot.result("sendMessage", chat_id=GROUP, text="no buttons")
    person = fake.write(GROUP, "/status", user=IVAN)["message"]
    for message_id, reason in ((plain["message_id"], "has no inline keyboard (now)"),
                               (person["message_id"], "a person's message, not a bot's,"),
                               (99, "no message 99")):
        answer = control.post("press", chat_id=GROUP, message_id=message_id, callback_data="x")
        assert reason in answer["description"]


def test_a_tampered_client_can_send_any_data_and_replay_old_data(bot, fake, control):
    sent = alert(bot)
    forged = control.post("forge_callback", chat_id=GROUP, message_id=sent["message_id"],
                          data="mute:999:forever", user=IVAN)["result"]
    assert forged["update"]["callback_query"]["data"] == "mute:999:forever"
    original = fake.press(GROUP, sent["message_id"], callback_data="ack:7", user=IVAN)
    bot.call("editMessageReplyMarkup", chat_id=GROUP, message_id=sent["message_id"])  # buttons gone
    replayed = control.post("replay_callback", callback_query_id=original["callback_query_id"])
    query = replayed["result"]["update"]["callback_query"]
    assert query["data"] == "ack:7" and query["id"] != original["callback_query_id"]
    assert "reply_markup" not in query["message"]  # the message as it is now
    assert [q["how"] for q in control.get("callback_queries")["result"]] == [
        "forged", "pressed", "replayed"]
    assert control.post("forge_callback", chat_id=GROUP, message_id=sent["message_id"],
                        data="x" * 65)["description"] == \
        "Bad Request: data must be 1-64 bytes, as Telegram carries it"


# ---- the bot answers -----------------------------------------------------------------------------


def test_a_press_is_answered_once_and_the_answer_recorded(bot, fake, control):
    sent = alert(bot)
    query_id = fake.press(GROUP, sent["message_id"], callback_data="mute:7:1d", user=IVAN)[
        "callback_query_id"]
    assert bot.call("answerCallbackQuery", callback_query_id=query_id, text="Muted for 1 day",
                    show_alert=False).json() == {"ok": True, "result": True}
    assert failure(bot.call("answerCallbackQuery", callback_query_id=query_id)) == (400, TOO_OLD)
    assert control.get("callback_answers")["result"] == [{
        "callback_query_id": query_id, "data": "mute:7:1d", "text": "Muted for 1 day",
        "show_alert": False, "url": None, "cache_time": 0, "date": sent["date"]}]


@pytest.mark.parametrize("query_id", ["", "12345", "not a number"])
def test_an_unknown_callback_query_id_is_too_old_or_invalid(bot, query_id):
    assert failure(bot.call("answerCallbackQuery", callback_query_id=query_id)) == (400, TOO_OLD)


def test_an_answer_later_than_the_window_is_too_old(bot, fake, clock):
    sent = alert(bot)
    late, in_time = (fake.press(GROUP, sent["message_id"], callback_data="ack:7", user=IVAN)[
        "callback_query_id"] for _ in range(2))
    clock.advance(10)
    assert bot.call("answerCallbackQuery", callback_query_id=in_time).status_code == 200  # at 10 s
    clock.advance(0.001)
    assert failure(bot.call("answerCallbackQuery", callback_query_id=late)) == (400, TOO_OLD)


def test_another_bot_cannot_answer_the_query_and_a_long_text_is_refused(bot, fake):
    other = make_token()
    fake.add_token(other, username="other_bot")
    sent = alert(bot)
    query_id = fake.press(GROUP, sent["message_id"], callback_data="ack:7", user=IVAN)[
        "callback_query_id"]
    stranger = BotClient(bot.http, other)
    assert failure(stranger.call("answerCallbackQuery", callback_query_id=query_id)) == (400, TOO_OLD)
    assert failure(bot.call("answerCallbackQuery", callback_query_id=query_id, text="x" * 201)) == (
        400, "Bad Request: MESSAGE_TOO_LONG")
    assert bot.call("answerCallbackQuery", callback_query_id=query_id, text="x" * 200).status_code == 200


# ---- the bot edits -------------------------------------------------------------------------------


def test_editing_the_buttons_changes_the_message_and_is_listed(bot, control, clock):
    sent = alert(bot)
    clock.advance(5)
    muted = keyboard([("Unmute", "unmute:7")])
    edited = bot.result("editMessageReplyMarkup", chat_id=GROUP, message_id=sent["message_id"],
                        reply_markup=muted)
    assert edited["reply_markup"] == muted and edited["edit_date"] == sent["date"] + 5
    assert edited["text"] == sent["text"]
    [listed] = control.get("messages", chat_id=GROUP)["result"]
    assert listed["reply_markup"] == muted and listed["edit_date"] == sent["date"] + 5
    [edit] = control.get("edits", chat_id=GROUP)["result"]
    assert edit["method"] == "editMessageReplyMarkup"
    assert edit["before"]["reply_markup"] == ALERT and edit["after"]["reply_markup"] == muted


def test_editing_the_text_without_reply_markup_removes_the_buttons(bot, fake):
    sent = alert(bot)
    edited = bot.result("editMessageText", chat_id=GROUP, message_id=sent["message_id"],
                        text="<b>Store 014</b> muted by @ivan", parse_mode="HTML")
    assert edited["text"] == "Store 014 muted by @ivan" and "reply_markup" not in edited
    assert edited["entities"] == [{"offset": 0, "length": 9, "type": "bold"}]
    assert fake.messages(GROUP)[0].reply_markup is None


def test_the_same_content_and_buttons_again_is_not_modified(bot):
    sent = alert(bot)
    again = {"chat_id": GROUP, "message_id": sent["message_id"]}
    assert failure(bot.call("editMessageReplyMarkup", **again, reply_markup=ALERT)) == (
        400, NOT_MODIFIED)
    assert failure(bot.call("editMessageText", **again, text=sent["text"], reply_markup=ALERT)) == (
        400, NOT_MODIFIED)
    assert bot.call("editMessageText", **again, text=sent["text"]).status_code == 200  # buttons go
    assert failure(bot.call("editMessageReplyMarkup", **again)) == (400, NOT_MODIFIED)


def test_an_edit_needs_a_message_of_this_bot(bot, fake):
    sent = alert(bot)
    person = fake.write(GROUP, "/status", user=IVAN)["message"]
    other = make_token()
    fake.add_token(other, username="other_bot")
    stranger = BotClient(bot.http, other)
    cases = [
        (bot, {"chat_id": GROUP, "message_id": 99}, "Bad Request: message to edit not found"),
        (bot, {"chat_id": GROUP, "message_id": 0}, "Bad Request: message to edit not found"),
        (bot, {"chat_id": PRIVATE, "message_id": sent["message_id"]},
         "Bad Request: message to edit not found"),
        (bot, {"chat_id": GROUP, "message_id": person["message_id"]},
         "Bad Request: message can't be edited"),
        (stranger, {"chat_id": GROUP, "message_id": sent["message_id"]},
         "Bad Request: message can't be edited"),
        (bot, {}, "Bad Request: message identifier is not specified"),
        (bot, {"inline_message_id": "AgAAA"}, "Bad Request: wrong inline message identifier specified"),
        (bot, {"message_id": sent["message_id"]}, "Bad Request: chat_id is empty"),
        (bot, {"chat_id": -777, "message_id": 1}, "Bad Request: chat not found"),
    ]
    for client, target, description in cases:
        assert failure(client.call("editMessageReplyMarkup", **target)) == (400, description), target
        assert failure(client.call("editMessageText", text="new", **target)) == (400, description)


def test_an_edit_checks_its_text_and_buttons_as_a_send_does(bot, fake):
    sent = alert(bot)
    target = {"chat_id": GROUP, "message_id": sent["message_id"]}
    assert failure(bot.call("editMessageText", **target, text="")) == (
        400, "Bad Request: message text is empty")
    assert failure(bot.call("editMessageText", **target, text="1 < 2", parse_mode="HTML")) == (
        400, 'Bad Request: can\'t parse entities: Unsupported start tag "" at byte offset 2')
    assert failure(bot.call("editMessageText", **target, text="x" * 4097)) == (
        400, "Bad Request: message is too long")
    assert failure(bot.call("editMessageReplyMarkup", **target,
                            reply_markup=keyboard([("A", "x" * 65)]))) == (
        400, "Bad Request: BUTTON_DATA_INVALID")
    assert failure(bot.call("editMessageReplyMarkup", **target, reply_markup={"force_reply": True})) \
        == (400, "Bad Request: inline keyboard expected")
    assert fake.edits() == []


def test_a_removed_bot_cannot_edit_in_the_group(bot, fake):
    sent = alert(bot)
    fake.block_chat(GROUP)
    assert failure(bot.call("editMessageText", chat_id=GROUP, message_id=sent["message_id"],
                            text="x")) == (403, "Forbidden: bot was kicked from the group chat")


# ---- the control API at large --------------------------------------------------------------------


def test_reset_forgets_presses_answers_edits_and_updates_but_not_the_bot(bot, fake, control):
    sent = alert(bot)
    query_id = fake.press(GROUP, sent["message_id"], callback_data="ack:7", user=IVAN)[
        "callback_query_id"]
    bot.call("answerCallbackQuery", callback_query_id=query_id)
    bot.call("editMessageReplyMarkup", chat_id=GROUP, message_id=sent["message_id"])
    fake.write(PRIVATE, "/help")
    assert control.post("reset")["ok"] is True
    for listing in ("updates", "callback_queries", "callback_answers", "edits", "messages"):
        assert control.get(listing)["result"] == [], listing
    assert received(bot) == [] and fake.pending_updates() == 0
    assert bot.result("getMe")["username"] == BOT_USERNAME


def test_the_token_never_comes_out_of_any_answer_or_listing(bot, fake, control):
    sent = alert(bot)
    query_id = control.post("press", chat_id=GROUP, message_id=sent["message_id"],
                            callback_data="ack:7", user=IVAN)["result"]["callback_query_id"]
    control.post("write", chat_id=PRIVATE, text="/status")
    bot.call("getUpdates")
    bot.call("answerCallbackQuery", callback_query_id=query_id)
    bot.call("editMessageText", chat_id=GROUP, message_id=sent["message_id"], text="done")
    bot.call("setWebhook", url="https://monitor.example.com/hook")
    bot.call("getWebhookInfo")
    bot.call("deleteWebhook")
    for listing in ("updates", "callback_queries", "callback_answers", "edits", "messages"):
        control.get(listing)
    secret = bot.token.split(":", 1)[1]
    assert all(secret not in body for body in bot.bodies + control.bodies)
    assert secret not in repr(fake.updates()) + repr(fake.callback_queries()) + repr(fake.edits())
    assert secret not in json.dumps([u.as_json() for u in fake.updates()])
