"""check-config's checks of this machine: what a valid config cannot show, tried for real.

Unlike the rest of ``monitor.admin`` this module does I/O, on purpose and nothing more than a run would
do first: it writes (and removes) a probe file in the state folder (or asks the Redis of ``[state]``),
takes and releases the run lock, loads every service-account key and signs with it, and, unless
offline, asks Google's token service for a token with each (no Sheets or Drive quota is spent). Each
gives one :class:`Probe` (a check of the machine, not a spreadsheet's ``Check``): ok, or a problem with
its fix; ``usage`` marks a problem of the config's files (a key), which the CLI exits 2 for, against a
problem of the machine (exit 1). Before them, one the run would meet first and no machine can pass: a
budget too short to read anything, listed only when it refuses one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import timedelta
from pathlib import Path

import google.auth.exceptions
import requests

from monitor.config import Config
from monitor.core.durations import format_duration
from monitor.engine.settings import LEAST_BUDGET_SECONDS, MIN_REQUEST_SECONDS, RESERVE_SECONDS
from monitor.google.client import SharedServiceAccount, load_service_account
from monitor.google.refusals import SIGNATURE_REFUSALS_FOR_GOOD, CredentialUnusable, is_refusal
from monitor.google.token import TokenTransport, token_failure_text
from monitor.state import own_lock, shares_state
from monitor.storage import RUN_LOCK, FileLocation, StateError, StoreLock
from monitor.storage.configured import describe_location, state_location
from monitor.storage.writability import MIN_FREE_BYTES, folder_problem, read_problem, user_name

_SIGNED = b"sheet-monitor check-config"


@dataclass(frozen=True)
class Probe:
    name: str  # what was checked: "state folder", "run lock", "credential <path>"
    ok: bool
    detail: str  # what was found, or the problem
    fix: str | None = None
    usage: bool = False  # the config's files are at fault (exit 2), not the machine (exit 1)

    def to_dict(self) -> dict:
        return asdict(self)


def preflight(config: Config, *, offline: bool) -> list[Probe]:
    """Every check, in the order a run meets them: its budget (when too short), the state (folder or
    Redis), its lock, each credential."""
    timeout = config.google.request_timeout.total_seconds()
    return [*budget_checks(config), *state_checks(config),
            *(credential(path, offline=offline, timeout=timeout) for path in config.google.credentials)]


def budget_checks(config: Config) -> list[Probe]:
    """A budget that leaves no time for a read after the reserve, refused: every run would end with
    nothing read and its round open, every spreadsheet without a verdict. Nothing when it is fine."""
    budget = config.run.budget
    if budget.total_seconds() >= LEAST_BUDGET_SECONDS:
        return []
    least = format_duration(timedelta(seconds=LEAST_BUDGET_SECONDS))
    return [Probe("run budget", False,
                  f"run.budget ({format_duration(budget)}) leaves no time to read: a run keeps "
                  f"{RESERVE_SECONDS:g}s to save and needs {MIN_REQUEST_SECONDS:g}s for a read at least",
                  f"set budget to {least} or more; a little under round_interval reads the most", usage=True)]


def state_checks(config: Config) -> list[Probe]:
    """The state folder and its lock; or, on ``[state] backend = "redis"``, the Redis, asked for real
    whether offline or not (it is this machine's, as the folder is). The password is read from the
    environment as the run reads it: a check of what a run will meet must use what the run uses."""
    if config.state.backend != "redis":
        return [state_folder(config.run.state_dir), run_lock(config.run.state_dir)]
    location = state_location(config)
    try:
        location.exists()
    except StateError as exc:
        what, _, fix = str(exc).partition(". Start Redis")
        return [Probe("state on Redis", False, what, ("start Redis" + fix) if fix else None)]
    # Runners sharing the state each take their own lock (this host's runner's is the one to try).
    lock = own_lock(config.state.runner) if shares_state(location) else RUN_LOCK
    return [Probe("state on Redis", True, f"{describe_location(location)} answers"),
            _lock_check(location.lock(lock))]


def state_folder(state_dir: Path) -> Probe:
    paths = FileLocation(state_dir).paths()
    # A folder this user may not enter hides even the state's size: that is the problem to tell.
    problem = read_problem(Path(state_dir), paths.files)
    if problem is None:
        size = paths.snapshot.stat().st_size if paths.snapshot.exists() else 0
        problem = folder_problem(Path(state_dir), (*paths.files, paths.lock(RUN_LOCK)),
                                 needed_bytes=size + MIN_FREE_BYTES)
    if problem is None:
        return Probe("state folder", True, f"{state_dir} can be written by user {user_name()}")
    what, _, fix = problem.partition(" Fix: ")
    return Probe("state folder", False, what, fix or None)


def run_lock(state_dir: Path) -> Probe:
    lock = FileLocation(state_dir).lock(RUN_LOCK)
    if read_problem(Path(state_dir)) is not None:  # told once, by the state folder's check
        return Probe("run lock", False, f"{lock.describe()} cannot be tried: this user may not read the "
                     "state folder (above)")
    if not Path(state_dir).is_dir():
        return Probe("run lock", True, f"{lock.describe()} is created by the first run")
    return _lock_check(lock)


def _lock_check(lock: StoreLock) -> Probe:
    try:
        taken = lock.acquire(timeout=0)
    except StateError as exc:
        what, _, fix = str(exc).partition(" Fix: ")
        return Probe("run lock", False, f"{lock.describe()} cannot be taken: {what}", fix or None)
    if not taken:
        return Probe("run lock", True, f"{lock.describe()} is held by a run in progress now")
    lock.release()
    return Probe("run lock", True, f"{lock.describe()} can be taken")


def credential(path: Path, *, offline: bool, timeout: float) -> Probe:
    """The key loads and signs; unless ``offline``, Google's token service issues a token for it."""
    name = f"credential {path}"
    try:
        key = load_service_account(str(path))
        key.signer.sign(_SIGNED)
    except CredentialUnusable as exc:
        return Probe(name, False, exc.problem.problem, exc.problem.fix, usage=True)
    if offline:
        return Probe(name, True, f"{key.service_account_email}: the key loads and signs (token not asked: "
                                 "--offline)")
    return _token(name, key, timeout)


def _token(name: str, key: SharedServiceAccount, timeout: float) -> Probe:
    """Ask for a token as a run does; a refusal of the signature is asked again (it comes now and then
    for a moment), up to the count that makes it the key's problem in a run."""
    session = requests.Session()
    transport: Callable = functools.partial(TokenTransport(session), timeout=timeout)
    try:
        # The last refusal in a row raises CredentialUnusable (SharedServiceAccount counts them).
        for _ in range(SIGNATURE_REFUSALS_FOR_GOOD):
            try:
                key.refresh(transport)
                break
            except google.auth.exceptions.RefreshError as exc:
                if isinstance(exc, CredentialUnusable) or not is_refusal(exc):
                    raise
    except CredentialUnusable as exc:
        return Probe(name, False, exc.problem.problem, exc.problem.fix, usage=True)
    except (google.auth.exceptions.GoogleAuthError, requests.RequestException) as exc:
        auth_error = isinstance(exc, google.auth.exceptions.GoogleAuthError)
        what = token_failure_text(exc) if auth_error else type(exc).__name__
        return Probe(name, False,
                     f"{key.service_account_email}: Google's token service did not issue a token ({what})",
                     "check the network and any proxy (HTTPS_PROXY) towards oauth2.googleapis.com, or run "
                     "check-config --offline to skip this check")
    finally:
        session.close()
    return Probe(name, True,
                 f"{key.service_account_email}: the key loads and signs, and Google issued a token")
