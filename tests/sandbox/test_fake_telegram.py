"""The fake Telegram Bot API through real HTTP: httpx against HTTPServerThread(FakeTelegram(...)).

Time is a ManualClock shared with the fake, so flood-control tests move it instead of sleeping.
"""

from __future__ import annotations

import json
import secrets

import httpx
import pytest
from fake_telegram_helpers import Switchboard, serve_switchboard

from monitor.core.clock import ManualClock
from sheet_sandbox.telegram import FakeTelegram

PRIVATE = 4242  # a user who talks to the bot
GROUP = -4001  # a basic group
FORUM = -1001234567890  # a supergroup with topics


class Bot:
    """An httpx client for one bot token, with the answers it got (to look for leaked tokens)."""

    def __init__(self, client: httpx.Client, token: str) -> None:
        self.client = client
        self.token = token
        self.bodies: list[str] = []

    def call(self, method: str, **kwargs) -> httpx.Response:
        response = self.client.post(f"/bot{self.token}/{method}", **kwargs)
        self.bodies.append(response.text)
        return response

    def send(self, chat_id: object, text: str, **fields) -> httpx.Response:
        return self.call("sendMessage", json={"chat_id": chat_id, "text": text, **fields})


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def fake(clock: ManualClock) -> FakeTelegram:
    fake = FakeTelegram(clock=clock)
    fake.add_chat(PRIVATE, title="Olga", username="olga")
    fake.add_chat(GROUP, title="Stock alerts")
    fake.add_chat(FORUM, title="Ops", topics=[7])
    return fake


@pytest.fixture(scope="module")
def switchboard():
    yield from serve_switchboard()


@pytest.fixture
def client(fake: FakeTelegram, switchboard: Switchboard):
    switchboard.app = fake
    with httpx.Client(base_url=switchboard.base_url, timeout=5) as http:
        yield http


@pytest.fixture
def bot(fake: FakeTelegram, client: httpx.Client) -> Bot:
    token = f"{secrets.randbelow(10**9) + 10**9}:{secrets.token_urlsafe(26)}"
    fake.add_token(token, username="stock_monitor_bot", first_name="Stock monitor")
    return Bot(client, token)


def error_of(response: httpx.Response) -> tuple[int, str]:
    body = response.json()
    assert body["ok"] is False and body["error_code"] == response.status_code
    return response.status_code, body["description"]


# ---- getMe, tokens, routing ---------------------------------------------------------------------


def test_get_me_describes_the_bot_by_get_and_post(bot: Bot):
    bot_id = int(bot.token.split(":")[0])
    for response in (bot.client.get(f"/bot{bot.token}/getMe"), bot.call("getMe")):
        assert response.status_code == 200
        result = response.json()["result"]
        assert result["id"] == bot_id and result["is_bot"] is True
        assert result["username"] == "stock_monitor_bot"


def test_an_unknown_token_is_401_unauthorized_for_every_method(bot: Bot):
    stranger = Bot(bot.client, "999:not-registered")
    assert error_of(stranger.call("getMe")) == (401, "Unauthorized")
    assert error_of(stranger.send(PRIVATE, "hi")) == (401, "Unauthorized")


def test_get_chat_describes_the_chat_or_refuses_it_as_a_send_would(bot: Bot, fake: FakeTelegram):
    answer = bot.call("getChat", json={"chat_id": FORUM}).json()
    assert answer["ok"] is True and answer["result"] == {
        "id": FORUM, "title": "Ops", "type": "supergroup", "is_forum": True, "accent_color_id": 0,
        "max_reaction_count": 11}
    assert bot.call("getChat", json={"chat_id": "@olga"}).json()["result"]["first_name"] == "Olga"
    assert error_of(bot.call("getChat", json={"chat_id": -777})) == (400, "Bad Request: chat not found")
    assert error_of(bot.call("getChat", json={})) == (400, "Bad Request: chat_id is empty")
    fake.block_chat(FORUM)
    assert error_of(bot.call("getChat", json={"chat_id": FORUM})) == (
        403, "Forbidden: bot was kicked from the supergroup chat")
    new_id = fake.migrate_chat(GROUP)
    migrated = bot.call("getChat", json={"chat_id": GROUP})
    assert migrated.json()["parameters"] == {"migrate_to_chat_id": new_id}
    assert error_of(Bot(bot.client, "999:not-registered").call("getChat", json={"chat_id": FORUM})) == (
        401, "Unauthorized")


def test_unknown_methods_and_paths_get_telegrams_404(bot: Bot):
    assert error_of(bot.call("sendTelepathy")) == (404, "Not Found")
    assert error_of(bot.client.get("/nonsense")) == (404, "Not Found")
    assert error_of(bot.client.get(f"/bot{bot.token}")) == (404, "Not Found")
    assert error_of(bot.client.put(f"/bot{bot.token}/sendMessage")) == (404, "Not Found")
    assert error_of(bot.client.get("/_sandbox/nothing")) == (404, "Not Found")


def test_malformed_json_gets_a_telegram_shaped_400(bot: Bot):
    url = f"/bot{bot.token}/sendMessage"
    headers = {"content-type": "application/json"}
    broken = bot.client.post(url, content=b'{"chat_id": 1, "text": ', headers=headers)
    assert error_of(broken) == (400, "Bad Request: expected next field or object end")
    not_object = bot.client.post(url, content=b"[1, 2]", headers=headers)
    assert error_of(not_object) == (400, "Bad Request: JSON object expected")


# ---- sendMessage: bodies and answers -------------------------------------------------------------


def test_a_json_send_is_answered_like_telegram(bot: Bot, clock: ManualClock):
    response = bot.send(PRIVATE, "Stock is low")
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True
    result = body["result"]
    assert result["message_id"] == 1
    assert result["date"] == int(clock.time())
    assert result["chat"] == {
        "id": PRIVATE,
        "first_name": "Olga",
        "username": "olga",
        "type": "private",
    }
    assert result["from"]["username"] == "stock_monitor_bot"
    assert result["text"] == "Stock is low"
    clock.advance(5)
    assert bot.send(PRIVATE, "again").json()["result"]["message_id"] == 2


def test_a_form_encoded_send_is_accepted(bot: Bot, fake: FakeTelegram):
    response = bot.call(
        "sendMessage", data={"chat_id": str(GROUP), "text": "<b>form</b>", "parse_mode": "HTML"}
    )
    assert response.status_code == 200
    assert response.json()["result"]["entities"] == [{"offset": 0, "length": 4, "type": "bold"}]
    assert fake.messages(GROUP)[0].text == "<b>form</b>"


def test_query_parameters_are_accepted_too(bot: Bot):
    response = bot.client.get(
        f"/bot{bot.token}/sendMessage", params={"chat_id": PRIVATE, "text": "q"}
    )
    assert response.status_code == 200
    assert response.json()["result"]["text"] == "q"


def test_a_multipart_send_is_accepted(bot: Bot):
    fields = {
        "chat_id": (None, str(PRIVATE)),
        "text": (None, "Склад &amp; цены"),
        "parse_mode": (None, "HTML"),
    }
    response = bot.call("sendMessage", files=fields)
    assert response.json()["result"]["text"] == "Склад & цены"


def test_json_booleans_are_understood(bot: Bot):
    result = bot.send(PRIVATE, "x", disable_web_page_preview=True).json()["result"]
    assert result["link_preview_options"] == {"is_disabled": True}


def test_a_chat_can_be_named_by_its_username(bot: Bot):
    assert bot.send("@OLGA", "hi").json()["result"]["chat"]["id"] == PRIVATE


def test_topic_and_link_preview_are_echoed_and_recorded(bot: Bot, fake: FakeTelegram):
    options = {"is_disabled": True}
    result = bot.send(FORUM, "topic", message_thread_id=7, link_preview_options=options).json()[
        "result"
    ]
    assert result["message_thread_id"] == 7 and result["is_topic_message"] is True
    assert result["link_preview_options"] == {"is_disabled": True}
    assert fake.messages(FORUM)[0].message_thread_id == 7
    assert error_of(bot.send(FORUM, "x", message_thread_id=8)) == (
        400,
        "Bad Request: message thread not found",
    )


# ---- HTML parse mode ---------------------------------------------------------------------------


def test_escaped_html_is_accepted_and_recorded_intact(bot: Bot):
    sent = 'Stock &lt;Moscow&gt; &amp; "Co"'
    response = bot.send(GROUP, sent, parse_mode="HTML")
    assert response.status_code == 200
    assert response.json()["result"]["text"] == 'Stock <Moscow> & "Co"'
    recorded = bot.client.get("/_sandbox/messages", params={"chat_id": GROUP}).json()["result"]
    assert [m["text"] for m in recorded] == [sent]
    assert recorded[0]["plain_text"] == 'Stock <Moscow> & "Co"'
    assert recorded[0]["parse_mode"] == "HTML"


@pytest.mark.parametrize(
    ("html", "error"),
    [
        ("Stock <Moscow> low", 'Unsupported start tag "moscow" at byte offset 6'),
        ("1 < 2", 'Unsupported start tag "" at byte offset 2'),
        ("price <b", "Unclosed start tag at byte offset 6"),
        ("<b>unclosed", 'Can\'t find end tag corresponding to start tag "b"'),
        ("<b>x</i>", 'Unmatched end tag at byte offset 4, expected "</b>", found "</i>"'),
        ("x</b>", "Unexpected end tag at byte offset 1"),
        ('<span class="red">x</span>', 'Tag "span" must have class "tg-spoiler" at byte offset 0'),
    ],
)
def test_malformed_html_is_refused_with_telegrams_words(bot: Bot, fake: FakeTelegram, html, error):
    response = bot.send(GROUP, html, parse_mode="HTML")
    assert error_of(response) == (400, f"Bad Request: can't parse entities: {error}")
    assert fake.messages() == []


def test_the_same_text_without_parse_mode_is_plain(bot: Bot):
    assert bot.send(GROUP, "1 < 2 & <b>").json()["result"]["text"] == "1 < 2 & <b>"


def test_a_bare_ampersand_passes_like_telegram_but_not_in_strict_mode(clock, switchboard):
    answers = []
    for strict in (False, True):
        fake = FakeTelegram(clock=clock, strict_ampersand=strict)
        fake.add_token("1:t")
        fake.add_chat(GROUP)
        switchboard.app = fake
        payload = {"chat_id": GROUP, "text": "R&D stock", "parse_mode": "HTML"}
        answers.append(httpx.post(f"{switchboard.base_url}/bot1:t/sendMessage", json=payload))
    ok, refused = answers
    assert ok.json()["result"]["text"] == "R&D stock"
    assert refused.status_code == 400
    assert refused.json()["description"].startswith(
        'Bad Request: can\'t parse entities: Unescaped "&"'
    )


def test_unsupported_parse_mode_is_refused(bot: Bot):
    assert error_of(bot.send(GROUP, "x", parse_mode="BBCode")) == (
        400,
        "Bad Request: unsupported parse_mode",
    )


# ---- text rules ----------------------------------------------------------------------------------


def test_the_4096_limit_counts_characters_after_entity_parsing(bot: Bot):
    at_limit = "<b>" + "&lt;" * 4096 + "</b>"  # 16391 characters sent, 4096 seen
    assert bot.send(GROUP, at_limit, parse_mode="HTML").status_code == 200
    over = "<b>" + "&lt;" * 4097 + "</b>"
    assert error_of(bot.send(GROUP, over, parse_mode="HTML")) == (
        400,
        "Bad Request: message is too long",
    )


def test_the_4096_limit_for_plain_text(bot: Bot, clock: ManualClock):
    assert bot.send(PRIVATE, "я" * 4096).status_code == 200  # characters, not bytes
    clock.advance(1)
    assert error_of(bot.send(PRIVATE, "x" * 4097)) == (400, "Bad Request: message is too long")


@pytest.mark.parametrize(("text", "parse_mode"), [("", None), ("<b> </b>", "HTML"), (" \n ", None)])
def test_empty_text_is_refused(bot: Bot, text, parse_mode):
    fields = {"parse_mode": parse_mode} if parse_mode else {}
    assert error_of(bot.send(GROUP, text, **fields)) == (400, "Bad Request: message text is empty")


def test_unknown_and_missing_chats_are_refused(bot: Bot):
    assert error_of(bot.send(-777, "x")) == (400, "Bad Request: chat not found")
    assert error_of(bot.send("@nobody", "x")) == (400, "Bad Request: chat not found")
    assert error_of(bot.call("sendMessage", json={"text": "x"})) == (
        400,
        "Bad Request: chat_id is empty",
    )


# ---- chat behaviour: blocked, migrated -----------------------------------------------------------


def test_a_blocked_chat_answers_403(bot: Bot, fake: FakeTelegram):
    fake.block_chat(PRIVATE)
    assert error_of(bot.send(PRIVATE, "x")) == (403, "Forbidden: bot was blocked by the user")
    assert fake.messages() == []


def test_a_chat_can_be_blocked_through_the_control_api(bot: Bot):
    answer = bot.client.post("/_sandbox/chats", json={"id": PRIVATE, "blocked": True})
    assert answer.json()["result"]["blocked"] is True
    assert error_of(bot.send(PRIVATE, "x"))[0] == 403


def test_a_migrated_group_points_to_its_supergroup(bot: Bot, fake: FakeTelegram):
    new_id = fake.migrate_chat(GROUP)
    response = bot.send(GROUP, "x")
    assert error_of(response) == (400, "Bad Request: group chat was upgraded to a supergroup chat")
    assert response.json()["parameters"] == {"migrate_to_chat_id": new_id}
    assert new_id == -1004001
    assert bot.send(new_id, "x").json()["result"]["chat"]["type"] == "supergroup"


def test_migration_through_the_control_api(bot: Bot):
    bot.client.post("/_sandbox/chats", json={"id": GROUP, "migrate_to": -1009999})
    assert bot.send(GROUP, "x").json()["parameters"]["migrate_to_chat_id"] == -1009999


# ---- flood control -------------------------------------------------------------------------------


def test_a_second_message_in_the_same_second_gets_429_until_the_second_passes(
    bot: Bot, clock: ManualClock
):
    assert bot.send(PRIVATE, "one").status_code == 200
    refused = bot.send(PRIVATE, "two")
    assert error_of(refused) == (429, "Too Many Requests: retry after 1")
    assert refused.json()["parameters"] == {"retry_after": 1}
    clock.advance(0.999)
    assert bot.send(PRIVATE, "two").status_code == 429
    clock.advance(0.001)
    assert bot.send(PRIVATE, "two").status_code == 200


def test_other_chats_are_not_slowed_by_one_busy_chat(bot: Bot):
    assert bot.send(PRIVATE, "one").status_code == 200
    assert bot.send(GROUP, "one").status_code == 200


def test_a_group_takes_20_messages_a_minute(bot: Bot, clock: ManualClock, fake: FakeTelegram):
    for _ in range(20):
        assert bot.send(GROUP, "tick").status_code == 200
        clock.advance(1)
    refused = bot.send(GROUP, "tick")  # at t=20 s; the first send leaves the window at t=60 s
    assert error_of(refused) == (429, "Too Many Requests: retry after 40")
    clock.advance(39)
    assert bot.send(GROUP, "tick").status_code == 429
    clock.advance(1)
    assert bot.send(GROUP, "tick").status_code == 200
    assert len(fake.messages(GROUP)) == 21


def test_a_chat_limit_can_be_configured(bot: Bot, clock: ManualClock):
    bot.client.post("/_sandbox/chats", json={"id": GROUP, "per_second": 3, "per_minute": 4})
    assert [bot.send(GROUP, "x").status_code for _ in range(4)] == [200, 200, 200, 429]
    clock.advance(1)
    assert [bot.send(GROUP, "x").status_code for _ in range(2)] == [200, 429]


def test_forced_429s_answer_the_next_sends_then_stop(
    bot: Bot, fake: FakeTelegram, clock: ManualClock
):
    fake.force_rate_limit(count=2, retry_after=7, chat_id=PRIVATE)
    first, second = bot.send(PRIVATE, "x"), bot.send(PRIVATE, "x")
    assert first.json()["parameters"] == {"retry_after": 7}
    assert error_of(second) == (429, "Too Many Requests: retry after 7")
    assert bot.send(GROUP, "other chat").status_code == 200
    assert bot.send(PRIVATE, "x").status_code == 200


def test_forced_429_for_any_chat_through_the_control_api(bot: Bot):
    assert bot.client.post("/_sandbox/force_429", json={"count": 1, "retry_after": 3}).json()["ok"]
    assert bot.send(GROUP, "x").json()["parameters"] == {"retry_after": 3}
    assert bot.send(GROUP, "x").status_code == 200


# ---- records, stats, reset, secrecy --------------------------------------------------------------


def test_stats_count_sends_by_status(bot: Bot):
    bot.send(PRIVATE, "ok")
    bot.send(PRIVATE, "too soon")
    bot.send(-777, "nowhere")
    stats = bot.client.get("/_sandbox/stats").json()["result"]
    assert stats["sends"] == {"200": 1, "429": 1, "400": 1}
    assert stats["messages"] == 1


def test_reset_forgets_messages_but_keeps_bots_and_chats(bot: Bot, fake: FakeTelegram):
    bot.send(PRIVATE, "before")
    assert bot.client.post("/_sandbox/reset").json()["ok"] is True
    assert fake.messages() == []
    response = bot.send(PRIVATE, "after")  # flood window forgotten too
    assert response.json()["result"]["message_id"] == 1


def test_tokens_and_chats_can_be_registered_over_http(client: httpx.Client, fake: FakeTelegram):
    answer = client.post("/_sandbox/tokens", json={"token": "77:abc", "username": "x_bot"})
    assert answer.json()["result"]["id"] == 77 and "abc" not in answer.text
    client.post("/_sandbox/chats", json={"id": 5, "title": "Ivan"})
    sent = client.post("/bot77:abc/sendMessage", data={"chat_id": "5", "text": "hi"})
    assert sent.json()["result"]["chat"]["first_name"] == "Ivan"
    bad = client.post("/_sandbox/chats", json={"id": 5, "colour": "red"})
    assert bad.status_code == 400 and "colour" in bad.json()["description"]


def test_the_token_never_appears_in_any_answer(bot: Bot, fake: FakeTelegram):
    bot.send(PRIVATE, "ok")
    bot.send(PRIVATE, "429")
    bot.send(GROUP, "<x>", parse_mode="HTML")
    bot.call("unknownMethod")
    bot.call("sendMessage", content=b"{", headers={"content-type": "application/json"})
    for path in ("/_sandbox/messages", "/_sandbox/stats", "/_sandbox/chats"):
        bot.bodies.append(bot.client.get(path).text)
    secret = bot.token.split(":", 1)[1]
    assert all(secret not in body for body in bot.bodies)
    assert secret not in repr(fake.messages()) and secret not in json.dumps(fake.stats())


class BrokenClock:
    """A clock that fails, with the secret in its message, to see what a sandbox bug answers."""

    def __init__(self, secret: str) -> None:
        self.secret = secret

    def time(self) -> float:
        raise RuntimeError(f"clock broke while serving {self.secret}")


def test_a_sandbox_bug_answers_a_telegram_500_without_the_token(switchboard: Switchboard):
    token = "5:" + secrets.token_urlsafe(20)
    fake = FakeTelegram(clock=BrokenClock(token))
    fake.add_token(token)
    fake.add_chat(PRIVATE)
    switchboard.app = fake
    response = httpx.post(
        f"{switchboard.base_url}/bot{token}/sendMessage", json={"chat_id": PRIVATE, "text": "x"}
    )
    assert error_of(response) == (500, "Internal Server Error: sandbox bug (RuntimeError)")
    assert token.split(":")[1] not in response.text
