"""Telegram's HTML parse mode, rule for rule, so the fake rejects exactly what Telegram rejects.

The Bot API hands ``parse_mode=HTML`` text to TDLib's ``parse_html``
(td/telegram/MessageEntity.cpp); this is a port of that scanner over the UTF-8 bytes of the text,
so byte offsets and error wording match what api.telegram.org answers after its
``can't parse entities: `` prefix. Facts worth knowing, checked against TDLib's source and tests:

- Supported tags: b strong i em u ins s strike del a code pre blockquote tg-spoiler tg-emoji, and
  ``span`` only with ``class="tg-spoiler"``. Tag names are case-insensitive; unknown attributes are
  ignored.
- A ``<`` always starts a tag, so a bare ``<`` fails: ``a < b`` gives
  ``Unsupported start tag "" at byte offset 2``; ``x <b`` gives
  ``Unclosed start tag at byte offset 2``.
- Entities: ``&lt; &gt; &amp; &quot;`` and numeric ones (``&#60;``, ``&#x3C;``), the ``;`` optional.
  Anything else after ``&`` is kept literally: Telegram accepts ``AT&T`` and ``&nbsp;`` unchanged.
  ``strict_ampersand=True`` is a sandbox-only switch that rejects such a bare ``&`` instead, to
  catch senders that forget to escape (the text can silently change, e.g. ``&lt`` in a name).
- Entity offsets and lengths count UTF-16 code units, like the Bot API's ``MessageEntity``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SUPPORTED_TAGS = frozenset(
    {
        "a",
        "b",
        "strong",
        "i",
        "em",
        "s",
        "strike",
        "del",
        "u",
        "ins",
        "tg-spoiler",
        "tg-emoji",
        "span",
        "pre",
        "code",
        "blockquote",
    }
)
# TDLib's is_space() counts NUL as space; NUL also stands for "past the end" (C string terminator).
_SPACES = frozenset(b" \t\r\n\x00\x0b")
_SIMPLE_TYPES = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "span": "spoiler",
}
_NAMED_ENTITIES = {b"lt": "<", b"gt": ">", b"amp": "&", b"quot": '"'}
_SURROGATES_MESSAGE = (
    "Text contains invalid Unicode characters after decoding HTML entities, check for unmatched "
    "surrogate code units"
)


class HTMLParseError(ValueError):
    """The text is not valid Telegram HTML; ``str(error)`` is TDLib's message, e.g.
    ``Unsupported start tag "foo" at byte offset 3``."""


@dataclass
class ParsedText:
    text: str  # what the recipient sees: tags removed, entities decoded
    entities: list[dict] = field(default_factory=list)  # Bot API MessageEntity objects


@dataclass
class _Open:
    tag: str
    argument: str
    utf16_offset: int
    output_start: int  # index into the output bytes where the entity's text begins


def _is_alpha(c: int) -> bool:
    return 0x41 <= c <= 0x5A or 0x61 <= c <= 0x7A


def _is_digit(c: int) -> bool:
    return 0x30 <= c <= 0x39


def _is_hex(c: int) -> bool:
    return _is_digit(c) or 0x41 <= c <= 0x46 or 0x61 <= c <= 0x66


def decode_entity(data: bytes, pos: int) -> tuple[int, int] | None:
    """The code point of the HTML entity starting at ``data[pos] == '&'`` and the position after it,
    or None when TDLib would keep the ``&`` as a literal character."""
    at = _reader(data)
    end = pos + 1
    code = 0
    if at(end) == 0x23:  # '#'
        end += 1
        if at(end) == 0x78:  # 'x' (lower case only, as in TDLib)
            end += 1
            while _is_hex(at(end)):
                code = code * 16 + int(chr(at(end)), 16)
                end += 1
        else:
            while _is_digit(at(end)):
                code = code * 10 + at(end) - 0x30
                end += 1
        if code == 0 or code >= 0x10FFFF or end - pos >= 10:
            return None
    else:
        while _is_alpha(at(end)):
            end += 1
        named = _NAMED_ENTITIES.get(data[pos + 1 : end])
        if named is None:
            return None
        code = ord(named)
    if at(end) == 0x3B:  # ';'
        end += 1
    return code, end


def _reader(data: bytes):
    size = len(data)

    def at(i: int) -> int:
        return data[i] if i < size else 0

    return at


def _lower(raw: bytes) -> str:
    return raw.decode("utf-8", "replace").lower()


def _utf16_units(code: int) -> int:
    return 2 if code > 0xFFFF else 1


# The parser follows Telegram's own (td/telegram/MessageEntity.cpp) step by step, so that the two can be
# read side by side: its two loops keep that shape rather than the complexity limit (C901).
def parse_html(text: str, *, strict_ampersand: bool = False) -> ParsedText:  # noqa: C901
    """Strip Telegram HTML to the visible text and its entities; raises HTMLParseError."""
    data = text.encode("utf-8", "surrogatepass")
    at = _reader(data)
    out = bytearray()
    entities: list[dict] = []
    stack: list[_Open] = []
    utf16 = 0
    has_surrogate = False
    i = 0
    size = len(data)
    while i < size:
        c = data[i]
        if c == 0x26:  # '&'
            decoded = decode_entity(data, i)
            if decoded is not None:
                code, i = decoded
                utf16 += _utf16_units(code)
                if 0xD800 <= code <= 0xDFFF:
                    has_surrogate = True
                out += chr(code).encode("utf-8", "surrogatepass")
                continue
            if strict_ampersand:
                raise HTMLParseError(
                    f'Unescaped "&" at byte offset {i}; use &amp; (sandbox strict mode)'
                )
        if c != 0x3C:  # not '<'
            if c & 0xC0 != 0x80:  # first byte of a UTF-8 sequence
                utf16 += 2 if c >= 0xF0 else 1
            out.append(c)
            i += 1
            continue
        begin = i
        i += 1
        if at(i) != 0x2F:  # not '/': a start tag
            i = _start_tag(data, at, begin, i, stack, utf16, len(out))
        else:
            i = _end_tag(data, at, begin, i, stack, entities, utf16, out)
        i += 1  # past the closing '>'
    if stack:
        raise HTMLParseError(f'Can\'t find end tag corresponding to start tag "{stack[-1].tag}"')
    if has_surrogate:
        raise HTMLParseError(_SURROGATES_MESSAGE)
    for entity in entities:
        if entity["type"] == "code":
            entity.pop("language", None)
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return ParsedText(out.decode("utf-8"), entities)


def _start_tag(  # noqa: C901 - Telegram's parser step by step (above)
    data: bytes, at, begin: int, i: int, stack: list[_Open], utf16: int, out_len: int
) -> int:
    """Read ``<tag attr=value ...>`` from ``begin``; push it; return the index of its ``>``."""
    while at(i) not in _SPACES and at(i) != 0x3E:
        i += 1
    if at(i) == 0:
        raise HTMLParseError(f"Unclosed start tag at byte offset {begin}")
    tag = _lower(data[begin + 1 : i])
    if tag not in SUPPORTED_TAGS:
        raise HTMLParseError(f'Unsupported start tag "{tag}" at byte offset {begin}')
    argument = ""
    while at(i) != 0x3E:  # '>'
        while at(i) != 0 and at(i) in _SPACES:
            i += 1
        if at(i) == 0x3E:
            break
        name_start = i
        while at(i) not in _SPACES and at(i) not in b"=>/\"'":
            i += 1
        name = data[name_start:i]
        if not name:
            raise HTMLParseError(f'Empty attribute name in the tag "{tag}" at byte offset {begin}')
        while at(i) != 0 and at(i) in _SPACES:
            i += 1
        if at(i) != 0x3D:  # no '=': a valueless attribute
            if at(i) == 0:
                raise HTMLParseError(f'Unclosed start tag "{tag}" at byte offset {begin}')
            if tag == "blockquote" and name == b"expandable":
                argument = "1"
            continue
        i += 1
        while at(i) != 0 and at(i) in _SPACES:
            i += 1
        if at(i) == 0:
            raise HTMLParseError(f'Unclosed start tag "{tag}" at byte offset {begin}')
        value, i = _attribute_value(data, at, i)
        if at(i) == 0:
            raise HTMLParseError(f"Unclosed start tag at byte offset {begin}")
        argument = _argument(tag, name, value, argument)
    if tag == "span" and argument != "spoiler":
        raise HTMLParseError(f'Tag "span" must have class "tg-spoiler" at byte offset {begin}')
    stack.append(_Open(tag, argument, utf16, out_len))
    return i


def _attribute_value(data: bytes, at, i: int) -> tuple[str, int]:
    quote = at(i)
    if quote not in (0x22, 0x27):
        # A name token (letters, digits, periods, hyphens); not case sensitive.
        start = i
        while _is_alpha(at(i)) or _is_digit(at(i)) or at(i) in (0x2E, 0x2D):
            i += 1
        if at(i) not in _SPACES and at(i) != 0x3E:
            raise HTMLParseError(f"Unexpected end of name token at byte offset {start}")
        return _lower(data[start:i]), i
    i += 1
    value = bytearray()
    while at(i) != quote and at(i) != 0:
        if at(i) == 0x26:
            decoded = decode_entity(data, i)
            if decoded is not None:
                code, i = decoded
                value += chr(code).encode("utf-8", "surrogatepass")
                continue
        value.append(at(i))
        i += 1
    if at(i) == quote:
        i += 1
    return value.decode("utf-8", "replace"), i


def _argument(tag: str, name: bytes, value: str, current: str) -> str:
    if tag == "a" and name == b"href":
        return value
    if tag == "code" and name == b"class" and value.startswith("language-"):
        return value[len("language-") :]
    if tag == "span" and name == b"class" and value.startswith("tg-"):
        return value[len("tg-") :]
    if (tag == "tg-emoji" and name == b"emoji-id") or (
        tag == "blockquote" and name == b"expandable"
    ):
        return value if tag == "tg-emoji" else "1"
    return current


def _end_tag(
    data: bytes,
    at,
    begin: int,
    i: int,
    stack: list[_Open],
    entities: list[dict],
    utf16: int,
    out: bytearray,
) -> int:
    """Read ``</tag>`` (or ``</>``) from ``begin``; pop and emit its entity; return the index of
    its ``>``."""
    if not stack:
        raise HTMLParseError(f"Unexpected end tag at byte offset {begin}")
    while at(i) not in _SPACES and at(i) != 0x3E:
        i += 1
    end_name = _lower(data[begin + 2 : i])
    while at(i) in _SPACES and at(i) != 0:
        i += 1
    if at(i) != 0x3E:
        raise HTMLParseError(f"Unclosed end tag at byte offset {begin}")
    top = stack[-1]
    if end_name and end_name != top.tag:
        raise HTMLParseError(
            f"Unmatched end tag at byte offset {begin}, "
            f'expected "</{top.tag}>", found "</{end_name}>"'
        )
    if utf16 > top.utf16_offset:  # empty entities are dropped, not errors
        entity = _entity(top, utf16 - top.utf16_offset, entities, out)
        if entity is not None:
            entities.append(entity)
    stack.pop()
    return i


def _entity(top: _Open, length: int, entities: list[dict], out: bytearray) -> dict | None:
    base = {"offset": top.utf16_offset, "length": length}
    if top.tag in _SIMPLE_TYPES:
        return {**base, "type": _SIMPLE_TYPES[top.tag]}
    if top.tag == "blockquote":
        return {**base, "type": "expandable_blockquote" if top.argument else "blockquote"}
    if top.tag == "tg-emoji":
        if not top.argument.isdigit() or int(top.argument) == 0:
            raise HTMLParseError("Invalid custom emoji identifier specified")
        return {**base, "type": "custom_emoji", "custom_emoji_id": top.argument}
    if top.tag == "a":
        url = top.argument or out[top.output_start :].decode("utf-8", "replace")
        checked = checked_link(url)
        return {**base, "type": "text_link", "url": checked} if checked else None
    # <pre> and <code class="language-x"> over the same span merge into one pre with a language;
    # a code's language is dropped otherwise (TDLib clears it after parsing).
    last = entities[-1] if entities else None
    same_span = bool(last) and (last["offset"], last["length"]) == (base["offset"], length)
    if top.tag == "code":
        if same_span and last["type"] == "pre" and top.argument:
            last["language"] = top.argument
            return None
        return {**base, "type": "code", **({"language": top.argument} if top.argument else {})}
    if same_span and last["type"] == "code" and "language" in last:
        entities.pop()
        return {**base, "type": "pre", "language": last["language"]}
    return {**base, "type": "pre"}


def checked_link(url: str) -> str | None:
    """A rough stand-in for TDLib's link check: a host is required, ``http://`` is assumed, and a
    bare host gets a trailing ``/`` (``telegram.org`` -> ``http://telegram.org/``). Invalid links
    drop the entity silently, as Telegram does."""
    url = url.strip()
    if not url or any(ch.isspace() for ch in url):
        return None
    if "://" not in url:
        if url.startswith("tg:"):
            return url
        url = "http://" + url
    scheme, rest = url.split("://", 1)
    if scheme.lower() not in ("http", "https", "tg", "ton") or not rest:
        return None
    if "/" not in rest and "?" not in rest and "#" not in rest:
        url += "/"
    return url
