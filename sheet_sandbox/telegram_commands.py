"""The ``bot_command`` entities Telegram marks in what a person writes: a port of TDLib's
``match_bot_commands`` (``td/telegram/MessageEntity.cpp``), whose rule is the regular expression

    (?<!\\b|[\\/<>])\\/([a-zA-Z0-9_]{1,64})(?:@([a-zA-Z0-9_]{3,32}))?(?!\\B|[\\/<>])

so ``/status`` and ``/mute@stock_bot`` are commands (the ``@bot`` part inside the entity), while
``a/b``, ``//x``, ``/x/`` and a command with a two-letter ``@ab`` are not. Offsets and lengths count
UTF-16 code units, as the Bot API's do.
"""

from __future__ import annotations

import unicodedata

_MAX_COMMAND = 64
_BOT_NAME = (3, 32)


def bot_commands(text: str) -> list[dict]:
    spans = []
    i, n = 0, len(text)
    while True:
        slash = text.find("/", i)
        if slash < 0:
            break
        if slash > 0 and _blocks(text[slash - 1]):
            i = slash + 1
            continue
        end = _ascii_word_end(text, slash + 1)
        i = end
        if not 1 <= end - slash - 1 <= _MAX_COMMAND:
            continue
        if end < n and text[end] == "@":
            name_end = _ascii_word_end(text, end + 1)
            i = name_end
            if not _BOT_NAME[0] <= name_end - end - 1 <= _BOT_NAME[1]:
                continue
            end = name_end
        if end < n and _blocks(text[end]):
            continue
        spans.append((slash, end))
    return [_entity(text, start, end) for start, end in spans]


def command_target(text: str, entity: dict) -> tuple[str, str | None]:
    """The command (without ``/``) and the bot it names, if any (``/mute@stock_bot`` ->
    ``("mute", "stock_bot")``), of an entity ``bot_commands`` found in ``text``."""
    units = text.encode("utf-16-le")
    start, length = entity["offset"] * 2, entity["length"] * 2
    command = units[start:start + length].decode("utf-16-le")[1:]
    name, _, bot = command.partition("@")
    return name, bot or None


def _blocks(ch: str) -> bool:
    """A character that may not touch a command: a word character, or / < >."""
    return ch == "_" or unicodedata.category(ch)[0] in ("L", "N") or ch in "/<>"


def _ascii_word_end(text: str, start: int) -> int:
    end = start
    while end < len(text) and (text[end].isascii() and (text[end].isalnum() or text[end] == "_")):
        end += 1
    return end


def _entity(text: str, start: int, end: int) -> dict:
    offset = len(text[:start].encode("utf-16-le")) // 2
    length = len(text[start:end].encode("utf-16-le")) // 2
    return {"offset": offset, "length": length, "type": "bot_command"}
