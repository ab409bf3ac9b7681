"""Rebuild recordings.jsonl.gz from the full recordings (run by hand, not by pytest).

    python tests/conformance/trim.py /path/to/google-recordings/recordings.jsonl

Keeps the first recording (``run == 0``) of every cassette whose interactions use only endpoints
the sandbox serves and, in spreadsheets:batchUpdate, only the request kinds it supports; keeps
the fields the replay needs; drops the host from the URL.
"""

import gzip
import json
import sys
from collections import defaultdict
from pathlib import Path

SUPPORTED_ENDPOINTS = {
    "GET /v4/spreadsheets/{id}",
    "GET /v4/spreadsheets/{id}/values/{range}",
    "GET /v4/spreadsheets/{id}/values:batchGet",
    "PUT /v4/spreadsheets/{id}/values/{range}",
    "POST /v4/spreadsheets/{id}/values:batchUpdate",
    "POST /v4/spreadsheets/{id}/values/{range}:clear",
    "POST /v4/spreadsheets/{id}/values:batchClear",
    "POST /v4/spreadsheets/{id}:batchUpdate",
    "POST /drive/v3/files",
    "GET /drive/v3/files/{fileId}",
    "GET /drive/v3/files",
    "DELETE /drive/v3/files/{fileId}",
}
SUPPORTED_KINDS = {"addSheet", "deleteSheet", "updateSheetProperties", "updateSpreadsheetProperties"}
KEEP = ("cassette", "index", "endpoint", "method", "query", "request_json", "status",
        "response_json", "response_text")


def replayable(interactions: list[dict]) -> bool:
    for item in interactions:
        if item["endpoint"] not in SUPPORTED_ENDPOINTS:
            return False
        if item["endpoint"] == "POST /v4/spreadsheets/{id}:batchUpdate":
            kinds = {k for req in (item["request_json"] or {}).get("requests", []) for k in req}
            if not kinds <= SUPPORTED_KINDS:
                return False
    return True


def main(source: str) -> None:
    by_cassette: dict[str, list[dict]] = defaultdict(list)
    with open(source, encoding="utf-8") as lines:
        for line in lines:
            item = json.loads(line)
            if item["run"] == 0:
                by_cassette[item["cassette"]].append(item)
    out = Path(__file__).with_name("recordings.jsonl.gz")
    with gzip.open(out, "wt", encoding="utf-8") as sink:
        for items in by_cassette.values():
            if not replayable(items):
                continue
            for item in sorted(items, key=lambda i: i["index"]):
                kept = {key: item[key] for key in KEEP if key in item}
                kept["path"] = "/" + item["url"].split("/", 1)[1]
                sink.write(json.dumps(kept, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
