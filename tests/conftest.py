"""Fixtures shared by several test modules.

``telegram_fixtures``: ``server`` (the module's own ``fake`` Telegram served on 127.0.0.1) and ``http``
(an httpx client), for test_telegram and test_watchdog. ``sheets_api_fixtures``: ``google_clock``,
``sandbox`` (a seeded fake Google API) and ``api`` (a requests client for it), for the tests of the fake
Sheets and Drive endpoints. ``storage_fixtures``: ``state_dir`` and ``paths``, for the file backend's
tests. ``sandbox_fixtures``: ``control_sandbox`` (the fake Google API, one per module), for the tests
of its control API. ``redis_fixtures``: ``redis_location`` (the machine's Redis under a prefix of its
own), for the Redis backend's tests; ``redis_server``: ``private_redis`` (a redis-server of the test's own, to
kill, pause or restart empty). ``fake_telegram_fixtures``: ``served_fake``, ``bot`` and ``control``
(a fake Telegram with a bot and four chats, served, and clients for it), for the tests of its buttons,
updates and people. Registered here, before any test module imports the helpers, so pytest can still
rewrite their asserts.
"""
pytest_plugins = (
    "telegram_fixtures", "sheets_api_fixtures", "storage_fixtures", "sandbox_fixtures", "redis_fixtures",
    "redis_server", "fake_telegram_fixtures")

import gc  # noqa: E402 - after pytest_plugins, which must come first
import os  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from monitor.state import access  # noqa: E402

KINDS = ("process", "contract", "sandbox", "unit")  # tests/<kind>/..., each a marker (pyproject.toml)
MEMORY_FOLDER = Path("/dev/shm")  # Linux's tmpfs, on every machine this project runs on
# A container's /dev/shm is often 64 MB: a suite's folders (pytest keeps the last three runs', ~160
# MB) would fill it, so a small one is left alone and the folders stay on disk.
MEMORY_FOLDER_LEAST_FREE = 1 << 30
# Where the suite keeps compiled bytecode when the environment says to write none beside the sources
# (see ``bytecode_cached``): one folder a user, kept from run to run, as __pycache__ would be.
BYTECODE_FOLDER = Path(tempfile.gettempdir()) / f"sheet-monitor-bytecode-{os.getuid()}"


def pytest_configure(config):
    bytecode_cached()
    tests_in_memory(config)


def bytecode_cached() -> None:
    """Compiled bytecode kept, outside the checkout, where PYTHONDONTWRITEBYTECODE would have every
    process compile from source: each `sheet-monitor run` the process tests start compiled the whole
    package again (a fifth of its start-up's CPU, hundreds of runs a suite), and each xdist worker
    rewrote the asserts of every test module again (two thirds of its collection, ~8 s of CPU). Set
    here, before the workers start, it holds for them and for every process they start. A cache the
    environment placed (PYTHONPYCACHEPREFIX) is used as it is; none is written into the checkout."""
    if not sys.dont_write_bytecode:
        return
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False
    if sys.pycache_prefix is None:
        sys.pycache_prefix = os.environ["PYTHONPYCACHEPREFIX"] = str(BYTECODE_FOLDER)


def tests_in_memory(config) -> None:
    """Test folders (tmp_path) in memory when the machine has a tmpfs: the file backend fsyncs every
    save, and on a shared virtual disk each fsync waits 10-30 ms, most of what the runs of the round
    and process tests cost. What the tests check does not change: a kill -9 loses a process, not the
    page cache, and no test cuts the power. Only where nothing chose the folder already (--basetemp,
    PYTEST_DEBUG_TEMPROOT); the xdist workers are handed the controller's."""
    if config.option.basetemp or "PYTEST_DEBUG_TEMPROOT" in os.environ or hasattr(config, "workerinput"):
        return
    if (MEMORY_FOLDER.is_dir() and os.access(MEMORY_FOLDER, os.W_OK | os.X_OK)
            and shutil.disk_usage(MEMORY_FOLDER).free >= MEMORY_FOLDER_LEAST_FREE):
        os.environ["PYTEST_DEBUG_TEMPROOT"] = str(MEMORY_FOLDER)


# Workers a core under ``-n auto``. The suite's time is the process tests' (see ``dealt``), which
# mostly wait on runs, sandboxes and real time: one worker a core left the two cores of CI idle
# three fifths of the suite (3m35s of CPU in 5m05s on two); two a core keep them busy.
WORKERS_PER_CORE = 2


def pytest_xdist_auto_num_workers(config):
    return WORKERS_PER_CORE * (os.cpu_count() or 1)


def pytest_collection_modifyitems(config, items):
    """Mark each test with the kind its folder names, so ``-m`` picks kinds; under xdist, deal the
    modules that wait out to the workers first (see ``dealt``)."""
    tests = Path(__file__).parent
    for item in items:
        kind = item.path.relative_to(tests).parts[0]
        if kind in KINDS:
            item.add_marker(kind)
    workers = getattr(config, "workerinput", {}).get("workercount", 1)
    if workers > 1:
        items[:] = dealt(items, workers)


def dealt(items: list, workers: int) -> list:
    """``items`` reordered so that each xdist worker starts on its share of the tests that wait: the
    process tests, and the modules marked ``waits`` (a whole round in this process, made once).

    Those wait on real runs for most of the suite's time (one kill test ~100 s). Collected in folder
    order they sat in the first worker's initial share (worksteal hands each worker an equal run of
    the collection and lets idle ones steal from the end of a busy one's), where they ran one after
    another while the others stole the quick tests around them. Here each module of process tests
    goes whole (a module's fixtures are made once per worker) to the share with the fewest process
    tests so far, biggest module first, at the head of that share; the other tests fill the shares
    in their own order. Every worker orders alike, as xdist requires. (Without process tests, as
    under ``-m "not process"``, a round's 20 s module fixture met at the end of the collection held
    one worker that long after the other had run out of tests.)"""
    waiting = [item for item in items if waits(item)]
    others = [item for item in items if not waits(item)]
    modules: dict[Path, list] = {}
    for item in waiting:
        modules.setdefault(item.path, []).append(item)
    heads: list[list] = [[] for _ in range(workers)]
    for module in sorted(modules.values(), key=len, reverse=True):
        min(heads, key=len).extend(module)
    shares, left = [], len(items)
    for index in range(workers):  # xdist's split: len(pending) // workers left
        shares.append(left // (workers - index))
        left -= shares[-1]
    ordered = []
    for head, share in zip(heads, shares, strict=True):
        fill = max(0, share - len(head))
        ordered += head + others[:fill]
        del others[:fill]
    return ordered + others


def waits(item) -> bool:
    return bool(item.get_closest_marker("process") or item.get_closest_marker("waits"))


@pytest.fixture(autouse=True)
def every_session_saves_what_it_changed(monkeypatch):
    """In every test, a state session checks when it ends that all it changed was saved (a change that
    escaped the tracking would be lost by the next cron run)."""
    monkeypatch.setattr(access, "VERIFY_SAVES", True)


@pytest.fixture
def collector_on():
    """The garbage collector on, and nothing frozen, before and after a test that pauses it (the
    start-up's pause: monitor.app.start_up)."""
    gc.enable()
    yield
    gc.unfreeze()
    gc.enable()
