"""The ``[[folders]]`` folders brought up to date at a run's start (``monitor.engine.folder_sync``),
wired to Drive as the run's first credential sees it, and saved before the run reads anything.

One save holds the listings, their feed position and what they told: a run killed before it asks
Drive again and tells nothing twice; a run killed after it told each change once. Beside other
runners on one Redis state, a runner syncs in a turn, with the state re-read: runners started by the
same cron tick would otherwise each ask the feed from the same position and each tell what it
found. A runner that cannot have the turn uses the listings as last saved.
"""

from __future__ import annotations

from monitor.config import Config
from monitor.engine.folder_listing import FolderListings
from monitor.engine.folder_sync import FolderSync, monitored_config
from monitor.google.client import CredentialCache
from monitor.google.drive_folders import DriveFolders
from monitor.google.reader import GspreadReader


def folders_brought_up_to_date(config: Config, session, clock, run_id: str, timeout: float,
                               credentials: CredentialCache, sharing=None) -> Config:
    """``config`` with every spreadsheet its folders hold now; the state saved when it changed.
    Without folders, a listing the state still holds is dropped (the config no longer names any).
    ``sharing``: the runner's share of a Redis state (its turn, see the module doc)."""
    if sharing is None:
        return _synced(config, session, clock, run_id, timeout, credentials)
    with sharing.turn() as mine:
        if not mine:
            return monitored_config(config, session.state.folders)
        return _synced(config, session, clock, run_id, timeout, credentials)


def _synced(config: Config, session, clock, run_id: str, timeout: float, credentials: CredentialCache
            ) -> Config:
    state = session.state
    if not config.folders:
        if state.folders != FolderListings():
            state.folders = FolderListings()
            session.save()
        return config
    reader = GspreadReader.for_config(config, timeout, credentials)
    drive = first_credentials_drive(config, reader, credentials)
    sync = FolderSync(config, state, drive, run_id, state.events.add)
    monitored = sync.sync(clock.now(), timeout, use_feed=config.run.change_detection)
    session.save()
    return monitored


def first_credentials_drive(config: Config, reader: GspreadReader, credentials: CredentialCache
                            ) -> DriveFolders:
    """Drive's folders and feed as the config's first credential sees them (every credential reads
    every spreadsheet, so any one's view is the folders'), with its account's e-mail to name."""
    credential = str(config.google.credentials[0])
    return DriveFolders(reader, credential, _service_account(credentials, credential))


def _service_account(credentials: CredentialCache, credential: str) -> str | None:
    """The service account's e-mail, to say whom to share a folder with (None: its key does not load,
    which the read will say)."""
    try:
        return credentials.get(credential).service_account_email
    except Exception:  # noqa: BLE001 - a key that does not load is the reads' to tell, not the folders'
        return None
