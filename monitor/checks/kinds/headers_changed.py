"""``headers_changed``: the header row's non-empty texts, in order, against the previous read's
(each read keeps the headers it found: ``Keep``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from ..aggregates import ValueRange
from ..base import CheckBase
from ..cells import values_of
from ..fields import A1Text
from ..kind import Keep, Kind
from ..past import Past
from ..result import CheckResult, Health, result_of


class HeadersChangedCheck(CheckBase):
    """The header row ``range`` compared with the one the previous read found."""

    kind: Literal["headers_changed"] = "headers_changed"
    range: A1Text
    level: Literal["warn", "fail"] = "warn"


def judge(check: HeadersChangedCheck, value_range: ValueRange | None, now: datetime, tz: Any,
          modified_time: Any, past: Past) -> CheckResult:
    headers = [str(value).strip() for value in values_of(value_range).values]
    before = past.headers.get(check.name)
    if before is None or list(before) == headers:
        note = "first read" if before is None else "unchanged since the previous read"
        return result_of(check, Health.OK, f"{len(headers)} headers ({note})", headers)
    removed = [h for h in before if h not in headers]
    added = [h for h in headers if h not in before]
    parts = [f"removed {_list(removed)}" if removed else "", f"added {_list(added)}" if added else ""]
    what = "; ".join(part for part in parts if part) or "reordered"
    message = (f"headers changed since the last read ({what}): was {_list(before)}, now {_list(headers)}")
    return result_of(check, check.level, message, headers)


def _list(texts) -> str:
    return "[" + ", ".join(repr(text) for text in texts) + "]"


def keeps(check: HeadersChangedCheck, observed: Any, value_range: ValueRange | None) -> Keep:
    return Keep("headers", tuple(observed or ()))


KIND = Kind(HeadersChangedCheck, judge, keeps)
