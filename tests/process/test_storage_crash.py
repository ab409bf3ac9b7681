"""The file store under ``kill -9`` and under lock-free readers racing a writer process.

Each update moves several keys together (a counter, a payload that names it, one marker key replaced
by the next, one of forty rotating keys), so any state that is not the result of whole updates shows.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap
from collections import Counter

from paths import REPO

from monitor.storage import FileStore, StatePaths
from monitor.storage.format import parse_state
from monitor.storage.journal import parse_journal

PADDING = 100_000  # bytes per update: big enough that kills land inside appends and compactions
JOURNAL_LIMIT = 300_000  # a compaction every three updates, plus one at every close and reopen
STATIC_KEYS = 5_000

# Forks one writer per line read, kills it after the delay given, reports the kill. Forking from an
# interpreter that already imported the store makes each kill cost milliseconds, not a start-up.
ZYGOTE = """
    import os, signal, sys, time
    from monitor.storage import FileStore

    state_dir, padding, limit = sys.argv[1], "x" * int(sys.argv[2]), int(sys.argv[3])

    def write_forever():
        store = FileStore.in_dir(state_dir, journal_limit=limit)
        n = int(store.get_property("n") or 0)
        while True:
            n += 1
            store.update({"n": str(n), "payload": f"{n}:{padding}", f"marker:{n}": "1",
                          f"key:{n % 40}": str(n)}, deleted=[f"marker:{n - 1}"])
            os.write(1, b"ack %d\\n" % n)
            if n % 9 == 0:  # a run ends (compacting) and the next one opens
                store.close()
                store = FileStore.in_dir(state_dir, journal_limit=limit)

    for line in sys.stdin:
        pid = os.fork()
        if pid == 0:
            try:
                write_forever()
            finally:
                os._exit(1)
        time.sleep(float(line))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.write(1, b"killed\\n")
"""


def python(code: str, *args: object, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                            env=env, stdout=subprocess.PIPE, text=True, **kwargs)


def assert_whole(properties: dict[str, str], padding: int = PADDING) -> int:
    """The state is the result of whole updates; return its counter."""
    n = int(properties.get("n", "0"))
    if n:
        assert properties["payload"] == f"{n}:{'x' * padding}"
        assert properties[f"key:{n % 40}"] == str(n)
    assert [key for key in properties if key.startswith("marker:")] == ([f"marker:{n}"] if n else [])
    return n


def phase(paths: StatePaths) -> str:
    """Where the kill landed, as far as the files tell."""
    if any(paths.directory.glob(".properties.json*.tmp")):
        return "writing a snapshot or a new journal"
    if not paths.journal.exists():
        return "between setting the journal aside and starting a new one" if paths.snapshot.exists() else "-"
    journal = paths.journal.read_bytes()
    generation = parse_journal(journal, "journal").generation
    if generation < parse_state(paths.snapshot.read_bytes()).generation:
        return "between the new snapshot and the new journal"
    if not journal.endswith(b"\n"):
        return "inside an append"
    return "between writes, or syncing"


def test_kill_9_at_random_moments_leaves_the_last_acknowledged_update_or_the_one_in_flight(tmp_path):
    paths = StatePaths.in_dir(tmp_path / "state")
    rng = random.Random(20260105)
    zygote = python(ZYGOTE, paths.directory, PADDING, JOURNAL_LIMIT, stdin=subprocess.PIPE)
    phases: Counter[str] = Counter()
    last_seen = 0
    try:
        for _ in range(80):
            zygote.stdin.write(f"{rng.uniform(0.0, 0.03):.4f}\n")
            zygote.stdin.flush()
            acknowledged = []
            for line in zygote.stdout:
                if line == "killed\n":
                    break
                acknowledged.append(int(line.split()[1]))
            phases[phase(paths)] += 1

            store = FileStore(paths.snapshot, read_only=True)
            assert store.restore_report is None, store.restore_report
            n = assert_whole(store.get_properties())
            base = acknowledged[-1] if acknowledged else last_seen
            assert n in (base, base + 1), (n, base)
            last_seen = n
    finally:
        zygote.stdin.close()
        zygote.wait(timeout=10)
        zygote.stdout.close()
    assert last_seen > 50  # the writers made progress between kills
    # The test proves something only if kills landed inside the delicate moments.
    assert phases["writing a snapshot or a new journal"] >= 5, phases
    assert sum(phases.values()) - phases["between writes, or syncing"] >= 10, phases
    writer = FileStore(paths.snapshot)  # the next run: compacts whatever the last kill left
    assert assert_whole(writer.get_properties()) == last_seen and writer.restore_report is None
    writer.close()


WRITER = """
    import sys
    from monitor.storage import FileStore

    state_dir, updates, padding = sys.argv[1], int(sys.argv[2]), "x" * int(sys.argv[3])
    store = FileStore.in_dir(state_dir, journal_limit=20_000)
    for n in range(1, updates + 1):
        store.update({"n": str(n), "payload": f"{n}:{padding}", f"marker:{n}": "1",
                      f"key:{n % 40}": str(n)}, deleted=[f"marker:{n - 1}"])
        if n % 10 == 0:
            store.close()
            store = FileStore.in_dir(state_dir, journal_limit=20_000)
    store.close()
"""


def test_readers_without_a_lock_see_whole_updates_while_a_writer_process_compacts(tmp_path):
    paths = StatePaths.in_dir(tmp_path / "state")
    with FileStore(paths.snapshot) as store:
        # Thousands of keys make each read slow enough that compactions often land inside one.
        store.set_properties({f"static:{i}": "s" * 100 for i in range(STATIC_KEYS)})
    writer = python(WRITER, paths.directory, 200, PADDING)  # journal_limit: a compaction per update
    seen = []
    try:
        while writer.poll() is None:
            with FileStore(paths.snapshot, read_only=True) as reader:
                assert reader.restore_report is None, reader.restore_report
                properties = reader.get_properties()
            seen.append(assert_whole(properties))
            assert sum(key.startswith("static:") for key in properties) == STATIC_KEYS
    finally:
        writer.wait(timeout=30)
        writer.stdout.close()
    assert writer.returncode == 0
    assert seen == sorted(seen)  # never back to an older state
    assert len(set(seen)) >= 20, len(set(seen))
