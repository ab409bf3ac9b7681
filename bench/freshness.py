"""Freshness with change detection: from an edit to the verdict that saw it, 700 spreadsheets, one credential.

The sandbox runs in its own process with Google's latency model, Drive's change-feed delay (an edit
reaches the change feed at its spreadsheet's next moment, about every 3 minutes; the bench prints the
model it ran with) and Google's real quotas (Sheets: 60 reads a minute per user, 300 per project; one
credential, so 60 a minute), and every run is
``python -m monitor.cli run`` in its own process, started every round interval (5 minutes) as a cron
line starts it, whether or not the previous one still works (its lock then sends the new one home),
with the documented budget (4m30s) and the defaults ``max_age = "1h"`` and ``change_detection``.

Once the first round has judged every spreadsheet, an editor edits a share of them per 5 minutes
(5 %, 20 %, 50 % of 700), each at most once a period, at uniformly random moments, through the
sandbox's control API (``PUT /_sandbox/spreadsheets/{id}``: new contents, modifiedTime moves, Drive
records a change), for ``--periods`` periods (3 by default), then stops; the runs go on until every
edit has been judged or ``--drain`` more ticks have passed. An edit writes a marker, a date no other
edit of that spreadsheet uses, as the newest "Updated" of its Stock tab; the freshness check's newest
moment, which the monitor stores with each read, reads it back (``edit_watch.py``). The bench polls
the state without a lock, as the watchdog does, and records every read it finds.

Figures per setting: reads per 5 minutes while editing (the sandbox's own count of Sheets reads: a
batchGet, or a spreadsheets.get for a retry with details or a time zone), Drive
requests (the sandbox's count of ``changes`` requests), rounds started, the lag from each edit to the
first read that found it (p50, p95, max, and as a fraction of the round interval), how many rounds
started between the edit and that read, edits never judged (must be 0), 429s.

The bench checks what it claims: every edit is matched to a read made after it that found its
marker (or a later one); the reads it observed are exactly the reads the runs logged as done; the
sandbox served at least one Sheets read per read the runs sent. It exits 1 when an edit was missed, a check
failed, or Google answered 429.

``--monitor-root PATH`` runs another checkout's monitor (an older commit, say) against the same
sandbox, for before/after figures; ``--logs DIR`` keeps every run's log.

``--scale K`` shortens everything K times: Sheets quotas x K, Google's latency, the feed delay, the
request timeout, the round interval, the budget, ``max_age`` and the editor's period / K. Counts (reads, Drive
requests, edits, rounds) are per round interval and do not change; times are printed multiplied
back by K, in Google's minutes, and as fractions of the interval. What does not scale: a run's
start-up (~0.6 s), the engine's save reserve and minimum request time (3 s + 1 s of each budget),
its retry backoff, and the 60 s windows of both quota meters (at K = 10 a window spans two
intervals, not a fifth of one, so a run may send a round's reads in one burst). At x10 lags come
out 0.1 to 0.2 of an interval shorter at p95 and max than at x1 (README.md): take lags from x1
when they decide something.

    .venv/bin/python bench/freshness.py [--settings 5 20 50 20:off] [--periods 3] [--drain 6]
                                        [--sheets 700] [--scale 1] [--seed 7] [--logs DIR]
                                        [--monitor-root PATH]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, sandbox_url, served_dataset  # noqa: E402
from edit_watch import Editor, Observer, editable_payloads, match, reads_that_found_an_edit  # noqa: E402

from monitor.config import load_config  # noqa: E402
from sheet_sandbox.feed_delay import GOOGLE_FEED_MODEL as FEED_MODEL  # noqa: E402

PER_USER, PER_PROJECT = 60, 300  # Google's read quotas per minute: one credential, one project
INTERVAL_S = 300.0  # the cron line and round_interval: every 5 minutes
BUDGET_S = 270.0  # 4m30s: the documented budget under a 5-minute cron line
MAX_AGE_S = 3600.0  # the default max_age
TIMEOUT_S = 30.0  # the monitor's default request timeout
CHANGE_POLL_S = 20.0  # the default [run] change_poll: a run asks Drive's feed this often while it lives
SHEETS_READS = "GET /v4/spreadsheets/"  # batchGet, and spreadsheets.get (details, a time zone)
DRIVE_CHANGES = "GET /drive/v3/changes"  # changes.list and (with /startPageToken) its start
FIRST_ROUND_TICKS = 12  # a first round that takes longer than this means something else is wrong


@dataclass(frozen=True)
class Setting:
    share: float  # of the spreadsheets edited per round interval
    detection: bool

    @classmethod
    def parse(cls, text: str) -> Setting:
        """"20" -> 20 % with change detection; "20:off" -> without."""
        percent, _, switch = text.partition(":")
        if switch not in ("", "on", "off"):
            raise argparse.ArgumentTypeError(f"{text!r}: write a percentage, then :off for no detection")
        return cls(float(percent) / 100, switch != "off")

    def __str__(self) -> str:
        return f"{self.share:.0%} edited, change detection {'on' if self.detection else 'off'}"


@dataclass
class Cron:
    """Starts a run every ``interval`` seconds, as a cron line does; keeps each tick's sandbox stats."""

    config: Path
    logs: Path
    interval: float
    control: requests.Session
    base: str
    monitor_root: Path = ROOT  # whose monitor the runs are (another checkout: before/after figures)
    started: float = field(default_factory=time.monotonic)
    ticks: list[dict] = field(default_factory=list)  # the sandbox's stats as each tick came
    runs: list[subprocess.Popen] = field(default_factory=list)

    @property
    def next_at(self) -> float:
        return self.started + len(self.ticks) * self.interval

    def wait_for_tick(self) -> int:
        """Sleeps until the next tick, records the sandbox's stats; the tick's number."""
        time.sleep(max(0.0, self.next_at - time.monotonic()))
        self.ticks.append({**self.stats(), "at": datetime.now(UTC)})
        return len(self.ticks) - 1

    def start_run(self) -> None:
        env = {key: value for key, value in os.environ.items() if key != "TELEGRAM_BOT_TOKEN"}
        env["PYTHONPATH"] = str(self.monitor_root)
        with open(self.logs / f"run-{len(self.runs):03d}.log", "w") as log:
            self.runs.append(subprocess.Popen(
                [sys.executable, "-m", "monitor.cli", "run", "--config", str(self.config)],
                cwd=self.monitor_root, env=env, stdout=subprocess.DEVNULL, stderr=log,
            ))

    def finish(self) -> dict:
        """Waits for the runs still working; the sandbox's stats after the last one."""
        for run in self.runs:
            run.wait(timeout=self.interval * 2 + 60)
        return {**self.stats(), "at": datetime.now(UTC)}

    def stats(self) -> dict:
        return self.control.get(f"{self.base}/_sandbox/stats", timeout=30).json()

    def log_lines(self, first: int = 0, stop: int | None = None) -> list[dict]:
        """The JSON log lines of the runs started at ticks ``first`` to ``stop`` (run n at tick n)."""
        lines = []
        for path in sorted(self.logs.glob("run-*.log"))[first:stop]:
            lines += [json.loads(line) for line in path.read_text().splitlines() if line.startswith("{")]
        return lines


def measure(args, setting: Setting) -> dict:
    scale = args.scale
    interval = INTERVAL_S / scale
    run = {"round_interval": f"{interval:g}s", "budget": f"{BUDGET_S / scale:g}s",
           "max_age": f"{MAX_AGE_S / scale:g}s", "change_detection": setting.detection,
           "change_poll": f"{CHANGE_POLL_S / scale:g}s"}
    with tempfile.TemporaryDirectory() as tmp, served_dataset(
        Path(tmp), sheets=args.sheets, credentials=args.credentials, per_user=PER_USER * scale,
        per_project=PER_PROJECT * scale, faults=False, request_timeout=f"{TIMEOUT_S / scale:g}s",
        latency_scale=1 / scale, seed=args.seed, run=run,
        **({"feed_delay_scale": 1 / scale} if args.feed_delay else {"feed_delay": "off"}),
    ) as config_path, requests.Session() as control:
        control.trust_env = False  # never through a proxy: the sandbox is on 127.0.0.1
        config = load_config(config_path)
        base = sandbox_url(config_path)
        payloads = editable_payloads(control, base, [sheet.id for sheet in config.sheets])
        observer = Observer(config.run.state_dir, len(config.sheets), every=interval / 100)
        observer.start()
        logs = args.logs / f"{setting.share:.0%}-{'on' if setting.detection else 'off'}" if args.logs \
            else Path(tmp) / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        cron = Cron(config_path, logs, interval, control, base, args.monitor_root or ROOT)
        editor, first_edit_tick = drive(args, setting, cron, observer, payloads, base)
        final = cron.finish()
        observer.stop()
        if editor.error is not None:
            raise SystemExit(f"the editor failed: {editor.error!r}")
        reads = observer.copy()
        match(editor.edits, reads)
        return summarise(args, setting, cron, final, editor, observer, reads, first_edit_tick)


def drive(args, setting: Setting, cron: Cron, observer: Observer, payloads: dict, base: str
          ) -> tuple[Editor, int]:
    """Ticks until the first round is done, edits for ``args.periods`` ticks, then ticks until every
    edit was judged or ``args.drain`` more ticks passed. The editor, and the tick it started at."""
    editor, first_edit_tick = None, None
    count = round(setting.share * args.sheets)
    while True:
        tick = cron.wait_for_tick()
        if editor is None:
            if observer.first_round_done.is_set():
                editor = Editor(base, payloads, count, cron.interval, args.periods,
                                start=cron.started + tick * cron.interval, seed=args.seed)
                editor.start()
                first_edit_tick = tick
            elif tick >= FIRST_ROUND_TICKS:
                raise SystemExit(f"the first round was not done after {tick} ticks")
        elif tick > first_edit_tick + args.periods:  # the round of the last period's edits has run
            editor.join()
            match(editor.edits, observer.copy())
            waiting = sum(edit.seen_at is None for edit in editor.edits)
            if not waiting or tick >= first_edit_tick + args.periods + args.drain:
                return editor, first_edit_tick
        cron.start_run()


def summarise(args, setting: Setting, cron: Cron, final: dict, editor: Editor, observer: Observer,
              reads: dict, first_edit_tick: int) -> dict:
    # The rounds that judge the edits: from the tick after editing began to the tick it ended.
    window = range(first_edit_tick + 1, first_edit_tick + args.periods + 1)
    ticks = cron.ticks + [final]
    per_tick = [{key: count(ticks[i + 1], key) - count(ticks[i], key) for key in ("sheets_reads", "drive")}
                for i in window]
    lines, windowed = cron.log_lines(), cron.log_lines(window.start, window.stop)
    rounds = [parse_ts(line["ts"]) for line in events(lines, "round_started")]
    edits = editor.edits
    return {
        "setting": setting, "edits": edits, "per_tick": per_tick,
        "lags": sorted(edit.lag for edit in edits if edit.lag is not None),
        "rounds_late": [sum(edit.made_at < at <= edit.seen_at for at in rounds)
                        for edit in edits if edit.seen_at is not None],
        "rounds_started": len(events(windowed, "round_started")),
        "unread": [line.get("unread", 0) for line in events(windowed, "round_started")],
        "found": reads_that_found_an_edit(edits, reads, ticks[window.start]["at"], ticks[window.stop]["at"]),
        "idle_runs": sum(line.get("outcome") == "nothing_to_do" for line in events(windowed, "run_finished")),
        "reads_logged": len(events(lines, "task_done")),
        "reads_sent": sum(line.get("tasks", 0) for line in events(lines, "run_finished")),
        "observed": sum(len(seen) for seen in reads.values()),
        "sheets_reads": count(final, "sheets_reads"), "quota_exceeded": final.get("quota_exceeded", 0),
        "forbidden": final.get("by_status", {}).get("403", 0),
        "feed_failed": len(events(lines, "change_feed_failed")),
        "skipped_runs": len(events(lines, "run_skipped")),
        "ticks": len(cron.ticks), "editor_delay": editor.worst_delay,
        "poll_ms": 1000 * observer.poll_seconds / max(observer.polls, 1),
        "wrong_order": sum(edit.seen_at is not None and edit.seen_at < edit.made_at for edit in edits),
        "feed_delay": final["feed_delay"],  # the sandbox's, with what it held
        "parts": lag_parts(args, edits, lines),
        "refusals": [traced(refusal, lines) for refusal in final.get("refusals", [])],
    }


def traced(refusal: dict, lines: list[dict]) -> str:
    """One 429 the sandbox answered, told with what the runs logged about its spreadsheet (or, for a
    request naming none, anything) within 5 s of it: which of a run's requests met the quota."""
    at = refusal["at"]
    near = [line for line in lines if abs(parse_ts(line["ts"]).timestamp() - at) <= 5.0
            and (refusal["spreadsheet"] is None or line.get("spreadsheet_id") == refusal["spreadsheet"])]
    told = "; ".join(f"{line['event']} {parse_ts(line['ts']).timestamp() - at:+.1f} s" for line in near[:4])
    return (f"{datetime.fromtimestamp(at, UTC):%H:%M:%S} {refusal['endpoint']} by {refusal['user']} for "
            f"{refusal['spreadsheet'] or '(no spreadsheet)'}: {told or 'nothing logged near it'}")


def lag_parts(args, edits, lines: list[dict]) -> dict[str, list[float]]:
    """Each judged edit's lag split into its parts, in the bench's seconds: the feed's delay (from the
    edit to its spreadsheet's moment, by the sandbox's own model and seed), the wait for a look at the
    feed after it (a round's start or a run's watch: their log lines), the wait for a read slot, and
    the read (its task_done's duration). A read that came before any look after the moment (a round's
    routine read) has no slot wait; one that came before the moment, no look."""
    scale = 1 / args.scale
    looks = sorted(parse_ts(line["ts"]) for line in lines
                   if line.get("event") in ("round_started", "feed_watched"))
    done: dict[str, list[tuple[datetime, float]]] = {}
    for line in events(lines, "task_done"):
        done.setdefault(line["spreadsheet_id"], []).append((parse_ts(line["ts"]), line["duration_ms"] / 1000))
    parts: dict[str, list[float]] = {"feed": [], "look": [], "slot": [], "read": [], "beyond the feed": []}
    for edit in edits:
        if edit.seen_at is None or edit.sheet_id not in done:
            continue
        ended, seconds = min(done[edit.sheet_id],
                             key=lambda read: abs((read[0] - edit.seen_at).total_seconds()))
        started = ended.timestamp() - seconds
        shown = FEED_MODEL.surfaces_at(args.seed, edit.sheet_id, edit.made_at.timestamp(), scale) \
            if args.feed_delay else edit.made_at.timestamp()
        look = next((at.timestamp() for at in looks if at.timestamp() >= shown), started)
        feed = min(shown, started) - edit.made_at.timestamp()
        waited = max(0.0, min(look, started) - shown)
        parts["feed"].append(feed)
        parts["look"].append(waited)
        parts["slot"].append(max(0.0, started - max(look, shown)))
        parts["read"].append(seconds)
        parts["beyond the feed"].append((edit.seen_at - edit.made_at).total_seconds() - feed)
    return {name: sorted(values) for name, values in parts.items()}


def events(lines: list[dict], name: str) -> list[dict]:
    return [line for line in lines if line.get("event") == name]


def count(stats: dict, key: str) -> int:
    by_endpoint = stats.get("by_endpoint", {})
    if key == "sheets_reads":
        return sum(n for endpoint, n in by_endpoint.items() if endpoint.startswith(SHEETS_READS))
    if key == "drive":
        return sum(n for endpoint, n in by_endpoint.items() if endpoint.startswith(DRIVE_CHANGES))
    return stats.get(key, 0)


def parse_ts(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def percentile(ordered: list[float], q: float) -> float:
    """Nearest rank: the smallest value with at least ``q`` of the values at or below it."""
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)] if ordered else float("nan")


def minutes(seconds: float) -> str:
    return f"{int(seconds // 60)}m{seconds % 60:04.1f}s"


def describe(args, m: dict) -> str:
    scale, interval = args.scale, INTERVAL_S
    edits, lags, per_tick = m["edits"], [lag * scale for lag in m["lags"]], m["per_tick"]
    missed = sum(edit.seen_at is None for edit in edits)
    within = sum(lag <= interval for lag in lags)
    late = {n: m["rounds_late"].count(n) for n in sorted(set(m["rounds_late"]))}
    reads = [tick["sheets_reads"] for tick in per_tick]
    drive = [tick["drive"] for tick in per_tick]
    figures = ", ".join(f"{name} {minutes(percentile(lags, q))} ({percentile(lags, q) / interval:.2f})"
                        for name, q in (("p50", 0.5), ("p95", 0.95), ("max", 1.0)))
    mode = f"scale x{scale}, times below in Google's minutes" if scale > 1 else "Google's own scale"
    if args.monitor_root:
        mode += f", monitor from {args.monitor_root}"
    return "\n".join([
        f"{args.sheets} spreadsheets, {m['setting']} ({mode}):",
        f"  Drive's change-feed delay: {feed_delay_text(m['feed_delay'], scale)}",
        f"  edits {len(edits)} in {args.periods} periods of 5 min ({len(edits) // max(args.periods, 1)} "
        f"each), judged {len(lags)}, missed {missed}; judged within 5 min: {within}/{len(edits)}",
        f"  lag from edit to verdict: {figures} (fraction of the 5-minute interval)",
        "  its parts (p50/p95/max): " + "; ".join(
            f"{name} {'/'.join(minutes(percentile(values, q) * scale) for q in (0.5, 0.95, 1.0))}"
            for name, values in m["parts"].items()),
        "  rounds started between an edit and its verdict: "
        + ", ".join(f"{n}: {k} edits" for n, k in late.items()),
        f"  per 5 min, the {len(reads)} ticks after each period: reads (the sandbox's Sheets reads) "
        f"{'/'.join(map(str, reads))} (mean {sum(reads) / max(len(reads), 1):.0f}), Drive requests "
        f"{'/'.join(map(str, drive))}, rounds started "
        f"{m['rounds_started']} (judged unread {summary(m['unread'])}), runs with nothing to do "
        f"{m['idle_runs']}; reads that found an edit {m['found']} of {sum(reads)}",
        f"  429s {m['quota_exceeded']}, 403s {m['forbidden']}, change feed failures {m['feed_failed']}; "
        f"{m['ticks']} ticks, {m['skipped_runs']} runs found the lock held",
        *(f"    429: {line}" for line in m["refusals"]),
        f"  checks: reads observed {m['observed']} = reads the runs logged {m['reads_logged']}: "
        f"{m['observed'] == m['reads_logged']}; Sheets reads served {m['sheets_reads']} >= reads sent "
        f"{m['reads_sent']}: {m['sheets_reads'] >= m['reads_sent']}; verdicts before their edit: "
        f"{m['wrong_order']}; editor "
        f"late by at most {m['editor_delay'] * scale:.1f} s; a state poll {m['poll_ms']:.0f} ms",
    ])


def feed_delay_text(feed: dict, scale: int) -> str:
    """The sandbox's feed delay as the bench ran it, its times in Google's minutes."""
    if not feed["active"]:
        return "off (every edit in the feed at once)"
    return (f"{feed['model']} at scale {feed['scale']:g}: a moment every "
            f"{feed['period_seconds'] * scale:g} s per spreadsheet, an edit held at most "
            f"{feed['longest_seconds'] * scale:g} s; {feed['edits']} edits held, "
            f"{feed['surfaced']} changes surfaced, mean wait {feed['mean_wait_seconds'] * scale:.0f} s")


def summary(values: list[int]) -> str:
    return f"{min(values)}..{max(values)}" if values else "-"


def passed(m: dict) -> bool:
    return (all(edit.seen_at is not None for edit in m["edits"]) and not m["quota_exceeded"]
            and len(m["parts"]["read"]) == len(m["lags"])  # every judged edit's read was found in the logs
            and m["observed"] == m["reads_logged"] and m["sheets_reads"] >= m["reads_sent"]
            and not m["wrong_order"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settings", nargs="+", type=Setting.parse,
                        default=[Setting.parse(text) for text in ("5", "20", "50", "20:off")],
                        help="percent edited per 5 minutes; :off runs it with change_detection = false")
    parser.add_argument("--periods", type=int, default=3, help="5-minute periods of editing")
    parser.add_argument("--drain", type=int, default=6, help="ticks after editing to wait for verdicts")
    parser.add_argument("--sheets", type=int, default=700)
    parser.add_argument("--credentials", type=int, default=1,
                        help="service accounts of one Cloud project (5,000 spreadsheets: 5)")
    parser.add_argument("--no-feed-delay", dest="feed_delay", action="store_false",
                        help="Drive shows every edit at once (the sandbox's feed delay off)")
    parser.add_argument("--scale", type=int, default=1, help="quotas x K; latency, timeout and times / K")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--logs", type=Path, help="keep the runs' logs in this folder")
    parser.add_argument("--monitor-root", type=Path, help="run the monitor of this checkout instead")
    args = parser.parse_args()
    ok = True
    for setting in args.settings:
        started = time.monotonic()
        m = measure(args, setting)
        print(describe(args, m), f"\n  bench time {time.monotonic() - started:.0f} s", flush=True)
        ok = ok and passed(m)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
