"""Telegram's HTML parse mode and flood windows, as pure functions.

The error cases and their exact wording are TDLib's own test cases (td/test/message_entities.cpp,
``TEST(MessageEntities, parse_html)``), which is what api.telegram.org runs behind the Bot API.
"""

from __future__ import annotations

from collections import deque

import pytest

from sheet_sandbox.telegram_html import HTMLParseError, parse_html
from sheet_sandbox.telegram_limits import FloodControl, Window, retry_after_seconds

STADIUM = "🏟 🏟&lt;"  # 4-byte emoji make byte offsets and UTF-16 offsets differ from indexes


@pytest.mark.parametrize(
    ("html", "error"),
    [
        (STADIUM + "<abacaba", "Unclosed start tag at byte offset 13"),
        (STADIUM + "<abac aba>", 'Unsupported start tag "abac" at byte offset 13'),
        (STADIUM + "<abac>", 'Unsupported start tag "abac" at byte offset 13'),
        (STADIUM + "<i   =aba>", 'Empty attribute name in the tag "i" at byte offset 13'),
        (STADIUM + "<i    aba>", 'Can\'t find end tag corresponding to start tag "i"'),
        (STADIUM + "<i    aba  =  ", 'Unclosed start tag "i" at byte offset 13'),
        (STADIUM + "<i    aba  =  190azAz-.,", "Unexpected end of name token at byte offset 27"),
        (STADIUM + '<i    aba  =  "&lt;&gt;&quot;>', "Unclosed start tag at byte offset 13"),
        (STADIUM + "</", "Unexpected end tag at byte offset 13"),
        (STADIUM + "<b></b></", "Unexpected end tag at byte offset 20"),
        (STADIUM + "<i>a</i   ", "Unclosed end tag at byte offset 17"),
        (
            STADIUM + "<i>a</em   >",
            'Unmatched end tag at byte offset 17, expected "</i>", found "</em>"',
        ),
        (
            "&#57311;",
            "Text contains invalid Unicode characters after decoding HTML entities, "
            "check for unmatched surrogate code units",
        ),
        ("<span>x</span>", 'Tag "span" must have class "tg-spoiler" at byte offset 0'),
        ('<tg-emoji emoji-id="x">y</tg-emoji>', "Invalid custom emoji identifier specified"),
        ("a < b", 'Unsupported start tag "" at byte offset 2'),
        ("<br/>", 'Unsupported start tag "br/" at byte offset 0'),
    ],
)
def test_tdlib_error_cases(html, error):
    with pytest.raises(HTMLParseError) as raised:
        parse_html(html)
    assert str(raised.value) == error


@pytest.mark.parametrize(
    ("html", "text", "entities"),
    [
        ("", "", []),
        (
            "&ge;&lt;&gt;&amp;&quot;&laquo;&raquo;&#12345678;",
            '&ge;<>&"&laquo;&raquo;&#12345678;',
            [],
        ),
        ("AT&T &#60;&#x3C;&lt", "AT&T <<<", []),
        ("🏟 🏟<i>🏟 &lt🏟</i>", "🏟 🏟🏟 <🏟", [{"offset": 5, "length": 6, "type": "italic"}]),
        (
            "🏟 🏟<i>🏟 &gt;<b aba   =   caba>&lt🏟</b></i>",
            "🏟 🏟🏟 ><🏟",
            [
                {"offset": 5, "length": 7, "type": "italic"},
                {"offset": 9, "length": 3, "type": "bold"},
            ],
        ),
        (STADIUM + "<i>a</    >", "🏟 🏟<a", [{"offset": 6, "length": 1, "type": "italic"}]),
        ("<B>x</b>", "x", [{"offset": 0, "length": 1, "type": "bold"}]),
        ("<b></b>x", "x", []),  # empty entities vanish
        (
            '<span class="tg-spoiler">s</span><tg-spoiler>t</tg-spoiler>',
            "st",
            [
                {"offset": 0, "length": 1, "type": "spoiler"},
                {"offset": 1, "length": 1, "type": "spoiler"},
            ],
        ),
        (
            "<a href=telegram.org>x</a>",
            "x",
            [{"offset": 0, "length": 1, "type": "text_link", "url": "http://telegram.org/"}],
        ),
        (
            '<pre><code class="language-python">x</code></pre>',
            "x",
            [{"offset": 0, "length": 1, "type": "pre", "language": "python"}],
        ),
        ("<code>x</code>", "x", [{"offset": 0, "length": 1, "type": "code"}]),
        (
            "<blockquote expandable>q</blockquote>",
            "q",
            [{"offset": 0, "length": 1, "type": "expandable_blockquote"}],
        ),
        (
            "<s>a</s><del>b</del><u>c</u><ins>d</ins><em>e</em><strong>f</strong>",
            "abcdef",
            [
                {"offset": 0, "length": 1, "type": "strikethrough"},
                {"offset": 1, "length": 1, "type": "strikethrough"},
                {"offset": 2, "length": 1, "type": "underline"},
                {"offset": 3, "length": 1, "type": "underline"},
                {"offset": 4, "length": 1, "type": "italic"},
                {"offset": 5, "length": 1, "type": "bold"},
            ],
        ),
    ],
)
def test_accepted_html_gives_the_visible_text_and_utf16_entities(html, text, entities):
    parsed = parse_html(html)
    assert parsed.text == text
    assert parsed.entities == entities


def test_strict_ampersand_refuses_what_telegram_would_pass():
    assert parse_html("R&D").text == "R&D"
    with pytest.raises(HTMLParseError, match="byte offset 1"):
        parse_html("R&D", strict_ampersand=True)
    assert parse_html("R&amp;D", strict_ampersand=True).text == "R&D"


def test_a_window_frees_a_slot_exactly_when_the_oldest_send_ages_out():
    window = Window(2, 1.0)
    sent = deque([10.0, 10.5])
    assert window.wait(sent, 10.9) == pytest.approx(0.1)
    assert window.wait(sent, 11.0) == 0.0
    assert list(sent) == [10.5]


def test_retry_after_is_whole_seconds_and_never_zero():
    assert [retry_after_seconds(w) for w in (0.001, 1.0, 1.2, 39.0)] == [1, 1, 2, 39]


def test_groups_have_a_minute_window_and_private_chats_do_not():
    flood = FloodControl(per_chat=Window(100, 1.0), per_group=Window(2, 60.0))
    for t in (0.0, 1.0):
        assert flood.admit(-1, True, t) is None
        flood.record(-1, True, t)
        assert flood.admit(5, False, t) is None
        flood.record(5, False, t)
    assert flood.admit(-1, True, 2.0) == 58
    assert flood.admit(5, False, 2.0) is None


def test_a_zero_limit_refuses_everything():
    assert FloodControl(per_chat=Window(0, 1.0)).admit(5, False, 0.0) == 1


def test_the_overall_limit_spans_chats():
    flood = FloodControl(per_chat=Window(100, 1.0), overall=Window(3, 1.0))
    for chat_id in (1, 2, 3):
        assert flood.admit(chat_id, False, 0.5) is None
        flood.record(chat_id, False, 0.5)
    assert flood.admit(4, False, 0.5) == 1
    assert flood.admit(4, False, 1.5) is None
