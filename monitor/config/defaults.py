"""Every default of the configuration, in one place, with the reason for its value.

docs/configuration.md mirrors this table (a test checks that each key is documented with its value).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import Field

DEFAULT_CONFIG_NAME = "monitor.toml"
CONFIG_ENV = "SHEET_MONITOR_CONFIG"
TOKEN_ENV = "TELEGRAM_BOT_TOKEN"
TOKEN_FILE_ENV = "TELEGRAM_BOT_TOKEN_FILE"

# The metric history a spreadsheet keeps in the state (monitor.engine.history), bounded so the state
# grows with the number of checks, not with time. Its age is each change check's own ``over`` (at most
# checks.kinds.change.LONGEST_OVER; with none, only the previous read's value is kept), and a point is kept
# only when the value changed. 24 points spread over ``over`` tell the value "24h ago" within the hour
# (a day-over-day drop of X % is not about minutes), and cost at most ~1.2 KB per check when every read
# changes the value (bench/history_growth.py): the state of 5,000 spreadsheets stays a few MB.
HISTORY_POINTS = 24
# Distinct values a spreadsheet keeps of a range it lends to "every key of A in B" checks: 10,000 keys
# of ~10 characters is ~130 KB, the size of a large read already; a longer list is a finding that asks
# for a narrower range rather than a state that grows without bound.
HISTORY_KEYS = 10_000


@dataclass(frozen=True)
class Default:
    value: Any
    reason: str


DEFAULTS: Mapping[str, Default] = {
    "run.budget": Default(
        "4m30s", "under the 5-minute cron line (crontab.example, round_interval): a run takes up to "
        "budget + 5 s, and 30 s are left to save, send and exit before the next tick; a budget as long "
        "as the interval would make every other tick find the run still working and lose its turn "
        "(check-config reports a budget that does not fit round_interval)"),
    "run.round_interval": Default("5m", "the cron interval: a new round at most every cron tick"),
    "run.state_dir": Default("state", "the state folder next to the config, as shipped in the repo"),
    "run.change_detection": Default(
        True, "ask Drive which spreadsheets changed and read only those (and those due by max_age): "
        "one or two Drive requests a round instead of a read of every spreadsheet"),
    "run.change_poll": Default(
        "20s", "while a run has budget left it asks Drive's change feed again this often and reads what "
        "changed at once: Drive shows an edit about 3 minutes late, so 20 s adds little to that; a "
        "changes.list costs about 100 of Drive's 325,000 quota units a minute per user, 3 a minute "
        "is 0.1 % of it"),
    "run.suspects_after": Default(
        "5s", "a spreadsheet whose read was in flight when a run died is read alone, and not in a run's "
        "first seconds: read first thing it would be in flight whenever runs are cut short early (a "
        "deploy, an overlapping cron line), and each such kill counts against it; 5 s is longer than "
        "start-up and a first burst of reads, short against a run's budget"),
    "run.max_age": Default(
        "1h", "a spreadsheet Drive says is unchanged is still read at least this often: a change Drive "
        "does not report (a formula recomputed at Google) is seen within the hour"),
    "google.read_requests_per_minute": Default(
        60, "Google's default per-user read quota for the Sheets API"),
    "google.project_read_requests_per_minute": Default(
        300, "Google's default per-project read quota for the Sheets API; it applies to each Google "
        "Cloud project the credentials belong to"),
    "google.max_concurrent_reads": Default(
        64, "while the rolling window has room the run keeps this many in flight (half of them at most "
        "reads with grid data, whose answers are the large ones): 64 send a project's 300 reads a "
        "minute in about 2.5 s at Google's 0.4-0.5 s a read, so a round ends within seconds of the "
        "least time the window allows"),
    "google.request_timeout": Default(
        "30s", "long enough for a large batchGet, short enough that a hang costs little budget"),
    "google.api_endpoint": Default(None, "talk to Google itself; set it for the sandbox"),
    "breaker.failure_threshold": Default(3, "three transient failures in a row is not bad luck"),
    "breaker.cooldown": Default("15m", "three cron ticks: long enough for Google to recover"),
    "breaker.max_cooldown": Default(
        "2h", "the cap for a cooldown that doubles on each re-open: a fixed spreadsheet is noticed "
        "within two hours"),
    "breaker.unreadable_after": Default(
        "30m", "a spreadsheet none of whose reads worked for half an hour (its breaker's first probe "
        "included) is failing, not unlucky: it is listed as failing until a read works again"),
    "telegram.chat_id": Default(None, "no Telegram: messages are printed to stdout"),
    "telegram.message_thread_id": Default(None, "post to the chat itself, not a forum topic"),
    "telegram.api_base": Default("https://api.telegram.org", "Telegram's public Bot API"),
    "telegram.routes": Default((), "every alert goes to the default chat"),
    "telegram.listen": Default(True, "the team answers where it is told: buttons under alerts and "
                               "commands in the chat, read by the runs (the bot must be theirs alone)"),
    "telegram.operators": Default((), "anyone in the configured chats may press and command: they are "
                                  "the team's chats"),
    "alerts.summary": Default("on_change", "a summary only after a round that changed something"),
    "alerts.digest_at": Default("09:00", "the start of a working day"),
    "alerts.timezone": Default("UTC", "stored times are UTC; set your team's zone for the digest"),
    "alerts.reminder_every": Default("4h", "about twice per working day for what is still failing"),
    "alerts.escalate_after": Default(
        "off", "nothing escalates: the team answers its own chat; set it (e.g. \"2h\") once owners are "
        "named, so that a failure nobody acknowledged is told once more, to its owner"),
    "alerts.escalate_to_chat": Default(
        None, "an escalation goes to the spreadsheet's own chat (its route's, else the default one), "
        "naming its owner"),
    "alerts.escalate_to_thread": Default(
        None, "the chat itself; a topic number sends escalations to that forum topic (of escalate_to_chat, "
        "else of the default chat)"),
    "state.backend": Default("file", "one machine: the state folder [run] state_dir, nothing to run beside"),
    "state.url": Default(None, "only the Redis backend needs one"),
    "state.prefix": Default(
        "sheet-monitor", "every key of this monitor starts with it: several monitors share one Redis"),
    "state.quota_prefix": Default(
        None, "the quota log under the state's own prefix (<prefix>:quota): shared by this monitor's "
              "runners; monitors of other prefixes reading through the same projects name one together"),
    "state.password_env": Default(
        "SHEET_MONITOR_REDIS_PASSWORD", "the variable holding Redis's password, kept out of the file"),
    "state.runner": Default(
        None, "this machine's host name (its first label, other characters as '-'): one runner per host"),
    "state.lease": Default(
        "10s", "runners sharing a Redis: a killed run's reads are taken over 10 s later; a process "
        "stalled under 10 s keeps them"),
    "metrics.textfile": Default(None, "no metrics file; set it for node_exporter's textfile collector"),
    "metrics.pushgateway": Default(None, "no push; set it when no node_exporter runs on this host"),
    "metrics.job": Default("sheet_monitor", "the job label Prometheus shows for the monitor"),
    "metrics.instance": Default(
        None, "the host's name: each runner's metrics are a group of their own on the Pushgateway"),
    "metrics.per_sheet": Default(
        False, "fleet counts only: a series per spreadsheet is costly in Prometheus beyond a small fleet"),
    "report.keep": Default(
        "7d", "a week of runs and verdict changes: last week's same weekday to compare with, for about "
        "1 MB of state (the runs' records) and ~200 bytes per spreadsheet (bench/report_history.py)"),
    "report.html": Default(None, "no status page written after each run; `sheet-monitor report --html` "
                           "writes one on demand"),
    "watchdog.max_silence": Default("15m", "three missed 5-minute cron ticks"),
    "watchdog.reminder_every": Default("4h", "an outage is re-announced twice per working day"),
    "report.url": Default(None, "the page's address is not known: messages that list only some "
                          "spreadsheets point to `sheet-monitor sheets` for the rest"),
    "watchdog.heartbeat_url": Default(None, "no external dead-man's switch"),
    "watchdog.stuck_grace": Default(
        "2m", "a run still marked started after budget + this is stuck, not slow"),
    "watchdog.failed_runs": Default(3, "three failed runs in a row is an outage, one is noise"),
}


def default(key: str) -> Any:
    """A pydantic ``Field`` holding ``DEFAULTS[key]``, its reason as the description."""
    entry = DEFAULTS[key]
    return Field(default=entry.value, description=entry.reason)
