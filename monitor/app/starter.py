"""``sheet-monitor init``'s composition: this machine's paths (the folder given, the executables of
the running installation, the user), the starter files for them, and writing those files without
replacing any that exist unless asked to.

What the files say is ``monitor.app.starter_texts``'; the JSON Schema written beside the config is
``monitor.config.schema``'s, so that an editor checks the config against the installed release.
"""

from __future__ import annotations

import getpass
import re
import sys
import sysconfig
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from monitor.admin.targets import id_in_url
from monitor.config.fields import folder_id, spreadsheet_id
from monitor.config.schema import schema_text
from monitor.core.invalid_value import InvalidValue
from monitor.core.private_folders import PRIVATE_DIR_MODE
from monitor.core.wording import counted
from monitor.storage.files import atomic_write_bytes

from .starter_texts import SCHEMA_NAME, Place, Starter, config_text, cron_text, systemd_units

CRON_NAME = "sheet-monitor.cron"
UNITS_FOLDER = "systemd"
# Characters a cron line or a systemd unit would read as something else (a space splits a command,
# "%" is a specifier to systemd and a newline to cron): paths holding them are refused, not quoted.
_UNSAFE_PATH = re.compile(r"[\s%\"'\\$`;&|<>]")
_PRIVATE, _READABLE = 0o600, 0o644
_ENDPOINT = re.compile(r"https?://[A-Za-z0-9.:\[\]-]+/?")
_PROFILE_NAME = re.compile(r"[A-Za-z0-9_-]+")  # a TOML bare key: [profiles.NAME] needs no quotes


class StarterError(Exception):
    """A request init cannot carry out as asked (a usage error); the message says what to do."""


@dataclass(frozen=True, slots=True)
class Written:
    files: tuple[Path, ...]
    folders: tuple[Path, ...]  # made for the keys and the logs


def this_machine(folder: Path, argv0: str | None = None) -> Place:
    """The place ``init`` writes for: ``folder`` made absolute, the folder of the running
    ``sheet-monitor`` (its console script, else this interpreter's scripts folder), this user."""
    script = Path(argv0 if argv0 is not None else sys.argv[0])
    if script.name == "sheet-monitor" and script.exists():
        bin_dir = script.absolute().parent
    else:
        bin_dir = Path(sysconfig.get_path("scripts"))
    place = Place(folder=folder.expanduser().absolute(), bin=bin_dir, user=getpass.getuser())
    for what, path in (("folder", place.folder), ("executables' folder", place.bin)):
        if _UNSAFE_PATH.search(str(path)):
            raise StarterError(f"the {what} {path} holds a space or a character cron and systemd read as "
                               "syntax: choose a folder whose path has only letters, digits and / . _ -")
    return place


def starter_for(place: Place, sheets: Sequence[str], credentials: Sequence[Path], chat_id: str | None,
                *, folders: Sequence[str] = (), profile: str | None = None, suggested: Path | None = None,
                endpoint: str | None = None) -> Starter:
    """What the config will name: each spreadsheet's id (given as an id or its URL), each folder's,
    the key files (relative to the config's folder when inside it), the chat; the profile they are
    checked with (the starter's, or one of ``suggested``: `suggest`'s output, its first by default)."""
    ids = []
    for given in sheets:
        try:
            ids.append(spreadsheet_id(id_in_url(given) or given))
        except InvalidValue as exc:
            raise StarterError(f"--sheet {given!r}: {exc.problem} ({exc.fix})") from None
    folder_ids = []
    for given in folders:
        try:
            folder_ids.append(folder_id(given))
        except InvalidValue as exc:
            raise StarterError(f"--folder {given!r}: {exc.problem} ({exc.fix})") from None
    if endpoint is not None and not _ENDPOINT.fullmatch(endpoint):
        raise StarterError(f"--endpoint {endpoint!r}: not an http(s) address; give the sandbox's, as "
                           "`sheet-monitor sandbox serve` prints it (http://127.0.0.1:PORT)")
    text, profiles, theirs = _suggestion(suggested) if suggested is not None else (None, (), ())
    chosen = _profile(profile, profiles, suggested)
    if again := [given for given, found in zip(folders, folder_ids, strict=True) if found in theirs]:
        raise StarterError(f"--folder {again[0]!r} is in {suggested} already (its [[folders]] table): "
                           "leave --folder out")
    written = tuple(_as_written(place.folder, path) for path in credentials)
    return Starter(sheets=tuple(dict.fromkeys(ids)), credentials=written or Starter().credentials,
                   chat_id=chat_id, folders=tuple(dict.fromkeys(folder_ids)), profile=chosen,
                   suggested=text, endpoint=endpoint.rstrip("/") if endpoint else None,
                   suggested_folders=bool(theirs))


def _suggestion(path: Path) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """``suggest``'s output read back: its text, its profiles' names and its folders' ids; a file that
    is not one is a StarterError saying why."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise StarterError(f"--suggested {path}: cannot be read ({exc}); give the file "
                           "`sheet-monitor suggest ... > FILE` wrote") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise StarterError(f"--suggested {path}: not TOML ({exc}); give the file `sheet-monitor suggest` "
                           "wrote, whole") from None
    profiles = data.get("profiles")
    if not isinstance(profiles, dict) or not profiles:
        raise StarterError(f"--suggested {path}: holds no [profiles.NAME] table; give the file "
                           "`sheet-monitor suggest ... > FILE` wrote (did it read a spreadsheet?)")
    if others := sorted(set(data) - {"profiles", "folders", "sheets"}):
        raise StarterError(f"--suggested {path}: holds {', '.join(others)}, which init writes itself; "
                           "give only what `sheet-monitor suggest` wrote (profiles, folders and sheets)")
    folders = data.get("folders", [])
    try:
        theirs = tuple(folder_id(table.get("id", "")) for table in folders if isinstance(table, dict)) \
            if isinstance(folders, list) else ()
    except InvalidValue as exc:
        raise StarterError(f"--suggested {path}: a [[folders]] id: {exc.problem} ({exc.fix})") from None
    return text, tuple(profiles), theirs


def _profile(given: str | None, profiles: Sequence[str], suggested: Path | None) -> str:
    if not profiles:
        chosen = given or Starter().profile
        if not _PROFILE_NAME.fullmatch(chosen):
            raise StarterError(f"--profile {chosen!r}: a profile's name has letters, digits, '-' and '_' "
                               "only")
        return chosen
    if given is None:
        return profiles[0]
    if given not in profiles:
        raise StarterError(f"--profile {given!r} is not in {suggested}: it has {', '.join(profiles)}")
    return given


def _as_written(folder: Path, path: Path) -> str:
    absolute = path.expanduser().absolute()
    return str(absolute.relative_to(folder)) if absolute.is_relative_to(folder) else str(absolute)


def starter_files(place: Place, starter: Starter) -> dict[Path, tuple[str, int]]:
    """Each file ``init`` writes -> its text and mode."""
    telegram = starter.chat_id is not None
    files = {
        place.config: (config_text(starter), _PRIVATE),  # it names the spreadsheets, as the state does
        place.folder / SCHEMA_NAME: (schema_text(), _READABLE),
        place.folder / CRON_NAME: (cron_text(place, telegram), _READABLE),
    }
    for name, text in systemd_units(place, telegram).items():
        files[place.folder / UNITS_FOLDER / name] = (text, _READABLE)
    return files


def write_starter(place: Place, files: Mapping[Path, tuple[str, int]], force: bool) -> Written:
    """Write ``files``, each atomically, and the folders for the keys and logs; when one of the files
    exists and not ``force``, none: StarterError names those that exist."""
    existing = [path for path in files if path.exists()]
    if existing and not force:
        more = f" and {counted(len(existing) - 1, 'other file')} init writes" if len(existing) > 1 else ""
        raise StarterError(f"{existing[0]}{more} already {'exist' if more else 'exists'}: nothing was "
                           "written; pass --force to replace them")
    folders = [folder for folder in (place.folder / "secrets", place.logs) if not folder.exists()]
    for folder in folders:  # the keys' and the logs' (which name spreadsheets): this user's alone
        folder.mkdir(parents=True)
        folder.chmod(PRIVATE_DIR_MODE)
    for path, (text, mode) in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, text.encode(), mode=mode)
    return Written(files=tuple(files), folders=tuple(folders))
