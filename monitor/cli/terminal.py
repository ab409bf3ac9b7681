"""A person at a terminal: whether there is one, and what `run` shows them instead of JSON lines.

Cron gives a run no terminal, and its JSON log lines go to the log file or cron's mail, unchanged. A
run typed by hand shows one progress line, rewritten in place, and a short summary at the end; its
warnings and errors still appear, as short lines above the progress line. The progress is drawn from
the run's own log events (``task_done``, ``task_retry``, ...), so the engine knows nothing of it.
"""

from __future__ import annotations

import logging
import sys
from collections import Counter
from typing import IO

from monitor.core.logs import HumanFormatter

# A line rewritten in place is redrawn at most this often; one written line by line (a terminal was
# asked for with --progress, but stderr is a file or a pipe) at most every REPORT_EVERY seconds.
REDRAW_EVERY = 0.1
REPORT_EVERY = 10.0
_CLEAR_LINE = "\r\x1b[K"


def stderr_is_terminal(stream: IO[str] | None = None) -> bool:
    """True when a person watches ``stream`` (stderr by default); False for cron, pipes and files."""
    stream = stream or sys.stderr
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or already closed
        return False


def in_words(event: str, fields: dict) -> str | None:
    """A read that failed, as a person at the terminal wants it: the spreadsheet by name, what
    Google answered, what happens next ("warning: Store 014: 503 Service Unavailable, read again in
    3 s"). None for the other events, which go as their event and fields."""
    who = fields.get("name") or fields.get("spreadsheet_id")
    if who is None or event not in ("task_retry", "task_failed", "task_quota_wait"):
        return None
    status, error = fields.get("status"), fields.get("error") or "no answer"
    answer = f"{status} {error}" if status is not None else error
    again = f", read again in {fields['retry_in_s']:.0f} s" if "retry_in_s" in fields else ""
    if event == "task_failed":
        return f"error: {who} cannot be read: {answer} (`sheet-monitor dlq show {fields['spreadsheet_id']}`)"
    if event == "task_quota_wait":
        return f"warning: {who}: Google's read quota is spent for now{again}"
    if fields.get("reason") == "api_degraded":
        return f"warning: {who}: {answer}; too many spreadsheets failed in a row, the run stops here"
    return f"warning: {who}: {answer}{again}"


class RunProgress(logging.Handler):
    """Counts a run's reads from its log events and shows them on one line of ``stream``.

    ``in_place``: rewrite the line with a carriage return (a terminal); otherwise write a new line now
    and then. Warnings and errors are written whole, above the progress line, as short human lines.
    """

    def __init__(self, stream: IO[str], *, in_place: bool, secrets: tuple[str, ...] = ()) -> None:
        super().__init__(level=logging.INFO)
        self.stream = stream
        self.in_place = in_place
        self.setFormatter(HumanFormatter(secrets=secrets))
        self.verdicts: Counter[str] = Counter()  # a read's verdict: ok, warn, fail, error
        self.retries = 0
        self.failed = 0  # reads that failed for good this run (dead-lettered)
        self.round_total: int | None = None  # known when this run started the round
        self.budget: float | None = None
        self.started: float | None = None  # the run_started record's time
        self._drawn_at: float | None = None
        self._line = ""

    @property
    def reads(self) -> int:
        return sum(self.verdicts.values())

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._count(record)
            if record.levelno >= logging.WARNING:
                said = in_words(record.getMessage(), getattr(record, "fields", {}))
                self._write_above(self.formatter.redact(said) if said else self.format(record))
            if record.getMessage() != "run_started":  # nothing to show yet
                self._draw(record.created, force=record.getMessage() == "run_finished")
        except Exception:  # noqa: BLE001 - logging.Handler's contract: never raise into the caller
            self.handleError(record)

    def _count(self, record: logging.LogRecord) -> None:
        event, fields = record.getMessage(), getattr(record, "fields", {})
        if event == "run_started":
            self.started, self.budget = record.created, fields.get("budget_s")
        elif event == "round_started":
            self.round_total = fields.get("tasks")
        elif event == "task_done":
            self.verdicts[str(fields.get("status"))] += 1
        elif event == "task_retry":
            self.retries += 1
        elif event == "task_failed":
            self.failed += 1

    def text(self, now: float) -> str:
        """The progress line as of ``now`` (a record's time)."""
        verdicts = ", ".join(f"{count} {verdict}" for verdict, count in sorted(self.verdicts.items()))
        of_round = f" of {self.round_total} in the new round" if self.round_total else ""
        parts = [f"{self.reads} read{of_round}" + (f" ({verdicts})" if verdicts else "")]
        if self.retries:
            parts.append(f"{self.retries} to retry")
        if self.failed:
            parts.append(f"{self.failed} could not be read")
        if self.started is not None:
            budget = f" of {self.budget:.0f} s" if self.budget else ""
            parts.append(f"{max(now - self.started, 0):.0f} s{budget}")
        return "run: " + ", ".join(parts)

    def _draw(self, now: float, force: bool = False) -> None:
        every = REDRAW_EVERY if self.in_place else REPORT_EVERY
        if self.started is None or (not force and self._drawn_at is not None
                                     and now - self._drawn_at < every):
            return
        self._drawn_at, line = now, self.text(now)
        if line == self._line:
            return
        self._line = line
        if self.in_place:
            self.stream.write(_CLEAR_LINE + self._line)
        else:
            self.stream.write(self._line + "\n")
        self.stream.flush()

    def _write_above(self, line: str) -> None:
        # On a terminal, clear the progress line, write the warning, and the next draw puts it back.
        self.stream.write((_CLEAR_LINE if self.in_place and self._line else "") + line + "\n")
        self._drawn_at, self._line = None, ""  # drawn again after it, even if nothing changed
        self.stream.flush()

    def finish(self) -> None:
        """End the progress line, so that what follows starts on a line of its own."""
        if self.in_place and self._line:
            self.stream.write("\n")
            self.stream.flush()
        self._line = ""
