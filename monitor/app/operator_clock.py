"""The operator commands' clock: the real one, built here so the CLI only parses, prints and maps exit
codes. A run and the watchdog build theirs in their own composition roots (`run`, `watchdog`), where a
test hands a manual one in."""

from __future__ import annotations

from monitor.core.clock import SystemClock

operator_clock = SystemClock()
