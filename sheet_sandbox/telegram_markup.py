"""``reply_markup`` as the Bot API reads it: an InlineKeyboardMarkup as a JSON object or JSON text.

Three stages, each with Telegram's words (docs/sandbox.md, "Buttons"):

- the Bot API's HTTP front parses the JSON (telegram-bot-api's ``Client::get_reply_markup`` and
  ``get_inline_keyboard_button``): a button needs a ``text``; a non-empty ``url`` makes a URL
  button, else a non-empty ``callback_data`` a callback button, else "Text buttons are unallowed in
  the inline keyboard". JSON numbers pass as strings, as TDLib's JSON reader gives them;
- TDLib drops buttons whose text is empty, and rows left empty, and a keyboard left empty
  (``td/telegram/ReplyMarkup.cpp``);
- Telegram's servers refuse callback data over 64 bytes (``BUTTON_DATA_INVALID``) and keyboards
  beyond its limits (``REPLY_MARKUP_TOO_LONG``, shown as "reply markup is too long").

Only inline keyboards are kept: a reply keyboard, remove_keyboard or force_reply is read and
checked for shape, but a Message never shows one (#message: ``reply_markup`` is the "inline
keyboard attached to the message"), and an edit refuses them as TDLib does ("Inline keyboard
expected"). Buttons other than ``url`` and ``callback_data`` are not modelled and are refused.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .telegram_errors import TelegramError, bad_request
from .telegram_html import checked_link

MAX_CALLBACK_DATA_BYTES = 64  # #inlinekeyboardbutton: callback_data "1-64 bytes"
# Not in the Bot API reference; from public reports (docs/sandbox.md): 8 buttons a row, 100 in all.
MAX_BUTTONS_PER_ROW = 8
MAX_BUTTONS = 100
_OTHER_BUTTON_KINDS = ("callback_game", "pay", "switch_inline_query", "switch_inline_query_chosen_chat",
                       "switch_inline_query_current_chat", "login_url", "web_app", "copy_text")
_LINK_SCHEMES = ("http", "https", "tg", "ton")
_BOOLEAN_FIELDS = ("hide_keyboard", "remove_keyboard", "personal_keyboard", "selective",
                   "force_reply_keyboard", "force_reply")


@dataclass(frozen=True)
class Markup:
    """What a ``reply_markup`` parameter asked for: ``inline`` is the keyboard as Telegram returns
    it (None when there is none); ``other`` is true for a reply keyboard, remove_keyboard or
    force_reply, which an edit refuses."""

    inline: dict | None = None
    other: bool = False


NO_MARKUP = Markup()


def parse_reply_markup(raw: str | None) -> Markup:
    """The markup ``raw`` (JSON text, as the parameters hold it) describes, or the Bot API's 400."""
    if not raw:
        return NO_MARKUP
    try:
        value = json.loads(raw, parse_int=str, parse_float=str, parse_constant=_refuse)
    except (json.JSONDecodeError, ValueError):
        raise bad_request("can't parse reply keyboard markup JSON object") from None
    if not isinstance(value, dict):
        raise bad_request("object expected as reply markup")
    rows = _reply_keyboard(value)
    inline_rows = _inline_keyboard(value)
    for name in _BOOLEAN_FIELDS:
        if name in value and not isinstance(value[name], bool):
            raise _field_error(name, "Boolean")
    if rows:
        return Markup(other=True)
    if inline_rows:
        return Markup(inline=_tdlib_kept(inline_rows))
    if value.get("hide_keyboard") or value.get("remove_keyboard") or value.get("force_reply") \
            or value.get("force_reply_keyboard"):
        return Markup(other=True)
    return NO_MARKUP


def check_on_server(keyboard: dict | None) -> None:
    """Telegram's servers' own checks of a keyboard TDLib passed on."""
    if keyboard is None:
        return
    rows = keyboard["inline_keyboard"]
    for row in rows:
        for button in row:
            data = button.get("callback_data")
            if data is not None and len(data.encode("utf-8")) > MAX_CALLBACK_DATA_BYTES:
                raise bad_request("BUTTON_DATA_INVALID")
    if any(len(row) > MAX_BUTTONS_PER_ROW for row in rows) or sum(map(len, rows)) > MAX_BUTTONS:
        raise bad_request("reply markup is too long")


def buttons(keyboard: dict | None) -> list[tuple[int, int, dict]]:
    """Every button of a kept keyboard with its (row, column), in reading order."""
    if keyboard is None:
        return []
    return [(r, c, button) for r, row in enumerate(keyboard["inline_keyboard"])
            for c, button in enumerate(row)]


def _refuse(constant: str) -> None:
    raise ValueError(constant)  # NaN and Infinity are not JSON; TDLib refuses them too


def _field_error(name: str, kind: str) -> TelegramError:
    return bad_request(f'field "{name}" must be of type {kind}')


def _array_field(value: dict, name: str) -> list | None:
    if name not in value:
        return None
    field = value[name]
    if not isinstance(field, list):
        raise _field_error(name, "Array")
    return field


def _reply_keyboard(value: dict) -> list:
    rows = _array_field(value, "keyboard") or []
    for row in rows:
        if not isinstance(row, list):
            raise bad_request('field "keyboard" must be an Array of Arrays')
        for button in row:
            if isinstance(button, str):
                continue
            if not isinstance(button, dict):
                raise bad_request(
                    "can't parse keyboard button: KeyboardButton must be a String or an Object")
            problem = _string_problem(button, "text", required=True)
            if problem:
                raise bad_request(f"can't parse keyboard button: {problem}")
    return rows


def _inline_keyboard(value: dict) -> list[list[dict]]:
    rows = _array_field(value, "inline_keyboard") or []
    parsed = []
    for row in rows:
        if not isinstance(row, list):
            raise bad_request(
                'field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays')
        parsed.append([_inline_button(button) for button in row])
    return parsed


def _inline_button(button: object) -> dict:
    def refuse(problem: str) -> TelegramError:
        return bad_request(f"can't parse inline keyboard button: {problem}")

    if not isinstance(button, dict):
        raise refuse("InlineKeyboardButton must be an Object")
    text = _string_field(button, "text", required=True, refuse=refuse)
    # The order of the Bot API's reader: a non-empty url wins before callback_data is looked at.
    url = _string_field(button, "url", required=False, refuse=refuse)
    if url:
        return {"text": text, "url": _checked_url(url)}
    data = _string_field(button, "callback_data", required=False, refuse=refuse)
    if data:
        return {"text": text, "callback_data": data}
    other = next((kind for kind in _OTHER_BUTTON_KINDS if kind in button), None)
    if other is not None:
        raise bad_request(f"sandbox: {other} buttons are not modelled; use url or callback_data")
    raise refuse("Text buttons are unallowed in the inline keyboard")


def _string_problem(button: dict, name: str, required: bool) -> str | None:
    """TDLib's JSON reader: a missing required field, or a present one that is no string."""
    if name not in button:
        return f'Can\'t find field "{name}"' if required else None
    if not isinstance(button[name], str):
        return f'Field "{name}" must be of type String'
    return None


def _string_field(button: dict, name: str, required: bool, refuse) -> str:
    problem = _string_problem(button, name, required)
    if problem:
        raise refuse(problem)
    return button.get(name, "")


def _checked_url(url: str) -> str:
    """The link as Telegram keeps it (``telegram.org`` -> ``http://telegram.org/``), or TDLib's
    refusal; the wording of refusals other than the protocol's is the sandbox's."""
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme and scheme not in _LINK_SCHEMES:
        raise bad_request(f"inline keyboard button URL '{url}' is invalid: Unsupported URL protocol")
    checked = checked_link(url)
    if checked is None:
        raise bad_request(f"inline keyboard button URL '{url}' is invalid: Wrong HTTP URL")
    return checked


def _tdlib_kept(rows: list[list[dict]]) -> dict | None:
    kept = [[button for button in row if button["text"]] for row in rows]
    kept = [row for row in kept if row]
    return {"inline_keyboard": kept} if kept else None
