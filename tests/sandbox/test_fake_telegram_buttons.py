"""Inline keyboards on the fake Telegram's sendMessage, through real HTTP: kept and returned as
Telegram returns them, refused with Telegram's words where Telegram refuses them."""

from __future__ import annotations

import json

import pytest
from fake_telegram_helpers import (
    GROUP,
    PRIVATE,
    failure,
    keyboard,
)


@pytest.fixture
def fake(served_fake):
    return served_fake


MUTE = keyboard([("Acknowledge", "ack:1"), ("Mute 1d", "mute:1:1d")], [("Check again now", "chk:1")])


def test_a_keyboard_comes_back_in_the_message_and_in_the_listing(bot, control, fake):
    result = bot.result("sendMessage", chat_id=GROUP, text="Store 014 is failing", reply_markup=MUTE)
    assert result["reply_markup"] == MUTE
    [listed] = control.get("messages", chat_id=GROUP)["result"]
    assert listed["reply_markup"] == MUTE and listed["message_id"] == result["message_id"]
    assert fake.messages(GROUP)[0].reply_markup == MUTE


def test_a_keyboard_given_as_json_text_in_a_form_body_is_read_alike(bot):
    response = bot.http.post(f"/bot{bot.token}/sendMessage", data={
        "chat_id": str(PRIVATE), "text": "form", "reply_markup": json.dumps(MUTE)})
    assert response.json()["result"]["reply_markup"] == MUTE


def test_callback_data_of_64_bytes_passes_and_65_is_button_data_invalid(bot, fake):
    at_limit = "я" * 32  # 64 bytes in UTF-8, 32 characters: bytes are what count
    sent = bot.result("sendMessage", chat_id=GROUP, text="x", reply_markup=keyboard([("A", at_limit)]))
    assert sent["reply_markup"]["inline_keyboard"][0][0]["callback_data"] == at_limit
    over = keyboard([("A", at_limit + "x")])
    assert failure(bot.send(GROUP, "x", reply_markup=over)) == (400, "Bad Request: BUTTON_DATA_INVALID")
    assert len(fake.messages()) == 1


@pytest.mark.parametrize(("markup", "description"), [
    ("{not json", "can't parse reply keyboard markup JSON object"),
    ([1, 2], "object expected as reply markup"),
    ({"inline_keyboard": {}}, 'field "inline_keyboard" must be of type Array'),
    ({"inline_keyboard": [{}]},
     'field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays'),
    ({"inline_keyboard": [["Ack"]]},
     "can't parse inline keyboard button: InlineKeyboardButton must be an Object"),
    ({"inline_keyboard": [[{"callback_data": "ack"}]]},
     "can't parse inline keyboard button: Can't find field \"text\""),
    ({"inline_keyboard": [[{"text": "Ack"}]]},
     "can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard"),
    ({"inline_keyboard": [[{"text": "Ack", "callback_data": ""}]]},
     "can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard"),
    ({"inline_keyboard": [[{"text": "Ack", "url": None, "callback_data": "ack"}]]},
     "can't parse inline keyboard button: Field \"url\" must be of type String"),
    ({"inline_keyboard": [[{"text": "Site", "url": "ftp://example.com/x"}]]},
     "inline keyboard button URL 'ftp://example.com/x' is invalid: Unsupported URL protocol"),
    ({"keyboard": [[{"request_contact": True}]]},
     "can't parse keyboard button: Can't find field \"text\""),
])
def test_malformed_markup_is_refused_with_telegrams_words(bot, fake, markup, description):
    raw = markup if isinstance(markup, str) else json.dumps(markup)  # as a form body carries it
    response = bot.http.post(f"/bot{bot.token}/sendMessage",
                             data={"chat_id": str(GROUP), "text": "x", "reply_markup": raw})
    assert failure(response) == (400, f"Bad Request: {description}")
    assert fake.messages() == []


@pytest.mark.parametrize(("at_limit", "over"), [
    ([[("b", f"d{i}") for i in range(8)]], [[("b", f"d{i}") for i in range(9)]]),  # in a row
    ([[("b", f"d{i}")] for i in range(100)], [[("b", f"d{i}")] for i in range(101)]),  # in all
])
def test_keyboards_beyond_telegrams_limits_are_refused(bot, clock, at_limit, over):
    kept = bot.result("sendMessage", chat_id=GROUP, text="x", reply_markup=keyboard(*at_limit))
    assert kept["reply_markup"] == keyboard(*at_limit)
    clock.advance(1)
    assert failure(bot.send(GROUP, "x", reply_markup=keyboard(*over))) == (
        400, "Bad Request: reply markup is too long")


def test_buttons_without_text_are_dropped_and_a_keyboard_left_empty_is_none(bot):
    mixed = {"inline_keyboard": [[{"text": "", "callback_data": "gone"}, {"text": "B", "callback_data": "b"}],
                                 [{"text": "", "callback_data": "gone too"}]]}
    assert bot.result("sendMessage", chat_id=GROUP, text="x", reply_markup=mixed)["reply_markup"] == \
        keyboard([("B", "b")])
    empty = {"inline_keyboard": [[{"text": "", "callback_data": "gone"}]]}
    assert "reply_markup" not in bot.result("sendMessage", chat_id=PRIVATE, text="x", reply_markup=empty)


def test_numbers_pass_as_strings_and_links_take_telegrams_form(bot):
    markup = {"inline_keyboard": [[{"text": 14, "callback_data": 12},
                                   {"text": "Site", "url": "example.com"}]]}
    assert bot.result("sendMessage", chat_id=GROUP, text="x", reply_markup=markup)["reply_markup"] == {
        "inline_keyboard": [[{"text": "14", "callback_data": "12"},
                             {"text": "Site", "url": "http://example.com/"}]]}


def test_a_url_wins_over_callback_data_as_the_bot_api_reads_a_button(bot):
    markup = {"inline_keyboard": [[{"text": "Site", "url": "https://example.com/a", "callback_data": 5}]]}
    button = bot.result("sendMessage", chat_id=GROUP, text="x", reply_markup=markup)["reply_markup"]
    assert button == {"inline_keyboard": [[{"text": "Site", "url": "https://example.com/a"}]]}


@pytest.mark.parametrize("markup", [
    {"keyboard": [["Yes", {"text": "No"}]], "resize_keyboard": True},
    {"remove_keyboard": True},
    {"force_reply": True},
    {},
])
def test_markup_other_than_an_inline_keyboard_is_accepted_but_no_message_shows_it(
        bot, control, markup):
    result = bot.result("sendMessage", chat_id=PRIVATE, text="x", reply_markup=markup)
    assert result["text"] == "x" and "reply_markup" not in result
    assert control.get("messages")["result"][0]["reply_markup"] is None


def test_markup_is_read_after_the_html_and_before_the_chat_its_limits_after(bot):
    bad_markup = {"inline_keyboard": [[{"text": "Ack"}]]}
    assert failure(bot.send(GROUP, "<b>x", parse_mode="HTML", reply_markup=bad_markup))[1].startswith(
        "Bad Request: can't parse entities")
    assert failure(bot.send(-777, "x", reply_markup=bad_markup))[1].startswith(
        "Bad Request: can't parse inline keyboard button")
    too_long = keyboard([("A", "x" * 65)])
    assert failure(bot.send(-777, "x", reply_markup=too_long)) == (400, "Bad Request: chat not found")


def test_buttons_the_sandbox_does_not_model_are_refused_as_such(bot):
    markup = {"inline_keyboard": [[{"text": "Pay", "pay": True}]]}
    status, description = failure(bot.send(PRIVATE, "x", reply_markup=markup))
    assert status == 400 and description.startswith("Bad Request: sandbox: pay buttons are not modelled")
