"""Field types of the config's sections and sheets: what an admin writes -> the value the monitor uses.

Each validator raises ``InvalidValue`` (problem + fix), which the loader reports at the key's
file:line. Check parameters have their own field types beside the check models (``monitor.checks``).
"""

from __future__ import annotations

import re
from datetime import time, timedelta
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import PlainSerializer, PlainValidator, ValidationInfo

from monitor.checks.fields import OwnerText
from monitor.core.durations import format_duration, parse_positive_duration
from monitor.core.invalid_value import InvalidValue

from .defaults import TOKEN_ENV

Duration = Annotated[
    timedelta, PlainValidator(parse_positive_duration), PlainSerializer(format_duration, return_type=str)
]


def _duration_or_off(value: object) -> timedelta | None:
    if isinstance(value, str) and value.strip().lower() == "off":
        return None
    try:
        return parse_positive_duration(value)
    except InvalidValue as exc:
        raise InvalidValue(exc.problem, f'{exc.fix}, or "off"') from None


# A duration that can be turned off ("off": None), e.g. [alerts] escalate_after.
DurationOrOff = Annotated[
    timedelta | None,
    PlainValidator(_duration_or_off),
    PlainSerializer(lambda d: format_duration(d) if d else "off", return_type=str),
]


def relative_to_config(value: str, info: ValidationInfo) -> Path:
    """A path as written, resolved from the config file's folder (the validation context's base_dir)."""
    base = (info.context or {}).get("base_dir", Path.cwd())
    return (Path(base) / Path(value).expanduser()).resolve()


def _http_url(value: object) -> str:
    text = value.strip().rstrip("/") if isinstance(value, str) else ""
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InvalidValue(f"{value!r} is not an http(s) URL",
                           'write a full URL, e.g. "https://example.org" or "http://127.0.0.1:8931"')
    return text


HttpUrl = Annotated[str, PlainValidator(_http_url)]


def _digest_time(value: object) -> time | None:
    if isinstance(value, time):
        return value.replace(second=0, microsecond=0)
    match = re.fullmatch(r"\s*([01]?\d|2[0-3]):([0-5]\d)\s*", value) if isinstance(value, str) else None
    if match:
        return time(int(match.group(1)), int(match.group(2)))
    if isinstance(value, str) and value.strip().lower() == "off":
        return None
    raise InvalidValue(f"bad time of day {value!r}", 'write "HH:MM" in 24-hour time, e.g. "09:00", '
                       'or "off" for no daily digest')


DigestTime = Annotated[
    time | None,
    PlainValidator(_digest_time),
    PlainSerializer(lambda t: t.strftime("%H:%M") if t else "off", return_type=str),
]


def _timezone(value: object) -> str:
    try:
        ZoneInfo(value)  # type: ignore[arg-type]
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        raise InvalidValue(f"unknown time zone {value!r}",
                           'use an IANA zone name such as "Europe/Moscow", "America/New_York" or "UTC"'
                           ) from None
    return value  # type: ignore[return-value]


TimeZoneName = Annotated[str, PlainValidator(_timezone)]

_TOKEN_LIKE = re.compile(r"\d+:[A-Za-z0-9_-]{20,}")


def _chat_id(value: object) -> str:
    text = str(value).strip() if isinstance(value, (int, str)) and not isinstance(value, bool) else ""
    if re.fullmatch(r"-?\d+|@[A-Za-z][A-Za-z0-9_]{3,}", text):
        return text
    fix = 'use the numeric chat id, e.g. "-1001234567890", or a channel name like "@my_channel"'
    if _TOKEN_LIKE.search(text):  # a pasted bot token: say so without repeating it
        raise InvalidValue("chat_id holds what looks like the bot token", f"{fix}; the token belongs "
                           f"in {TOKEN_ENV} (and, having been in a file, should be revoked)")
    raise InvalidValue(f"bad chat_id {value!r}", fix)


ChatId = Annotated[str, PlainValidator(_chat_id)]


def _api_base(value: object) -> str:
    if isinstance(value, str) and _TOKEN_LIKE.search(value):
        raise InvalidValue("api_base contains what looks like the bot token",
                           f"write only the server, e.g. \"https://api.telegram.org\"; the token belongs "
                           f"in {TOKEN_ENV}")
    return _http_url(value)


ApiBase = Annotated[str, PlainValidator(_api_base)]


# Who answers for a spreadsheet: named in its alert lines ("@olga" notifies her in Telegram). A
# check's own owner is validated alike.
Owner = OwnerText

_ID_RE = re.compile(r"[A-Za-z0-9_-]+")
_URL_ID_RE = re.compile(r"/spreadsheets/d/([A-Za-z0-9_-]+)")


def spreadsheet_id(value: object) -> str:
    """A spreadsheet id as written in a [[sheets]] table or a CSV row, stripped; else InvalidValue."""
    if not isinstance(value, str):
        raise InvalidValue(f"the id must be a quoted string, got {value!r}",
                           'write id = "..." with the id from the spreadsheet\'s URL')
    if not value.strip():
        raise InvalidValue("missing spreadsheet id",
                           "copy the id from the spreadsheet's URL: docs.google.com/spreadsheets/d/ID/")
    text = value.strip()
    if _ID_RE.fullmatch(text):
        return text
    match = _URL_ID_RE.search(text)
    if match:
        raise InvalidValue("this is a URL, not a spreadsheet id", f'write only the id: "{match.group(1)}"')
    raise InvalidValue(f"bad spreadsheet id {text!r}",
                       "an id has only letters, digits, '-' and '_': copy it from the spreadsheet's URL")


SpreadsheetId = Annotated[str, PlainValidator(spreadsheet_id)]
