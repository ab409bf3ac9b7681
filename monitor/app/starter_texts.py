"""What ``sheet-monitor init`` writes, as text from a machine's paths: a starter ``monitor.toml``, the
two cron lines, and the systemd units that do the same as the cron lines.

Pure: every path comes in ``Place`` (``monitor.app.starter`` finds this machine's). The units are the
ones docs/operations.md shows for /home/sheetmon/sheet-monitor (a test holds the two alike).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

RUN_UNIT = "sheet-monitor-run"
WATCHDOG_UNIT = "sheet-watchdog"
SCHEMA_NAME = "monitor.schema.json"
TOKEN_NAME = "telegram-token"


@dataclass(frozen=True, slots=True)
class Place:
    """Where an installation lives: its config's folder (the state, secrets and logs beside it), the
    folder of the ``sheet-monitor`` and ``sheet-watchdog`` executables, and the user running them."""

    folder: Path
    bin: Path
    user: str

    @property
    def config(self) -> Path:
        return self.folder / "monitor.toml"

    @property
    def token_file(self) -> Path:
        return self.folder / "secrets" / TOKEN_NAME

    @property
    def logs(self) -> Path:
        return self.folder / "logs"


@dataclass(frozen=True, slots=True)
class Starter:
    """What the starter config names: its spreadsheets (ids), key files (as written, relative to the
    config's folder when inside it) and the Telegram chat, if any."""

    sheets: tuple[str, ...] = ()
    credentials: tuple[str, ...] = ("secrets/sa-1.json",)
    chat_id: str | None = None
    folders: tuple[str, ...] = ()  # Drive folder ids, a [[folders]] table each
    profile: str = "starter"  # what the spreadsheets and folders given are checked with
    suggested: str | None = None  # `suggest`'s output, written in place of the starter profile
    endpoint: str | None = None  # [google] api_endpoint: the sandbox's address
    suggested_folders: bool = False  # the suggestion holds [[folders]] tables of its own

    @property
    def watches_folders(self) -> bool:
        return bool(self.folders) or self.suggested_folders


def config_text(starter: Starter) -> str:
    """A ``monitor.toml`` that ``check-config`` takes once its key files are in place (and, without
    spreadsheets given, once one is listed: it says so)."""
    credentials = ", ".join(f'"{path}"' for path in starter.credentials)
    endpoint = (f'\napi_endpoint = "{starter.endpoint}"   # not Google: the sandbox\'s address'
                if starter.endpoint else "")
    chat = (f'chat_id = "{starter.chat_id}"   # the bot token comes from TELEGRAM_BOT_TOKEN_FILE'
            if starter.chat_id else
            '# chat_id = "-1001234567890"   # without a chat, messages are printed to stdout')
    return f"""\
#:schema ./{SCHEMA_NAME}
# sheet-monitor's config; every key is in docs/configuration.md. The line above lets an editor
# with taplo (Even Better TOML) check each key as it is typed. Check the whole with:
#   sheet-monitor check-config

[run]
budget = "4m30s"      # under the 5-minute cron interval: a run saves and exits before the next tick
state_dir = "state"   # next to this file

[google]
# The service accounts' JSON keys (mode 0600), relative to this file. Share each spreadsheet with
# the account's e-mail (Viewer is enough).
credentials = [{credentials}]{endpoint}

[telegram]
{chat}

{_profiles_text(starter)}
{_folders_text(starter)}{_sheets_text(starter)}"""


def _profiles_text(starter: Starter) -> str:
    if starter.suggested is not None:
        return ("# What `sheet-monitor suggest` proposed, as it wrote it: review each check.\n"
                + starter.suggested.rstrip("\n") + "\n")
    return f"""\
[profiles.{starter.profile}]
# The checks of the spreadsheets that name this profile. Add checks of their ranges, for example:
#   {{ kind = "formula_errors", range = "Stock!A1:H500" }},
#   {{ kind = "not_empty", range = "Stock!A2:A" }},
#   {{ kind = "threshold", range = "Stock!F2:F", aggregate = "min", warn = "< 5", fail = "< 0" }},
#   {{ kind = "freshness", range = "Stock!E2:E", warn = "> 2h", fail = "> 1d" }},
checks = [
  # warns when nobody has edited the spreadsheet for a day
  {{ kind = "freshness", source = "modified_time", warn = "> 1d" }},
]
"""


def _folders_text(starter: Starter) -> str:
    """A [[folders]] table per folder given: every Google Sheet in it, as Drive lists it at each run."""
    return "".join(f"""
[[folders]]
id = "{folder_id}"   # share the folder with the service account (Viewer is enough)
profile = "{starter.profile}"
# recursive = true   # its subfolders' spreadsheets too
""" for folder_id in starter.folders)


def _sheets_text(starter: Starter) -> str:
    sheets = starter.sheets
    if not sheets and starter.watches_folders:
        return ""
    if not sheets:
        return """\
# One [[sheets]] table per spreadsheet; its id is in its URL: docs.google.com/spreadsheets/d/ID/edit
# (at least one is needed).
# [[sheets]]
# id = "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgVE2upms"
# name = "Store 014"      # how messages name it
# profile = "starter"
"""
    return "\n" + "\n".join(f"""\
[[sheets]]
id = "{sheet_id}"
# name = "Store 014"   # how messages name it (without a name: by its id)
profile = "{starter.profile}"
""" for sheet_id in sheets)


def cron_text(place: Place, telegram: bool) -> str:
    """The two cron lines (the runs every 5 minutes, the watchdog every 15) with their environment."""
    token = f"TELEGRAM_BOT_TOKEN_FILE={place.token_file}"
    return f"""\
# sheet-monitor's two cron lines for this machine (crontab.example explains each). Add them to
# {place.user}'s crontab with `crontab -e`, or keep the others and add these:
#   (crontab -l 2>/dev/null; cat {shlex.quote(str(place.folder / 'sheet-monitor.cron'))}) | crontab -
SHEET_MONITOR_CONFIG={place.config}
{token if telegram else '# ' + token + '   (with [telegram] chat_id: the bot token, mode 0600)'}
*/5 * * * * {place.bin / 'sheet-monitor'} run >> {place.logs / 'run.log'} 2>&1
2-59/15 * * * * {place.bin / 'sheet-watchdog'} 2>> {place.logs / 'watchdog.log'}
"""


def systemd_units(place: Place, telegram: bool) -> dict[str, str]:
    """Unit file name -> text: a oneshot service and its timer for the runs, and for the watchdog."""
    return {
        f"{RUN_UNIT}.service": _service(place, telegram, "sheet-monitor: one time-boxed run",
                                        f"{place.bin / 'sheet-monitor'} run", "5min", _RUN_TIMEOUT_WHY),
        f"{RUN_UNIT}.timer": _timer("sheet-monitor run every 5 minutes", "*:0/5", "Persistent=false\n"),
        f"{WATCHDOG_UNIT}.service": _service(place, telegram,
                                             "sheet-monitor watchdog: are the runs happening?",
                                             str(place.bin / "sheet-watchdog"), "3min", ""),
        f"{WATCHDOG_UNIT}.timer": _timer("sheet-monitor watchdog every 15 minutes", "*:2/15", ""),
    }


_RUN_TIMEOUT_WHY = """\
# budget (4m30s) + 5 s is the most a healthy run takes; past this, systemd kills it, the next run
# reclaims its tasks, and the watchdog never sees it stuck.
"""


def _service(place: Place, telegram: bool, description: str, command: str, timeout: str, why: str) -> str:
    # LoadCredential hands the service a private copy of the token that only it can read, in %d.
    token = (f"LoadCredential={TOKEN_NAME}:{place.token_file}\n"
             f"Environment=TELEGRAM_BOT_TOKEN_FILE=%d/{TOKEN_NAME}\n") if telegram else ""
    return f"""\
[Unit]
Description={description}
Wants=network-online.target
After=network-online.target

[Service]
Type=oneshot
User={place.user}
WorkingDirectory={place.folder}
Environment=SHEET_MONITOR_CONFIG={place.config}
{token}ExecStart={command}
{why}TimeoutStartSec={timeout}
UMask=0077
NoNewPrivileges=yes
PrivateTmp=yes
"""


def _timer(description: str, calendar: str, more: str) -> str:
    return f"""\
[Unit]
Description={description}

[Timer]
OnCalendar={calendar}
AccuracySec=1s
{more}
[Install]
WantedBy=timers.target
"""
