"""How many small reads per second the sandbox serves, so it is never a benchmark's bottleneck.

Starts ``sheet-monitor sandbox serve`` as its own process (quotas raised out of the way), seeds a
few small spreadsheets through the control API, takes a real access token through the sandbox's
jwt-bearer flow, then runs client threads that each keep one keep-alive ``requests`` session and
alternate ``values.get`` and ``values:batchGet`` (two ranges) reads. Prints reads per second and the
ratio to the target (500 reads/s). Clients and server share the machine, as in every benchmark that
uses the sandbox.

    .venv/bin/python bench/sandbox_throughput.py [--threads 4] [--seconds 5]
"""

from __future__ import annotations

import argparse
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests
from google.auth.transport.requests import Request as AuthRequest
from google.oauth2 import service_account

ROOT = Path(__file__).resolve().parents[1]
TARGET_READS_PER_SECOND = 500
SPREADSHEETS = 8
HUGE_QUOTA = "100000000"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=4, help="client threads (default 4)")
    parser.add_argument("--seconds", type=float, default=5.0, help="measuring time (default 5)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        server, base_url = start_server(Path(tmp))
        try:
            ids = seed_spreadsheets(base_url)
            token = access_token(Path(tmp) / "sa-1.json")
            reads, errors, elapsed = measure(base_url, token, ids, args.threads, args.seconds)
        finally:
            server.terminate()
            server.wait(timeout=10)
    rate = reads / elapsed
    print(f"sandbox throughput: {rate:.0f} reads/s ({reads} reads in {elapsed:.1f} s, "
          f"{args.threads} client threads, {errors} non-200 answers)")
    ratio = rate / TARGET_READS_PER_SECOND
    print(f"ratio to target ({TARGET_READS_PER_SECOND} reads/s): {ratio:.2f}")
    return 0 if errors == 0 else 1


def start_server(folder: Path) -> tuple[subprocess.Popen, str]:
    command = [
        sys.executable, "-m", "monitor.cli", "sandbox", "serve", "--no-telegram",
        "--write-credentials", str(folder), "--credentials", "1",
        "--read-per-user", HUGE_QUOTA, "--read-per-project", HUGE_QUOTA, "--latency", "off",
    ]
    server = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()
    pump = threading.Thread(target=lambda: [lines.put(line) for line in server.stdout], daemon=True)
    pump.start()
    base_url = lines.get(timeout=30).strip()
    while not lines.get(timeout=30).startswith("serving"):
        pass  # credentials are written before the "serving" line
    return server, base_url


def seed_spreadsheets(base_url: str) -> list[str]:
    ids = []
    for n in range(SPREADSHEETS):
        sheet_id = f"bench-{n}"
        rows = [["SKU", "Product", "Quantity", "Price"]]
        rows += [[f"SKU-{i}", f"Item {i}", i * 3 + n, 10.5 + i] for i in range(20)]
        answer = requests.put(f"{base_url}/_sandbox/spreadsheets/{sheet_id}",
                              json={"title": f"Bench {n}", "tabs": {"Stock": rows}}, timeout=10)
        answer.raise_for_status()
        ids.append(sheet_id)
    return ids


def access_token(credentials_file: Path) -> str:
    credentials = service_account.Credentials.from_service_account_file(
        str(credentials_file), scopes=["https://www.googleapis.com/auth/spreadsheets.readonly"])
    session = requests.Session()
    session.trust_env = False
    credentials.refresh(AuthRequest(session))
    return credentials.token


def measure(base_url: str, token: str, ids: list[str], threads: int, seconds: float):
    start = threading.Barrier(threads + 1)
    counts = [[0, 0] for _ in range(threads)]  # per thread: reads, non-200 answers
    deadline = [0.0]

    def client(index: int) -> None:
        session = requests.Session()
        session.trust_env = False
        session.headers["Authorization"] = f"Bearer {token}"
        urls = []
        for sheet_id in ids:
            urls.append(f"{base_url}/v4/spreadsheets/{sheet_id}/values/Stock!A1:D10")
            urls.append(f"{base_url}/v4/spreadsheets/{sheet_id}/values:batchGet"
                        "?ranges=Stock!A1:A20&ranges=Stock!C2:D20&valueRenderOption=UNFORMATTED_VALUE")
        start.wait()
        position = index
        while time.perf_counter() < deadline[0]:
            answer = session.get(urls[position % len(urls)], timeout=10)
            counts[index][0] += 1
            if answer.status_code != 200:
                counts[index][1] += 1
            position += 1
        session.close()

    workers = [threading.Thread(target=client, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    began = time.perf_counter()
    deadline[0] = began + seconds
    start.wait()
    for worker in workers:
        worker.join()
    elapsed = time.perf_counter() - began
    return sum(c[0] for c in counts), sum(c[1] for c in counts), elapsed


if __name__ == "__main__":
    sys.exit(main())
