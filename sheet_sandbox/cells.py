"""What one cell holds, and how Google renders it for each value/dateTime render option.

A cell is stored as the cheapest Python value that says what it is, because a generated dataset
holds millions of them:

    None                 empty
    str                  text
    bool                 a boolean (checked before int: bool is an int in Python)
    int | float          a number in Google's automatic format
    ErrorValue           #REF!, #N/A, ... (one shared instance per code, or one with Google's
                         detailed message), and LOADING, a cell still computing
    Formatted            a number shown through a pattern: a date, a date-time, 1,234.50, 12%
    Formula              the formula's text and the value it computed

Google's rules reproduced here: FORMATTED_VALUE gives strings; UNFORMATTED_VALUE gives numbers,
booleans and date serials (or date strings with dateTimeRenderOption=FORMATTED_STRING); FORMULA gives
the formula text where there is one. Error values are their code in every option, and a cell
still computing (IMPORTRANGE, GOOGLEFINANCE: the API's ErrorType LOADING) its text "Loading...".
"""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime, timedelta

FORMATTED_VALUE = "FORMATTED_VALUE"
UNFORMATTED_VALUE = "UNFORMATTED_VALUE"
FORMULA = "FORMULA"
VALUE_RENDER_OPTIONS = (FORMATTED_VALUE, UNFORMATTED_VALUE, FORMULA)
SERIAL_NUMBER = "SERIAL_NUMBER"
FORMATTED_STRING = "FORMATTED_STRING"
DATE_TIME_RENDER_OPTIONS = (SERIAL_NUMBER, FORMATTED_STRING)

ERROR_CODES = ("#REF!", "#N/A", "#DIV/0!", "#VALUE!", "#NAME?", "#NUM!", "#NULL!", "#ERROR!")

# Day 0 of Google's (and Lotus 1-2-3's) date serials.
SERIAL_EPOCH = date(1899, 12, 30)


class ErrorValue:
    """An error a cell shows (``code``), with the detailed message Google keeps for it when one was
    given (the grid data's ``errorValue.message``, e.g. IMPORTRANGE's "You need to connect these
    sheets.")."""

    __slots__ = ("code", "message")

    def __init__(self, code: str, message: str | None = None) -> None:
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"ErrorValue({self.code!r}, {self.message!r})"


ERRORS = {code: ErrorValue(code) for code in ERROR_CODES}
# A cell whose value is still being computed: shown as "Loading..." by every render option, and in
# grid data as errorValue {type: LOADING, message: "Loading..."} (ErrorType LOADING, "Corresponds
# to the Loading... state"). Formulas that depend on it show it too.
LOADING_TEXT = "Loading..."
LOADING = ErrorValue(LOADING_TEXT, LOADING_TEXT)


class Formatted:
    """A number with a display pattern. ``kind``: date, datetime, us_date, grouped, percent."""

    __slots__ = ("number", "kind", "decimals")

    def __init__(self, number: float, kind: str, decimals: int = 0) -> None:
        self.number = number
        self.kind = kind
        self.decimals = decimals

    @property
    def is_date(self) -> bool:
        return self.kind in ("date", "datetime", "us_date")

    def display(self) -> str:
        if self.kind == "grouped":
            return f"{self.number:,.{self.decimals}f}"
        if self.kind == "percent":
            return f"{self.number * 100:.{self.decimals}f}%"
        moment = serial_to_datetime(self.number)
        if self.kind == "us_date":
            return f"{moment.month}/{moment.day}/{moment.year}"
        if self.kind == "datetime":
            return moment.strftime("%Y-%m-%d %H:%M:%S")
        return moment.strftime("%Y-%m-%d")

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Formatted)
            and (self.number, self.kind, self.decimals) == (other.number, other.kind, other.decimals)
        )

    def __hash__(self) -> int:
        return hash((self.number, self.kind, self.decimals))

    def __repr__(self) -> str:
        return f"Formatted({self.number!r}, {self.kind!r}, {self.decimals})"


class Formula:
    __slots__ = ("text", "value")

    def __init__(self, text: str, value: object = None) -> None:
        self.text = text
        self.value = value

    def __repr__(self) -> str:
        return f"Formula({self.text!r}, {self.value!r})"


# -- dates -----------------------------------------------------------------------------------


def date_to_serial(day: date) -> int:
    return (day - SERIAL_EPOCH).days


def datetime_to_serial(moment: datetime) -> float:
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    midnight = datetime.combine(moment.date(), datetime.min.time())
    fraction = (moment - midnight).total_seconds() / 86400
    return date_to_serial(moment.date()) + fraction


def serial_to_datetime(serial: float) -> datetime:
    base = datetime.combine(SERIAL_EPOCH, datetime.min.time())
    # Round to the second: a serial's float fraction rarely lands exactly on one.
    return base + timedelta(seconds=round(serial * 86400))


# -- numbers ---------------------------------------------------------------------------------


def json_number(value: float) -> int | float:
    """Numbers as Google's JSON has them: 2 rather than 2.0."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return int(value)
    return value


def general_format(value: float) -> str:
    """Google's automatic number format: up to 10 decimals, scientific when huge or tiny."""
    if isinstance(value, int) or (value.is_integer() and abs(value) < 1e15):
        return str(int(value))
    if math.isinf(value) or math.isnan(value):
        return "#NUM!"
    magnitude = abs(value)
    if magnitude >= 1e15 or magnitude < 1e-10:
        mantissa, exponent = f"{value:.5E}".split("E")
        mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa}E{'+' if int(exponent) >= 0 else '-'}{abs(int(exponent)):02d}"
    text = f"{value:.10f}".rstrip("0").rstrip(".")
    return text if text not in ("-0", "") else "0"


# -- rendering -------------------------------------------------------------------------------


def render(cell: object, value_option: str, date_option: str = SERIAL_NUMBER) -> object:
    """The JSON value Google sends for ``cell``; "" for an empty cell."""
    if isinstance(cell, Formula):
        if value_option == FORMULA:
            return cell.text
        cell = cell.value
    if cell is None:
        return ""
    if isinstance(cell, str):
        return cell
    formatted = value_option == FORMATTED_VALUE
    if isinstance(cell, bool):
        return ("TRUE" if cell else "FALSE") if formatted else cell
    if isinstance(cell, ErrorValue):
        return cell.code
    if isinstance(cell, Formatted):
        if formatted or (cell.is_date and date_option == FORMATTED_STRING):
            return cell.display()
        return json_number(cell.number)
    return general_format(cell) if formatted else json_number(cell)


# Cells rendered as themselves under UNFORMATTED_VALUE: most of a typical sheet. (A float is not
# among them: 2.0 must go out as 2.)
_AS_THEMSELVES = frozenset({str, int, bool})


def render_cells(cells, value_option: str, date_option: str = SERIAL_NUMBER) -> list:
    """``[render(c, value_option, date_option) for c in cells]``, faster.

    Reads render thousands of cells per request; under UNFORMATTED_VALUE most of them are text,
    integers and booleans that go out unchanged, so only the others pay for ``render``'s dispatch.
    """
    if value_option != UNFORMATTED_VALUE:
        return [render(c, value_option, date_option) for c in cells]
    return [c if type(c) in _AS_THEMSELVES else render(c, value_option, date_option) for c in cells]


def number_of(cell: object) -> float | None:
    """The numeric value of a cell for arithmetic, or None when it is not a number."""
    if isinstance(cell, Formula):
        cell = cell.value
    if isinstance(cell, bool):
        return float(cell)
    if isinstance(cell, int | float):
        return cell
    if isinstance(cell, Formatted):
        return cell.number
    return None


# -- input -----------------------------------------------------------------------------------

_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_GROUPED = re.compile(r"^([+-]?)(\d{1,3}(?:,\d{3})+)(\.\d+)?$")
_PERCENT = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))%$")
_ISO_DATE = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})$")
_ISO_DATETIME = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})[ T](\d{1,2}):(\d{2})(?::(\d{2}))?$")
_US_DATE = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4})$")


def raw_cell(value: object) -> object:
    """A cell from a RAW input value: stored exactly as sent (strings stay strings)."""
    if value is None or value == "":
        return None
    if isinstance(value, str | bool | int | float):
        return value
    raise TypeError(value)


def user_entered_cell(value: object, evaluate) -> object:
    """A cell from a USER_ENTERED input value, parsed as if typed into the Sheets UI.

    ``evaluate(text)`` computes a formula's value (see formulas.evaluate).
    """
    if not isinstance(value, str):
        return raw_cell(value)
    text = value
    if text == "":
        return None
    if text.startswith("'"):
        return text[1:] or None
    if text.startswith("=") and len(text) > 1:
        return Formula(text, evaluate(text))
    parsed = parse_typed_text(text)
    return parsed if parsed is not None else text


def parse_typed_text(text: str) -> object | None:
    """Numbers, booleans, dates and error codes typed as text; None if it stays text."""
    stripped = text.strip()
    upper = stripped.upper()
    if upper in ("TRUE", "FALSE"):
        return upper == "TRUE"
    if upper in ERRORS:
        return ERRORS[upper]
    if _NUMBER.match(stripped):
        number = float(stripped)
        return int(number) if number.is_integer() and abs(number) < 1e15 else number
    if match := _GROUPED.match(stripped):
        sign, digits, fraction = match.groups()
        number = float(sign + digits.replace(",", "") + (fraction or ""))
        return Formatted(number, "grouped", len(fraction) - 1 if fraction else 0)
    if match := _PERCENT.match(stripped):
        body = match.group(1)
        decimals = len(body.split(".")[1]) if "." in body else 0
        return Formatted(float(body) / 100, "percent", decimals)
    try:
        if match := _ISO_DATE.match(stripped):
            year, month, day = (int(g) for g in match.groups())
            return Formatted(date_to_serial(date(year, month, day)), "date")
        if match := _ISO_DATETIME.match(stripped):
            year, month, day, hour, minute = (int(g) for g in match.groups()[:5])
            second = int(match.group(6) or 0)
            moment = datetime(year, month, day, hour, minute, second)
            return Formatted(datetime_to_serial(moment), "datetime")
        if match := _US_DATE.match(stripped):
            month, day, year = (int(g) for g in match.groups())
            return Formatted(date_to_serial(date(year, month, day)), "us_date")
    except ValueError:  # 2024-02-31 and the like stay text, as in the Sheets UI
        return None
    return None
