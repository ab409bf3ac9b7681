"""Loading: the config file (+ the sheets CSV, the credential files, the token) -> one ``Config``.

The builder validates section by section, check by check and sheet by sheet, so that every problem
in the file is found in one pass and reported at its own line; it builds the ``Config`` only when
there is none.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from monitor.checks import CHECK_KINDS, Check, CrossSheetCheck
from monitor.core.wording import counted

from .advice import warnings_for
from .cross import link_cross_sheets
from .defaults import CONFIG_ENV, DEFAULT_CONFIG_NAME, TOKEN_ENV, TOKEN_FILE_ENV
from .folders import FolderTable, folder_tables, resolve_folder
from .issues import ConfigError, ConfigIssue, Loc, reading_order
from .maintenance import MaintenanceTable, MaintenanceWindow, cover
from .model import Config, Folder, Profile, Sheet, config_fingerprint
from .positions import TomlPositions
from .reworded import choices_fix, explain, filled_by_loader, key_path, written_keys
from .secrets import check_credentials, with_token
from .sections import PER_SHEET_MAX, SECTIONS, TOP_KEYS
from .sheets import Entry, ProfileTable, SheetTable, resolve_sheets
from .sheets_csv import read_sheets_csv

_SECRET_KEYS = ("bot_token", "token")


def resolve_config_path(option: str | os.PathLike[str] | None,
                        environ: Mapping[str, str] | None = None) -> Path:
    """``--config`` if given, else ``$SHEET_MONITOR_CONFIG``, else ``./monitor.toml``."""
    environ = os.environ if environ is None else environ
    if option:
        return Path(option)
    if environ.get(CONFIG_ENV):
        return Path(environ[CONFIG_ENV])
    return Path(DEFAULT_CONFIG_NAME)


def load_config(path: str | os.PathLike[str], environ: Mapping[str, str] | None = None, *,
                require_secrets: bool = True, require_sheets: bool = True) -> Config:
    """Read, validate and resolve the configuration; raise ``ConfigError`` listing every problem.

    ``require_secrets=False`` is for read-only commands (status, dlq, breakers): credential files are
    not opened and a missing Telegram token is not an error (the token is still read when present).
    ``require_sheets=False`` is for the commands that read spreadsheets the config need not list
    (`suggest`, `check URL`): a config of ``[google]`` alone is then whole.
    """
    environ = os.environ if environ is None else environ
    path = Path(path)
    shown = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError([ConfigIssue(shown, "", "config file not found", (
            f"pass --config PATH, set {CONFIG_ENV}, or create {DEFAULT_CONFIG_NAME} in the current "
            "folder (see docs/configuration.md)"))]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([ConfigIssue(shown, "", f"cannot read the config file: {exc}",
                                       "check the path, its permissions and that it is UTF-8 text")
                           ]) from None
    return config_of_text(text, path, environ, require_secrets=require_secrets,
                          require_sheets=require_sheets)


def config_of_text(text: str, path: str | os.PathLike[str], environ: Mapping[str, str] | None = None, *,
                   require_secrets: bool = True, require_sheets: bool = True) -> Config:
    """``load_config`` of a config's text, as if read from ``path`` (its paths relative to its folder):
    a config a command composes from its options (`suggest --credentials`) is held to the same rules."""
    environ = os.environ if environ is None else environ
    path = Path(path)
    shown = str(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([_syntax_issue(shown, text, exc)]) from None
    return _Builder(path, shown, text, environ, require_secrets, require_sheets).build(data)


def _syntax_issue(shown: str, text: str, exc: tomllib.TOMLDecodeError) -> ConfigIssue:
    message = str(exc)
    match = re.search(r"\s*\(at line (\d+), column (\d+)\)", message)
    if match:
        where, problem = f"{shown}:{match.group(1)}:{match.group(2)}", message[: match.start()]
    else:
        # "(at end of document)": an unclosed string, table or list, which the last line leaves open.
        end = re.search(r"\s*\(at end of document\)", message)
        where = f"{shown}:{TomlPositions(text).last_line}"
        problem = message[: end.start()] + " at the end of the file" if end else message
    return ConfigIssue(where, "", f"TOML syntax error: {problem}",
                       "correct the syntax at that position: strings need quotes, tables look like "
                       "[name], lists like [\"a\", \"b\"]; each key may appear once per table")


class _Builder:
    def __init__(self, path: Path, shown: str, text: str, environ: Mapping[str, str],
                 require_secrets: bool, require_sheets: bool = True) -> None:
        self.path = path
        self.shown = shown
        self.base_dir = path.resolve().parent
        self.positions = TomlPositions(text)
        self.environ = environ
        self.require_secrets = require_secrets
        self.require_sheets = require_sheets
        self.issues: list[ConfigIssue] = []
        self.reported: list[Loc] = []  # where each issue of the config file itself is
        # Ids and names of [[sheets]] tables with problems of their own (each told at its line).
        self.unloaded: set[str] = set()
        self.check_places: dict[int, Loc] = {}  # id(check) -> where it is written

    # -- issue helpers

    def add(self, loc: Loc, problem: str, fix: str) -> None:
        self.issues.append(ConfigIssue(self.where(loc), key_path(loc), problem, fix))
        self.reported.append(loc)

    def where(self, loc: Loc) -> str:
        return self.positions.where(self.shown, loc)

    def reporter(self, loc: Loc) -> Callable[[Loc, str, str], None]:
        """``add`` for the keys under ``loc``."""
        return lambda below, problem, fix: self.add((*loc, *below), problem, fix)

    def locator(self, loc: Loc) -> Callable[[str], tuple[str, str]]:
        return lambda key: (self.where((*loc, key)), key_path((*loc, key)))

    def check_place(self, check: Check) -> tuple[str, str] | None:
        """Where a check's ``other`` is written (a profile's check: once for all its spreadsheets)."""
        loc = self.check_places.get(id(check))
        return None if loc is None else (self.where((*loc, "other")), key_path((*loc, "other")))

    def validate(self, model: type[BaseModel], data: Any, loc: Loc, **context: Any) -> Any:
        """model.model_validate(data) or None, with every pydantic error turned into an issue."""
        try:
            return model.model_validate(data, context={"base_dir": self.base_dir, **context})
        except ValidationError as exc:
            for error in exc.errors():
                self.add((*loc, *error["loc"]), *explain(model, error))
            return None

    # -- the whole file

    def build(self, data: dict[str, Any]) -> Config:
        misspelt = self.top_keys(data)
        sections = {name: self.section(name, data.get(name, {})) for name in SECTIONS}
        profiles = self.profiles(data.get("profiles", {}))
        reported = len(self.issues)
        entries = self.toml_sheets(data.get("sheets", []))
        if "sheets_file" in data:
            entries += read_sheets_csv(data["sheets_file"], self.base_dir, self.shown, self.add,
                                       self.issues)
        folders = self.folders(data.get("folders", []), profiles)
        if (not entries and self.require_sheets and len(self.issues) == reported
                and not self.lists_elsewhere(misspelt) and not data.get("folders")):
            self.no_spreadsheets(data)
        # What a misspelt [profile.NAME] or [[sheet]] holds is told there, once: the spreadsheets that
        # name those profiles, and the cross-sheet checks naming those spreadsheets, are not told again.
        written_there = [data[key] for key, meant in misspelt.items() if meant == "profiles"]
        resolved, unloaded = resolve_sheets(entries, profiles, self.issues, _names_in(written_there))
        unloaded |= self.unloaded | _sheet_names(data[key] for key, meant in misspelt.items()
                                                 if meant in ("sheets", "sheets_file"))
        sheets = link_cross_sheets(resolved, self.issues, unloaded=unloaded, locate=self.check_place)
        if sections["telegram"] is not None:
            self.route_profiles(sections["telegram"], profiles)
        if sections["alerts"] is not None and sections["telegram"] is not None:
            self.escalation_chat(sections["alerts"], sections["telegram"])
        maintenance = self.maintenance(data.get("maintenance", []), sheets, sections["alerts"],
                                       tuple(tag for folder in folders for tag in folder.tags))
        if sections["metrics"] is not None:
            self.per_sheet_metrics(sections["metrics"], sheets)
        if sections["telegram"] is not None:
            sections["telegram"] = with_token(sections["telegram"], self.environ, self.require_secrets,
                                              self.add, self.issues)
        if sections["google"] is not None and self.require_secrets:
            projects = check_credentials(sections["google"], self.add)
            sections["google"] = sections["google"].model_copy(update={"credential_projects": projects})
        if self.issues:
            # One mistake found twice (the same check of a profile, say) is one problem to fix.
            raise ConfigError(sorted(dict.fromkeys(self.issues), key=reading_order))
        # Everything below was validated above: constructed, not validated again.
        return Config.model_construct(
            path=self.path.resolve(),
            profiles=tuple(profile for profile in profiles.values() if profile is not None),
            sheets=sheets,
            maintenance=maintenance,
            folders=folders,
            fingerprint=config_fingerprint(sheets),
            warnings=warnings_for(sections, sheets, tuple(profiles),
                                  [folder.profile.name for folder in folders]),
            **sections,
        )

    def top_keys(self, data: dict[str, Any]) -> dict[str, str]:
        """Reports each unknown top-level key; returns those that look like a misspelt known one
        (``[[sheet]]`` for ``[[sheets]]``), with the key meant."""
        misspelt = {}
        for key in data:
            if key not in TOP_KEYS:
                self.add((key,), f"unknown top-level key or section {key!r}", choices_fix(key, TOP_KEYS))
                meant = difflib.get_close_matches(key, TOP_KEYS, n=1)
                if meant:
                    misspelt[key] = meant[0]
        return misspelt

    def lists_elsewhere(self, misspelt: Mapping[str, str]) -> bool:
        """Were spreadsheets written where they are not read, and told there: under a misspelt
        ``[[sheet]]``, or a ``sheets``/``sheets_file`` key inside a section?"""
        return (any(meant in ("sheets", "sheets_file") for meant in misspelt.values())
                or any(len(loc) > 1 and loc[-1] in ("sheets", "sheets_file") for loc in self.reported))

    def section(self, name: str, raw: Any) -> Any:
        if not isinstance(raw, dict):
            self.add((name,), f"{name} must be a table", f"write it as a [{name}] section")
            return None
        if name == "telegram":
            for secret in _SECRET_KEYS:
                if secret in raw:
                    self.add((name, secret), "secrets never live in the config file",
                             f"remove {secret} and export {TOKEN_ENV} (or {TOKEN_FILE_ENV} with the "
                             "path of a file holding it) in the environment of cron and your shell")
            raw = {k: v for k, v in raw.items() if k not in _SECRET_KEYS}
        model = SECTIONS[name]
        for key in filled_by_loader(model) & raw.keys():
            self.add((name, key), f"unknown key {key!r}", choices_fix(key, written_keys(model)))
        raw = {k: v for k, v in raw.items() if k not in filled_by_loader(model)}
        return self.validate(model, raw, (name,))

    def no_spreadsheets(self, data: dict[str, Any]) -> None:
        """Nothing to check is a mistake, not a quiet install: a run would drop its round and tell no
        one. Reported once, where the list was to be (the caller skips it when the entries written
        were all wrong: those are reported at their own lines already)."""
        if "sheets_file" in data:
            self.add(("sheets_file",), f"the sheets file {data['sheets_file']!r} lists no spreadsheet",
                     "add a row per spreadsheet under its header row: id,name,profile,tags")
        else:
            self.add(("sheets",), "no spreadsheets are configured (at least one is required)",
                     'add a [[sheets]] section with id = "..." and checks or a profile, or '
                     'sheets_file = "sheets.csv" at the top of the file')

    def per_sheet_metrics(self, metrics: Any, sheets: Sequence[Any]) -> None:
        """Series per spreadsheet, for small fleets only (sections.PER_SHEET_MAX says why)."""
        if metrics.per_sheet and len(sheets) > PER_SHEET_MAX:
            self.add(("metrics", "per_sheet"),
                     f"per_sheet = true with {counted(len(sheets), 'spreadsheet')} "
                     f"(at most {PER_SHEET_MAX}): a series per spreadsheet and health state is more "
                     "than Prometheus should keep",
                     "remove per_sheet: the fleet's counts by health, the DLQ and the breakers stay; "
                     "`sheet-monitor sheets` lists each spreadsheet")

    def route_profiles(self, telegram: Any, profiles: Mapping[str, Any]) -> None:
        """A route naming a profile the file does not define would silently take nothing."""
        for index, route in enumerate(telegram.routes):
            for name in route.profiles:
                if name not in profiles:
                    self.add(("telegram", "routes", index, "profiles"),
                             f"unknown profile {name!r} in a route",
                             choices_fix(name, tuple(profiles), what="profile"))

    def escalation_chat(self, alerts: Any, telegram: Any) -> None:
        """A topic for escalations with no chat named is a topic of the default chat: there must be one."""
        if alerts.escalate_to_thread is not None and alerts.escalate_to_chat is None and not telegram.chat_id:
            self.add(("alerts", "escalate_to_thread"),
                     "escalate_to_thread names a topic of the default chat, but there is no "
                     "[telegram] chat_id",
                     'add escalate_to_chat = "-100..." (the forum group the topic is in), or chat_id under '
                     "[telegram]")

    # -- folders

    def folders(self, raw: Any, profiles: Mapping[str, Profile | None]) -> tuple[Folder, ...]:
        """[[folders]] tables, their profiles resolved; a folder written twice is one mistake."""
        folders: dict[str, Folder] = {}
        for index, table in folder_tables(raw, lambda loc, problem, fix: self.add(loc, problem, fix)):
            loc: Loc = ("folders", index)
            written = self.validate(FolderTable, table, loc)
            if written is None:
                continue
            if written.id in folders:
                self.add((*loc, "id"), f"folder {written.id!r} is listed twice; first at "
                                       f"{folders[written.id].origin}",
                         "remove one of the two [[folders]] tables")
                continue
            folder = resolve_folder(written, profiles, self.where(loc), self.reporter(loc))
            if folder is not None:
                folders[written.id] = folder
        return tuple(folders.values())

    # -- maintenance windows

    def maintenance(self, raw: Any, sheets: Sequence[Sheet], alerts: Any,
                    folder_tags: Sequence[str] = ()) -> tuple[MaintenanceWindow, ...]:
        """[[maintenance]] tables, their sheets and tags resolved to the spreadsheets they cover (a
        folder's tag to its spreadsheets once a run lists them)."""
        if not isinstance(raw, list):
            self.add(("maintenance",), "maintenance must be an array of tables",
                     "write each window as a [[maintenance]] section")
            return ()
        timezone = alerts.timezone if alerts is not None else "UTC"
        windows = []
        for index, table in enumerate(raw):
            loc: Loc = ("maintenance", index)
            if not isinstance(table, dict):
                self.add(loc, "a maintenance window must be a table", "write it as a [[maintenance]] section")
                continue
            written = self.validate(MaintenanceTable, table, loc, timezone=timezone)
            if written is None:
                # What it covers is still worth checking: every mistake in one pass.
                names, tags = table.get("sheets", []), table.get("tags", [])
                if all(isinstance(part, list) and all(isinstance(v, str) for v in part)
                       for part in (names, tags)):
                    cover(names, tags, sheets, self.reporter(loc), folder_tags)
                continue
            resolved = written.resolve(sheets, self.reporter(loc), folder_tags)
            if resolved is not None:
                windows.append(written.window(resolved.ids, self.where(loc), timezone))
        return tuple(windows)

    # -- checks and profiles

    def checks(self, raw: Any, loc: Loc) -> tuple[Check, ...] | None:
        if not isinstance(raw, list):
            self.add(loc, "checks must be a list of tables",
                     'write checks = [{ kind = "not_empty", range = "Tab!A2:A" }, ...]')
            return None
        result: list[Check] = []
        ok = True
        for index, item in enumerate(raw):
            check = self.check(item, (*loc, index))
            ok = ok and check is not None
            if check is not None:
                result.append(check)
        return tuple(result) if ok else None

    def check(self, raw: Any, loc: Loc) -> Check | None:
        if not isinstance(raw, dict):
            self.add(loc, f"a check must be a table, got {type(raw).__name__}",
                     'write { kind = "not_empty", range = "Tab!A2:A" }')
            return None
        kind = raw.get("kind")
        if kind is None:
            self.add(loc, "check has no kind", f"add kind = one of: {', '.join(CHECK_KINDS)}")
            return None
        model = CHECK_KINDS.get(kind) if isinstance(kind, str) else None
        if model is None:
            self.add((*loc, "kind"), f"unknown check kind {kind!r}",
                     choices_fix(str(kind), tuple(CHECK_KINDS), what="kind"))
            return None
        check = self.validate(model, raw, loc)
        if isinstance(check, CrossSheetCheck):  # its other spreadsheet is looked up once all are known
            self.check_places[id(check)] = loc
        return check

    def profiles(self, raw: Any) -> dict[str, Profile | None]:
        """name -> profile; None marks a profile that exists but has errors (already reported)."""
        if not isinstance(raw, dict):
            self.add(("profiles",), "profiles must be tables", "write [profiles.NAME] sections")
            return {}
        result: dict[str, Profile | None] = {}
        for name, table in raw.items():
            loc: Loc = ("profiles", name)
            if not isinstance(table, dict):
                self.add(loc, "a profile must be a table",
                         f"write [profiles.{name}] with checks = [...]")
                result[name] = None
                continue
            if "checks" not in table:
                self.add(loc, "profile has no checks", "add checks = [{ kind = ..., range = ... }]")
            written = self.validate(ProfileTable, table, loc)
            checks = self.checks(table.get("checks", []), (*loc, "checks"))
            result[name] = None if written is None or checks is None else Profile.model_construct(
                name=name, checks=checks, max_age=written.max_age, always_read=written.always_read,
                owner=written.owner)
        return result

    # -- sheets

    def toml_sheets(self, raw: Any) -> list[Entry]:
        if not isinstance(raw, list):
            self.add(("sheets",), "sheets must be an array of tables",
                     "write each spreadsheet as a [[sheets]] section")
            return []
        entries = []
        for index, table in enumerate(raw):
            loc: Loc = ("sheets", index)
            if not isinstance(table, dict):
                self.add(loc, "a sheet must be a table", "write it as a [[sheets]] section")
                continue
            if "sheets_file" in table:
                self.add((*loc, "sheets_file"), "sheets_file ended up inside a [[sheets]] entry",
                         "move sheets_file = \"...\" to the top of the file, before any [section]")
                table = {k: v for k, v in table.items() if k != "sheets_file"}
            entry = self.validate(SheetTable, table, loc)
            checks = self.checks(table["checks"], (*loc, "checks")) if "checks" in table else ()
            if entry is not None and checks is not None:
                entries.append(Entry(entry.id, entry.name, entry.profile, entry.tags, checks,
                                     self.locator(loc), entry.owner))
            else:
                self.unloaded |= _sheet_names([[table]])
        return entries


def _sheet_names(lists: Iterable[Any]) -> set[str]:
    """The ids and names written in lists of spreadsheet tables (whatever else is wrong with them)."""
    return {value.strip() for tables in lists if isinstance(tables, list) for table in tables
            if isinstance(table, dict) for key in ("id", "name")
            if isinstance(value := table.get(key), str)}


def _names_in(tables: Iterable[Any]) -> set[str]:
    """The keys of tables (the profile names under a misspelt [profile.NAME])."""
    return {name for table in tables if isinstance(table, dict) for name in table}
