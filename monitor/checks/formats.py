"""Value formats an ``invalid`` check may require of a column: e-mail, phone, date, number, URL.

Values are what the monitor reads, UNFORMATTED_VALUE: a number typed into a cell arrives as a JSON
number, text as a string. So ``number`` accepts JSON numbers only, a "12" typed as text is invalid
(it is what breaks a SUM), and ``date`` accepts date serials and the date strings ``dates`` reads.
Each test is deliberately plain: it catches what people paste by mistake (a name in the e-mail
column, "tbd" in the date column), not every corner of the RFCs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC
from typing import Any
from urllib.parse import urlsplit

from .cells import is_number
from .dates import date_of

_EMAIL = re.compile(r"^[^@\s]+@[^@\s.]+(?:\.[^@\s.]+)+$")
# Digits, spaces, dots, dashes and parentheses, one leading "+": 7 to 15 digits (E.164's maximum).
_PHONE = re.compile(r"^\+?[\d\s().-]+$")


def _is_email(value: Any) -> bool:
    return isinstance(value, str) and bool(_EMAIL.match(value.strip()))


def _is_phone(value: Any) -> bool:
    if is_number(value) and float(value).is_integer():
        text = str(int(value))  # a phone typed without "+" or spaces is stored as a number
    elif isinstance(value, str) and _PHONE.match(value.strip()):
        text = value
    else:
        return False
    return 7 <= sum(char.isdigit() for char in text) <= 15


def _is_date(value: Any) -> bool:
    # The zone only moves a moment, never decides whether a value is a date.
    return date_of(value, UTC) is not None


def _is_url(value: Any) -> bool:
    if not isinstance(value, str) or any(char.isspace() for char in value.strip()):
        return False
    parts = urlsplit(value.strip())
    return parts.scheme in ("http", "https") and "." in parts.hostname if parts.hostname else False


FORMATS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "email": (_is_email, "an e-mail"),
    "phone": (_is_phone, "a phone number"),
    "date": (_is_date, "a date"),
    "number": (is_number, "a number"),
    "url": (_is_url, "an http(s) URL"),
}
"""Each format's test and how a finding names what the value is not ("not an e-mail")."""
