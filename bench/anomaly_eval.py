"""How well the anomaly check tells injected anomalies from healthy seasonal data, against a plain
z-score and a fixed threshold on the same series.

Each generated spreadsheet has a daily metric (a store's daily rows or total): a level between 20
and 5,000, a weekly pattern of its own (quieter weekends, one busier weekday), a linear trend of up to
+/-40 % a year, multiplicative noise of 2-8 %, missing days (no read that day, 3 %), and holidays
(about 8 a year, the metric at 10-60 % of its usual: listed in the check's ``holidays``, as an admin
would; ``--unlisted`` leaves them out and counts what they cost). Every series is judged healthy, and
again with anomalies injected, one kind per copy, every 21-35 days after the first 28:

* drop: one day at 10-50 % of its value (a drop of 50-90 %)
* spike: one day at 1.5-4x its value
* level shift: two days in a row 30 % off (up or down)
* stuck: the value of one day repeated for the next 5 days (an import that stopped)

The anomaly check is judged through its real path: ``evaluate`` over the day's value range, its
history kept by the engine's ``recorded`` (monitor.engine.history), a read each day at 20:00. A
judged bucket counts once. Recall: the injected events with an alert on one of their days; precision:
alerts on an event's days among all alerts on the copies with that kind; false alarms: alerts on the
healthy series, per 1,000 spreadsheet-days judged (past the learning days).

The plain z-score is the value against the mean and standard deviation of the last 14 days, all of
them (what most tools do without seasonality or exclusions), |z| > 3. The fixed threshold alerts
below half, or above twice, the mean of the first 14 days (the bounds an admin would write).

    .venv/bin/python bench/anomaly_eval.py [--sheets 100] [--days 365] [--seed 5] [--unlisted]
        [--sensitivity normal] [--seasonality day_of_week]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from monitor.checks import AnomalyCheck, Past, evaluate  # noqa: E402
from monitor.engine.history import Linked, recorded  # noqa: E402

START = datetime(2026, 1, 5, 20, tzinfo=UTC)  # a Monday, read at 20:00
LEARNING_DAYS = 14
FIRST_EVENT = 28
KINDS = ("drop", "spike", "level shift", "stuck")
RANGE = "Daily!B2:B"


@dataclass
class Series:
    values: list[float | None]  # None: no read that day
    holidays: set[int]
    events: list[tuple[int, int]] = field(default_factory=list)  # (first day, last day) of each anomaly


def healthy(rng: random.Random, days: int) -> Series:
    level = math.exp(rng.uniform(math.log(20), math.log(5000)))
    week = [rng.uniform(0.9, 1.1) for _ in range(5)] + [rng.uniform(0.3, 0.9), rng.uniform(0.2, 0.8)]
    week[rng.randrange(5)] *= rng.uniform(1.1, 1.4)
    trend = rng.uniform(-0.4, 0.4) / 365
    noise = rng.uniform(0.02, 0.08)
    holidays = {day for day in range(days) if rng.random() < 8 / 365}
    values: list[float | None] = []
    for day in range(days):
        if rng.random() < 0.03:
            values.append(None)
            continue
        value = level * week[(START + timedelta(days=day)).weekday()] * (1 + trend * day)
        value *= max(0.0, rng.gauss(1, noise))
        if day in holidays:
            value *= rng.uniform(0.1, 0.6)
        values.append(round(value, 2) if level > 200 else float(round(value)))
    return Series(values, holidays)


def injected(series: Series, kind: str, rng: random.Random) -> Series:
    values = list(series.values)
    events = []
    day = FIRST_EVENT + rng.randrange(7)
    while day + 6 < len(values):
        if day in series.holidays or values[day] is None:
            day += 1
            continue
        if kind == "drop":
            values[day] = round(values[day] * rng.uniform(0.1, 0.5), 2)
            events.append((day, day))
        elif kind == "spike":
            values[day] = round(values[day] * rng.uniform(1.5, 4), 2)
            events.append((day, day))
        elif kind == "level shift":
            factor = rng.choice((0.7, 1.3))
            for at in (day, day + 1):
                values[at] = round(values[at] * factor, 2) if values[at] is not None else None
            events.append((day, day + 1))
        else:
            for at in range(day + 1, day + 6):
                values[at] = values[day]
            events.append((day + 1, day + 5))
        day += rng.randint(21, 35)
    return Series(values, series.holidays, events)


def anomaly_alerts(series: Series, check: AnomalyCheck) -> set[int]:
    """The days the anomaly check alerts on, judged as the runs judge it."""
    alerts: set[int] = set()
    history = None
    for day, value in enumerate(series.values):
        if value is None:
            continue
        now = START + timedelta(days=day)
        ranges = {RANGE: {"range": RANGE, "majorDimension": "ROWS", "values": [[value]]}}
        past = Past(buckets=dict(history.buckets)) if history else Past()
        result = evaluate(check, ranges[RANGE], now, UTC, past=past)
        if result.is_finding:
            alerts.add(day)
        history = recorded([check], Linked(), history, [result], ranges, now, UTC)
    return alerts


def zscore_alerts(series: Series, check: AnomalyCheck) -> set[int]:
    alerts = set()
    for day, value in enumerate(series.values):
        window = [v for v in series.values[max(0, day - 14):day] if v is not None]
        if value is None or day < LEARNING_DAYS or len(window) < 3:
            continue
        mean, sd = statistics.fmean(window), statistics.pstdev(window)
        if sd > 0 and abs(value - mean) / sd > 3:
            alerts.add(day)
    return alerts


def threshold_alerts(series: Series, check: AnomalyCheck) -> set[int]:
    first = [v for v in series.values[:LEARNING_DAYS] if v is not None]
    mean = statistics.fmean(first)
    return {day for day, value in enumerate(series.values)
            if value is not None and day >= LEARNING_DAYS and not mean / 2 <= value <= mean * 2}


METHODS: dict[str, Callable[[Series, AnomalyCheck], set[int]]] = {
    "anomaly": anomaly_alerts, "z-score": zscore_alerts, "threshold": threshold_alerts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sheets", type=int, default=100)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--sensitivity", default="normal")
    parser.add_argument("--seasonality", default="day_of_week")
    parser.add_argument("--unlisted", action="store_true", help="holidays not listed in the check")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    started = time.perf_counter()
    judged_days = 0
    false_alarms: dict[str, int] = defaultdict(int)
    holiday_alarms: dict[str, int] = defaultdict(int)
    holidays_judged = 0
    found: dict[tuple[str, str], int] = defaultdict(int)  # (method, kind) -> events detected
    events: dict[str, int] = defaultdict(int)
    alarms: dict[tuple[str, str], tuple[int, int]] = defaultdict(lambda: (0, 0))  # (in events, all)
    for _ in range(args.sheets):
        series = healthy(rng, args.days)
        listed = () if args.unlisted else tuple((START + timedelta(days=day)).date()
                                                for day in series.holidays)
        check = AnomalyCheck(range=RANGE, metric="sum", sensitivity=args.sensitivity,
                             seasonality=args.seasonality, holidays=listed)
        judged = [day for day, v in enumerate(series.values) if v is not None and day >= LEARNING_DAYS
                  and day not in series.holidays]
        judged_days += len(judged)
        holidays_judged += sum(1 for day in series.holidays if day >= LEARNING_DAYS
                               and series.values[day] is not None)
        for method, alerts_of in METHODS.items():
            alerts = alerts_of(series, check)
            false_alarms[method] += len(alerts - series.holidays)
            holiday_alarms[method] += len(alerts & series.holidays)
        for kind in KINDS:
            copy = injected(series, kind, rng)
            events[kind] += len(copy.events)
            inside = {day for first, last in copy.events for day in range(first, last + 1)}
            for method, alerts_of in METHODS.items():
                alerts = alerts_of(copy, check) - copy.holidays
                found[method, kind] += sum(1 for first, last in copy.events
                                           if alerts & set(range(first, last + 1)))
                hits, total = alarms[method, kind]
                alarms[method, kind] = (hits + len(alerts & inside), total + len(alerts))
    print(f"{args.sheets} spreadsheets x {args.days} days, seasonality {args.seasonality}, sensitivity "
          f"{args.sensitivity}, holidays {'not listed' if args.unlisted else 'listed'}; "
          f"{judged_days:,} healthy spreadsheet-days judged ({time.perf_counter() - started:.0f} s)")
    print(f"{'method':<10} {'false alarms /1,000 days':>25}  " + "  ".join(f"{kind:>22}" for kind in KINDS))
    for method in METHODS:
        cells = []
        for kind in KINDS:
            hits, total = alarms[method, kind]
            precision = hits / total if total else 1.0
            cells.append(f"R {found[method, kind] / events[kind]:6.1%} P {precision:6.1%}")
        rate = false_alarms[method] / judged_days * 1000
        print(f"{method:<10} {rate:>25.2f}  " + "  ".join(f"{cell:>22}" for cell in cells))
    print(f"events per kind: {dict(events)}; holidays judged {holidays_judged}, alarms on them: "
          + ", ".join(f"{method} {count}" for method, count in holiday_alarms.items()))


if __name__ == "__main__":
    main()
