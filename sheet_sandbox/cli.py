"""``sheet-monitor sandbox serve``: the fake Google API (and fake Telegram) in the foreground.

The first line of stdout is the Google base URL (flushed at once, so a parent process can read it
and start talking); a few informative lines follow. Serving stops cleanly on Ctrl-C or SIGTERM
(exit 0). Bad flags, an unreadable dataset or seed data the sandbox refuses exit 2; a port that
cannot be bound exits 1.
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import click

from monitor.core.clock import SystemClock
from monitor.core.private_folders import shared_folder_problem
from monitor.core.wording import counted

from . import dataset as datasets
from .auth import is_key_file
from .feed_delay import MAX_SCALE as MAX_FEED_DELAY_SCALE
from .google import GoogleSandbox
from .http import HTTPServerThread
from .latency import MAX_SCALE as MAX_LATENCY_SCALE
from .projects import project_ids, spread
from .server import SandboxHandle
from .switches import GOOGLE, MODELS, OFF

# The chat the fake Telegram knows and written configs send to: a supergroup-shaped id.
SANDBOX_CHAT_ID = -1001234567890
_TOKEN_SHAPE = re.compile(r"^\d+:[A-Za-z0-9_-]+$")


def folder_url(folder_id: str) -> str:
    """A folder's address as Drive's web page shows it, which [[folders]], suggest and init take."""
    return f"https://drive.google.com/drive/folders/{folder_id}"


@click.group("sandbox")
def sandbox() -> None:
    """The local Google Sheets/Drive and Telegram APIs: try the monitor without Google."""


@sandbox.command("serve")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port of the fake Google API on 127.0.0.1 (0: any free port).")
@click.option("--telegram-port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port of the fake Telegram Bot API (0: any free port).")
@click.option("--no-telegram", is_flag=True, help="Do not start the fake Telegram API.")
@click.option("--generate", "generate_count", type=click.IntRange(min=1), metavar="N",
              help="Generate N store spreadsheets, some broken on purpose.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the generated dataset, of random faults, of the latency draws and of "
                   "the feed delay's moments.")
@click.option("--folder", "in_folder", is_flag=True,
              help="File the dataset's spreadsheets in one Drive folder, \"Stores\", and print its "
                   "URL: what a [[folders]] table, `sheet-monitor suggest URL` and `init` take.")
@click.option("--dataset", "dataset_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Load spreadsheets from a dataset folder (see docs/sandbox.md).")
@click.option("--write-credentials", "credentials_dir",
              type=click.Path(file_okay=False, path_type=Path),
              help="Write service-account files for this sandbox into this folder.")
@click.option("--credentials", "credential_count", type=click.IntRange(min=1), metavar="N",
              help="How many service-account files to write (default 1).")
@click.option("--projects", "project_count", type=click.IntRange(min=1), metavar="P",
              help="Spread the credentials over P Google Cloud projects, each with its own "
                   "per-project quota (default 1: sheet-monitor-sandbox). Contiguous blocks, larger "
                   "first: 10 credentials over 2 projects are sa-1..sa-5 in sheet-monitor-sandbox-1 "
                   "and sa-6..sa-10 in sheet-monitor-sandbox-2.")
@click.option("--write-config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write a monitor config that checks the dataset (needs --write-credentials).")
@click.option("--read-per-user", type=click.IntRange(min=1), default=60, show_default=True,
              help="Read requests per minute per service account.")
@click.option("--read-per-project", type=click.IntRange(min=1), default=300, show_default=True,
              help="Read requests per minute for each project.")
@click.option("--latency", "latency_model", type=click.Choice(MODELS), default=GOOGLE,
              show_default=True,
              help="google: hold every Google API answer as long as real Google takes (median "
                   "0.38 s, a few answers of several seconds, larger answers slower); off: answer "
                   "at once.")
@click.option("--latency-scale", type=click.FloatRange(0, MAX_LATENCY_SCALE), metavar="F",
              help="Multiply every latency draw by F (0.1: a tenth; 0: off). Default 1.")
@click.option("--feed-delay", "feed_delay_model", type=click.Choice(MODELS), default=GOOGLE,
              show_default=True,
              help="google: a spreadsheet's edits reach Drive's change feed and modifiedTime at the "
                   "file's next moment, every 3 minutes per file (a few up to 10 minutes late), as "
                   "at Google; off: at once. Values reads see an edit at once either way.")
@click.option("--feed-delay-scale", type=click.FloatRange(0, MAX_FEED_DELAY_SCALE), metavar="F",
              help="Multiply the feed delay's period and lateness by F (0.1: every 18 s; 0: off). "
                   "Default 1.")
def serve(
    port: int,
    telegram_port: int,
    no_telegram: bool,
    generate_count: int | None,
    seed: int,
    in_folder: bool,
    dataset_dir: Path | None,
    credentials_dir: Path | None,
    credential_count: int | None,
    project_count: int | None,
    config_path: Path | None,
    read_per_user: int,
    read_per_project: int,
    latency_model: str,
    latency_scale: float | None,
    feed_delay_model: str,
    feed_delay_scale: float | None,
) -> None:
    """Serve the sandbox until Ctrl-C; print its base URL as the first line."""
    _check_flags(generate_count, dataset_dir, credentials_dir, credential_count, config_path)
    if in_folder and generate_count is None and dataset_dir is None:
        raise click.UsageError("--folder needs a dataset to file: --generate N or --dataset DIR")
    credential_count = credential_count or 1
    _check_projects(credentials_dir, credential_count, project_count)
    models = {"latency": _setting("--latency", latency_model, latency_scale),
              "feed_delay": _setting("--feed-delay", feed_delay_model, feed_delay_scale)}
    # The written config paces reads with the same quotas the sandbox enforces.
    quotas = {"read_per_user": read_per_user, "read_per_project": read_per_project}
    # Signals are caught from the start: one that arrives while the dataset loads or files are
    # written still ends in a clean stop (exit 0), never a traceback or a half-written file.
    with _stop_signals() as stop, ExitStack() as stack:
        data = _dataset(generate_count, seed, dataset_dir)
        folders: list[str] = []
        if in_folder and data is not None:
            data, folders = datasets.filed(data)
        clock = SystemClock()
        google = _seeded_google(data, clock, seed, quotas, models)
        handle = _start_google(stack, google, clock, port)
        token = None if no_telegram else _start_telegram(stack, handle, clock, telegram_port)
        _describe(handle, data, token)
        filed = counted(len(data.payloads) - len(folders), "spreadsheet") if folders else ""
        for folder_id in folders:
            click.echo(f"folder: {datasets.FOLDER_NAME}, {filed}: {folder_url(folder_id)}")
        click.echo(f"latency: {google.latency.describe()}")
        click.echo(f"feed delay: {google.feed_delay.describe()}")
        credentials = _write_files(handle, data, credentials_dir, (credential_count, project_count or 1),
                                   config_path, quotas, folders)
        _next_steps(handle, folders, credentials, config_path)
        click.echo("serving; Ctrl-C or SIGTERM stops")
        _flush()
        while not stop.wait(0.5):  # a timed wait keeps the main thread responsive to signals
            pass


def _check_flags(generate_count: int | None, dataset_dir: Path | None,
                 credentials_dir: Path | None, credential_count: int | None,
                 config_path: Path | None) -> None:
    """Refuse combinations of flags that cannot work (exit 2), before anything starts."""
    if generate_count is not None and dataset_dir is not None:
        raise click.UsageError("give --generate N or --dataset DIR, not both")
    if credential_count is not None and credentials_dir is None:
        raise click.UsageError("--credentials N needs --write-credentials DIR")
    if config_path is not None and credentials_dir is None:
        raise click.UsageError("--write-config FILE needs --write-credentials DIR "
                               "(the config names the credential files)")
    if config_path is not None and generate_count is None and dataset_dir is None:
        raise click.UsageError("--write-config FILE needs a dataset: --generate N or --dataset DIR")


def _check_projects(credentials_dir: Path | None, credential_count: int,
                    project_count: int | None) -> None:
    if project_count is None:
        return
    if credentials_dir is None:
        raise click.UsageError("--projects P needs --write-credentials DIR (it spreads the "
                               "credentials written there over P projects)")
    try:
        spread(credential_count, project_count)
    except ValueError as exc:
        raise click.UsageError(f"--projects {project_count}: {exc}; give --credentials "
                               f"{project_count} or more") from None


def _setting(flag: str, model: str, scale: float | None) -> object:
    """The ``GoogleSandbox`` value of a model's flags (``--latency`` and ``--latency-scale``, say);
    a scale for "off" is a usage error."""
    if model == OFF:
        if scale is not None:
            raise click.UsageError(f"{flag}-scale applies to {flag} google, not to {flag} off")
        return OFF
    return GOOGLE if scale is None else scale


def _seeded_google(data: datasets.Dataset | None, clock, seed: int, quotas: dict,
                   models: dict) -> GoogleSandbox:
    """The fake Google API holding the dataset; seed data it refuses is a usage error (exit 2)."""
    google = GoogleSandbox(clock=clock, seed=seed, **models, **quotas)
    if data is not None:
        try:
            datasets.apply(data, google)
        except ValueError as exc:
            raise click.UsageError(f"the dataset was refused: {exc}") from None
    return google


def _start_google(stack: ExitStack, google: GoogleSandbox, clock, port: int) -> SandboxHandle:
    """Serve the fake Google API and print its base URL: the first line, flushed at once, is
    what a parent process waits for."""
    google_server = _listen(stack, google, port, "--port")
    handle = SandboxHandle(base_url=google_server.base_url, google=google, clock=clock)
    click.echo(handle.base_url)
    _flush()
    return handle


def _write_files(handle: SandboxHandle, data: datasets.Dataset | None,
                 credentials_dir: Path | None, counts: tuple[int, int], config_path: Path | None,
                 quotas: dict, folders: list[str]) -> list[Path]:
    """The service-account files (``counts``: how many, over how many projects) and the monitor
    config asked for (a ``[[folders]]`` table per folder the dataset was filed in), each named once
    written; the service-account files."""
    credentials = []
    if credentials_dir is not None:
        credential_count, project_count = counts
        credentials = handle.write_credentials(credentials_dir, credential_count, project_count)
        click.echo(f"credentials: {', '.join(str(p) for p in credentials)}")
        if problem := shared_folder_problem(credentials_dir, is_key_file, "the credentials folder"):
            click.echo(f"warning: {problem}", err=True)
        if project_count > 1:
            owners = spread(credential_count, project_count)
            click.echo("projects: " + ", ".join(
                f"{name} ({owners.count(name)})" for name in project_ids(project_count)))
    if config_path is not None:
        try:
            datasets.write_config(
                data, config_path, credentials=credentials, endpoint=handle.base_url,
                telegram_api_base=handle.telegram_url,
                telegram_chat_id=str(SANDBOX_CHAT_ID) if handle.telegram_url else None,
                folders=folders, **quotas,
            )
        except ValueError as exc:  # a hand-written manifest naming a profile no dataset has
            raise click.UsageError(f"--write-config: {exc}") from None
        click.echo(f"config: {config_path}")
    return credentials


def _next_steps(handle: SandboxHandle, folders: list[str], credentials: list[Path],
                config_path: Path | None) -> None:
    """With a folder and a key but no config written: the monitor's first command against them (a
    newcomer's next step, README "From a Drive folder to cron"), in a shell of its own."""
    if not folders or not credentials or config_path is not None:
        return
    click.echo("next, in another shell: propose the checks of the folder's spreadsheets:")
    # The key's folder is the installation's secrets/, beside where init writes the config.
    click.echo(f"  sheet-monitor suggest {folder_url(folders[0])} --credentials {credentials[0]} "
               f"--endpoint {handle.base_url} > {credentials[0].parent.parent / 'suggested.toml'}")


def _dataset(count: int | None, seed: int, folder: Path | None) -> datasets.Dataset | None:
    if count is not None:
        return datasets.generate(count, seed)
    if folder is not None:
        try:
            return datasets.load(folder)
        except ValueError as exc:
            raise click.UsageError(f"--dataset: {exc}") from None
    return None


def _listen(stack: ExitStack, app, port: int, flag: str) -> HTTPServerThread:
    try:
        server = HTTPServerThread(app, port=port)
    except OSError as exc:
        raise click.ClickException(
            f"cannot listen on 127.0.0.1:{port} ({exc.strerror or exc}); "
            f"choose another {flag} or 0 for any free port"
        ) from None
    return stack.enter_context(server)


def _start_telegram(stack: ExitStack, handle: SandboxHandle, clock, port: int) -> str:
    """Start the fake Telegram with one bot and the sandbox chat; returns the bot token.

    An existing TELEGRAM_BOT_TOKEN (digits:secret) is reused so a shell that already exports it
    keeps working across restarts; otherwise a throwaway token is made up.
    """
    from .telegram import FakeTelegram  # only when wanted: serving Google alone needs none of it

    fake = FakeTelegram(clock=clock)
    given = os.environ.get("TELEGRAM_BOT_TOKEN", "")
    token = given if _TOKEN_SHAPE.match(given) else (
        f"{secrets.randbelow(9 * 10**9) + 10**9}:sandbox-{secrets.token_urlsafe(18)}"
    )
    fake.add_token(token)
    fake.add_chat(SANDBOX_CHAT_ID, title="Sandbox operations")
    server = _listen(stack, fake, port, "--telegram-port")
    handle.telegram, handle.telegram_url = fake, server.base_url
    return token


def _describe(handle: SandboxHandle, data: datasets.Dataset | None, token: str | None) -> None:
    if handle.telegram_url:
        click.echo(f"telegram: {handle.telegram_url} chat_id={SANDBOX_CHAT_ID}")
        click.echo(f"export TELEGRAM_BOT_TOKEN={token}")
    if data is None:
        click.echo("spreadsheets: none (seed them with PUT /_sandbox/spreadsheets/{id})")
        return
    origin = f"generated, seed {data.seed}" if data.seed is not None else "loaded"
    kinds = Counter(entry.kind for entry in data.manifest.values())
    order = [b.kind for b in datasets.BREAKAGES]
    ranked = sorted(kinds.items(), key=lambda item: (order + [item[0]]).index(item[0]))
    detail = ": " + ", ".join(f"{kind} {n}" for kind, n in ranked) if kinds else ""
    click.echo(f"spreadsheets: {len(data.sheets)} ({origin}), "
               f"{sum(kinds.values())} broken on purpose{detail}")


def _flush() -> None:
    click.get_text_stream("stdout").flush()


@contextmanager
def _stop_signals() -> Iterator[threading.Event]:
    """An event that SIGINT and SIGTERM set (instead of interrupting); handlers restored after."""
    stop = threading.Event()

    def request_stop(signum, frame) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
