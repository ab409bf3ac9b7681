"""What moving the state costs at the scale the product claims: export and import of N keys.

A state of N keys of ~300 bytes (a task or health record) is written to the file backend, exported
(``monitor.admin.transfer``, what ``sheet-monitor state export`` does), imported into Redis in its
one atomic update (one Lua script holding every key), exported from Redis and compared key by key.
Prints the file's size and each step's time. Redis is ``SHEET_MONITOR_TEST_REDIS`` (default
redis://127.0.0.1:6379/0), under a prefix of its own, deleted at the end.

    .venv/bin/python bench/state_transfer.py [--keys 700 20000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from monitor.admin.transfer import export_document, read_export, replace_all  # noqa: E402
from monitor.storage import RUN_LOCK, FileLocation  # noqa: E402
from monitor.storage.redis_store import RedisLocation  # noqa: E402

VALUE_BYTES = 300
REDIS_URL = os.environ.get("SHEET_MONITOR_TEST_REDIS", "redis://127.0.0.1:6379/0")


def value(rng: random.Random) -> str:
    return '{"status":"done","note":"' + "".join(rng.choices("abcdefghij", k=VALUE_BYTES - 28)) + '"}'


def timed(action):
    started = time.perf_counter()
    result = action()
    return result, (time.perf_counter() - started) * 1000


def measure(keys: int, folder: Path) -> dict[str, float]:
    rng = random.Random(keys)
    source = FileLocation(folder / f"state-{keys}")
    with source.lock(RUN_LOCK), source.open() as store:
        store.set_properties({f"task/{n:06d}": value(rng) for n in range(keys)})
    export = folder / f"export-{keys}.json"
    with source.open(read_only=True) as store:
        data, export_ms = timed(lambda: export_document(store, "bench", datetime.now(UTC)))
    export.write_bytes(data)
    exported, read_ms = timed(lambda: read_export(export))

    target = RedisLocation(REDIS_URL, prefix=f"sheet-monitor-bench:{uuid.uuid4().hex}")
    try:
        with target.lock(RUN_LOCK), target.open() as store:
            _, import_ms = timed(lambda: replace_all(store, exported.properties))
        with target.open(read_only=True) as store:
            back = json.loads(export_document(store, "bench", datetime.now(UTC)))["properties"]
        assert back == exported.properties, "the round trip changed the state"
    finally:
        names = list(target.client.scan_iter(match=f"{target.prefix}:*", count=500))
        if names:
            target.client.delete(*names)
    return {"file_mb": len(data) / 1e6, "export_ms": export_ms, "read_ms": read_ms, "import_ms": import_ms}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, nargs="+", default=[700, 20000])
    args = parser.parse_args()
    print(f"{'keys':>7} {'file MB':>8} {'export ms':>10} {'check ms':>9} {'import ms':>10}")
    with tempfile.TemporaryDirectory() as folder:
        for keys in args.keys:
            row = measure(keys, Path(folder))
            print(f"{keys:>7} {row['file_mb']:>8.1f} {row['export_ms']:>10.0f} {row['read_ms']:>9.0f}"
                  f" {row['import_ms']:>10.0f}")


if __name__ == "__main__":
    main()
