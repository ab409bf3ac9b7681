"""When a read's answer is overdue: the poison guard's evidence against the read a run died with.

A run killed with one read in flight may have been killed by that read (a spreadsheet whose answer
exhausts memory, or one that hangs until something kills the process) or by something else (a
deploy, a host crash-looping, the OOM killer). Only the spreadsheet's own reads that completed tell
them apart: one that has answered, in so many seconds, is not to blame for a kill that came before
its answer was due, whenever kills land. So the run marks the read alone in flight on its task once
its answer is overdue (saved at once: the next run must know), and only a kill after that counts
against it (``monitor.engine.tasks``). A spreadsheet none of whose reads ever completed has no such evidence:
a kill with it alone counts, as it must for one whose very first answer kills the process.
"""

from __future__ import annotations

from monitor.engine.health import SheetHealth

# A read out this many times its spreadsheet's slowest recent read is overdue. Google's time for one
# spreadsheet varies from read to read, but a healthy one's rarely doubles its slowest of eight.
OVERDUE_TIMES = 2.0
# ... and never sooner than this: a run's first request also fetches a token and opens a connection.
OVERDUE_AT_LEAST = 1.0


def answered(record: SheetHealth | None) -> bool:
    """Has a read of this spreadsheet completed (its time is on the record)?"""
    return record is not None and bool(record.read_seconds)


def answer_due(record: SheetHealth | None) -> float | None:
    """Seconds after which a read of this spreadsheet is overdue; None when none of its reads has
    completed, so that nothing says when its answer is due."""
    if not answered(record):
        return None
    return max(OVERDUE_AT_LEAST, OVERDUE_TIMES * max(record.read_seconds))
