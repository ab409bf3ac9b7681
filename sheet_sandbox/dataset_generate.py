"""Generating a dataset: N store-stock spreadsheets, a deterministic share of them broken on purpose.

``generate(n, seed, now)`` returns a ``Dataset``: the control payloads (the shape of
``PUT /_sandbox/spreadsheets/{id}``), the fault specs (the shape of ``POST /_sandbox/faults``) and a
manifest saying which spreadsheet is broken how and what the monitor should conclude about it.
The same (n, seed, now) always gives the same dataset, byte for byte.

Every spreadsheet has three tabs: "Stock" (header + 150..400 rows, columns A..H: SKU, Product,
Supplier, Price, Updated, Quantity, Reorder level, Value), "Sales" and "Notes". A healthy one has
quantities >= 5, no error values and a few rows updated within the last 90 minutes of ``now``.
About 12 % are broken, one kind each (see ``BREAKAGES``), kinds dealt round-robin so every kind
appears once the dataset is large enough (``len(BREAKAGES) / BROKEN_SHARE`` ~ 170 spreadsheets).
The last spreadsheet (of two or more) is the head office's catalogue (every SKU the stores may hold),
which the stores' cross-sheet check compares their SKUs with. Some breakages happen after a first
read (a change over time needs one to compare with): the store is served healthy, and
``Dataset.edits`` holds what it becomes; the manifest's verdict is the one a read after the edit
must reach.

Speed and memory: rows are drawn as slices of one shared pool of row lists, so 5,000 spreadsheets
cost a few million references, not tens of millions of cells. Payloads therefore share row and cell
objects: treat them as read-only (the sandbox's store copies what it keeps).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

BROKEN_SHARE = 0.12
STOCK_TAB = "Stock"
RENAMED_STOCK_TAB = "Stock (old)"
STOCK_HEADER = (
    "SKU", "Product", "Supplier", "Price", "Updated", "Quantity", "Reorder level", "Value",
)
SALES_HEADER = ("Date", "SKU", "Sold", "Revenue")
MIN_STOCK_ROWS, MAX_STOCK_ROWS = 150, 400
REORDER_LEVELS = (5, 10, 20, 25, 50)
# The checks' ranges (``dataset_config.stock_profile``) cover rows 2..500; generated tabs stay inside.
CHECKED_LAST_ROW = 500
# A supplier whose rows a filtered check watches, and the bounds that a unit mix-up crosses: healthy
# prices stay within 39..1490 and quantities within 0..480.
WATCHED_SUPPLIER = "Volga Foods LLC"
PRICE_CEILING = 2000
QUANTITY_CEILING = 1000

_ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
# Stock rows shared by all spreadsheets: a multiple of the catalog, so a tab's slice that wraps
# around the pool's end goes on through the catalog instead of repeating SKUs it already holds.
_POOL_ROWS = 3 * 640
_CATALOG_SIZE = 640  # distinct products, more than a tab's rows: SKUs never repeat within a tab
_RECENT_ROWS_PER_SHEET = 3
_SALES_POOL_ROWS = 512

_CITIES = (
    "Moscow", "Saint Petersburg", "Kazan", "Novosibirsk", "Yekaterinburg", "Nizhny Novgorod",
    "Samara", "Omsk", "Rostov-on-Don", "Ufa", "Krasnoyarsk", "Voronezh", "Perm", "Volgograd",
    "Krasnodar", "Tyumen", "Izhevsk", "Barnaul", "Irkutsk", "Khabarovsk", "Yaroslavl",
    "Vladivostok", "Tomsk", "Orenburg", "Kemerovo", "Ryazan", "Astrakhan", "Penza", "Lipetsk",
    "Tula", "Kirov", "Cheboksary", "Kaliningrad", "Kursk", "Sochi", "Tver", "Murmansk",
)
_PRODUCT_WORDS = (
    ("Organic", "Classic", "Premium", "Family", "Mini", "Fresh", "Smoked", "Spicy", "Light",
     "Dark"),
    ("Oat", "Rye", "Buckwheat", "Honey", "Apple", "Cherry", "Pepper", "Cheese", "Tea", "Coffee",
     "Tomato", "Walnut", "Yogurt", "Sunflower", "Chocolate", "Salmon"),
    ("Bread", "Flakes", "Jam", "Sauce", "Biscuits", "Juice", "Pack", "Paste", "Bar", "Mix",
     "Spread", "Chips"),
)
_SIZES = ("200 g", "250 g", "330 ml", "400 g", "500 g", "1 kg", "1 l", "6 x 0.5 l")
_SUPPLIERS = (
    "Volga Foods LLC", "Siberian Mills", "Baltic Trade House", "Ural Farm Co.", "Kuban Harvest",
    "North Dairy", "Altai Natural", "Don Bakery Group", "Amur Fisheries", "Oka Beverages",
)
_MANAGERS = ("A. Ivanova", "D. Petrov", "M. Sidorova", "I. Kuznetsov", "O. Smirnova", "P. Volkov")
_NOTES = (
    "Stock count every Monday before 10:00.",
    "Deliveries: Tue/Thu, loading dock B.",
    "Do not edit column H: it is computed.",
    "Prices follow the regional price list.",
    "Questions: ops chat, not email.",
)


@dataclass(frozen=True)
class Breakage:
    kind: str
    expect: str  # the health the monitor should end with: ok | warn | fail | error
    description: str


# In dealing order: a dataset with k broken spreadsheets has the first k kinds (then round-robin).
BREAKAGES: tuple[Breakage, ...] = (
    Breakage("formula_errors", "fail", "#REF!, #N/A and #DIV/0! in Stock cells"),
    Breakage("missing", "error", "404: the spreadsheet does not exist"),
    Breakage("access_removed", "error", "403: the service account's access was removed"),
    Breakage("renamed_tab", "error",
             f'tab "{STOCK_TAB}" renamed to "{RENAMED_STOCK_TAB}": 400 Unable to parse range'),
    Breakage("flaky", "ok", "answers 503 twice, then normally"),
    Breakage("stale", "fail", "newest Updated date is 2 to 20 days old"),
    Breakage("negative_stock", "fail", "a negative Quantity"),
    Breakage("empty_stock", "fail", f'the "{STOCK_TAB}" tab holds only its header'),
    Breakage("server_error", "ok", "answers 500 once, then normally"),
    Breakage("low_stock", "warn", "a Quantity under 5 (none negative)"),
    Breakage("slow", "ok", "every answer delayed by 1.5 to 3 s"),
    Breakage("hang", "error", "every request is held until the client gives up"),
    Breakage("prices_in_kopecks", "fail",
             f"{WATCHED_SUPPLIER}'s prices pasted in kopecks (x100): their average Price is far "
             f"over {PRICE_CEILING}"),
    Breakage("quantities_in_grams", "warn",
             f"every Quantity in grams (x1000): the 90th percentile is over {QUANTITY_CEILING}; the check "
             "fails but has severity warn"),
    # How tables break in people's hands; the stock profile names these columns by header.
    Breakage("columns_moved", "ok",
             'columns "Product" and "Reorder level" swapped: checks by header still find them'),
    Breakage("header_renamed", "fail", 'header "Supplier" renamed to "Vendor"'),
    Breakage("duplicate_keys", "fail", "a SKU pasted over another row's"),
    Breakage("missing_values", "warn", 'one or two Supplier cells blank or "n/a" (under 5 % of rows)'),
    Breakage("invalid_values", "fail", "a Price typed as text"),
    Breakage("unknown_sku", "fail", "a Stock SKU that is not in the head office's catalogue"),
    Breakage("rows_dropped", "fail", "after the first read, half of the Stock rows deleted (a filter or "
             "sort gone wrong)"),
    Breakage("headers_renamed", "warn", "after the first read, a Stock column renamed"),
)
_BY_KIND = {b.kind: b for b in BREAKAGES}
_AT_MOST_ONE = frozenset({"hang"})  # one held request is enough to prove timeouts work
HEALTHY = Breakage("healthy", "ok", "")
CATALOGUE = Breakage("catalogue", "ok", "the head office's catalogue: every SKU a store may hold")
# A spreadsheet of a hand-written folder without a manifest: nothing was done to it on purpose, and
# what its checks will say is not known beforehand.
GIVEN = Breakage("given", "unknown", "a spreadsheet of a hand-written dataset folder")
GIVEN_PROFILE = "basic"  # the checks that fit any spreadsheet (dataset_config.basic_profile)
CATALOGUE_TITLE = "Catalogue — head office"
CATALOGUE_TAB = "Catalogue"
UNKNOWN_SKU = "SKU-99999"  # never in the catalogue (its SKUs are SKU-10000 to SKU-14473)
# Broken by an edit after the first read: the manifest's verdict is a later read's.
AFTER_FIRST_READ = frozenset({"rows_dropped", "headers_renamed"})


@dataclass(frozen=True)
class SheetEntry:
    """One configured spreadsheet and what was done to it."""

    id: str
    title: str
    tags: tuple[str, ...]
    kind: str  # "healthy", "catalogue" or a Breakage kind
    expect: str  # ok | warn | fail | error
    note: str = ""
    profile: str = "stock"  # the config profile that checks it (dataset_config)

    @property
    def broken(self) -> bool:
        return self.kind not in (HEALTHY.kind, CATALOGUE.kind, GIVEN.kind)


@dataclass
class Dataset:
    """Spreadsheets to serve, faults to inject, and the manifest of what is broken how.

    ``sheets`` lists every spreadsheet a config should name, in order, including the "missing" ones
    that have no payload. ``payloads`` maps id -> control payload for the ones that exist.
    """

    seed: int | None
    now: datetime | None
    sheets: list[SheetEntry]
    payloads: dict[str, dict]
    faults: list[dict] = field(default_factory=list)
    edits: dict[str, dict] = field(default_factory=dict)  # id -> its payload after the first read

    @property
    def manifest(self) -> dict[str, SheetEntry]:
        """The broken spreadsheets, by id."""
        return {entry.id: entry for entry in self.sheets if entry.broken}

    def of_kind(self, kind: str) -> list[SheetEntry]:
        return [entry for entry in self.sheets if entry.kind == kind]

    def healthy(self) -> list[SheetEntry]:
        return self.of_kind(HEALTHY.kind)


FOLDER_MIME = "application/vnd.google-apps.folder"
FOLDER_NAME = "Stores"  # the folder's name in Drive, "Stores 1"... when there are several


def filed(dataset: Dataset, folders: int = 1, name: str = FOLDER_NAME) -> tuple[Dataset, list[str]]:
    """``dataset`` with its spreadsheets in ``folders`` Drive folders ("Stores 1", ...; one folder is
    "Stores"), dealt out in turn, and the folders' ids: a ``[[folders]]`` config's Drive. Their later
    edits stay in their folder. Folder ids are derived from the dataset's seed (stable)."""
    numbers = range(1, folders + 1)
    ids = [f"1{name.lower()}Folder{dataset.seed or 0:04d}{n:03d}".ljust(33, "f") for n in numbers]
    titles = [name] if folders == 1 else [f"{name} {n}" for n in numbers]
    payloads = {folder_id: {"title": title, "mimeType": FOLDER_MIME}
                for folder_id, title in zip(ids, titles, strict=True)}
    parent = {sheet_id: ids[n % folders] for n, sheet_id in enumerate(dataset.payloads)}

    def placed(payload: dict, sid: str) -> dict:
        return {**payload, "parents": [parent[sid]]}

    payloads.update({sid: placed(payload, sid) for sid, payload in dataset.payloads.items()})
    edits = {sid: placed(payload, sid) for sid, payload in dataset.edits.items() if sid in parent}
    return replace(dataset, payloads=payloads, edits=edits), ids


def generate(n: int, seed: int = 0, now: datetime | None = None) -> Dataset:
    """``n`` store spreadsheets, deterministic for (n, seed, now); ``now`` defaults to real UTC now.

    Dates in the data are placed relative to ``now``: a healthy spreadsheet's newest row is 5 to
    90 minutes old at ``now`` (so it passes a "warn > 2h" freshness check for a while after).
    """
    if n < 0:
        raise ValueError(f"the number of spreadsheets must be >= 0, got {n}")
    now = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    rng = random.Random(seed)
    pools = _Pools(rng, now)
    stores = n - 1 if n >= 2 else n  # and the catalogue, the n-th
    kinds = _deal_breakages(rng, stores)
    width = max(3, len(str(stores)))
    ids = _unique_ids(rng, stores)
    sheets: list[SheetEntry] = []
    payloads: dict[str, dict] = {}
    faults: list[dict] = []
    edits: dict[str, dict] = {}
    for index, (sheet_id, breakage) in enumerate(zip(ids, kinds, strict=True)):
        city = _CITIES[rng.randrange(len(_CITIES))]
        title = f"Store {index + 1:0{width}d} — {city}"
        note = breakage.description
        payload = _healthy_payload(rng, pools, title) if breakage.kind != "missing" else None
        if breakage.kind in AFTER_FIRST_READ:
            edits[sheet_id] = _edited(rng, breakage.kind, payload)
        extra_note = _break(rng, pools.now, breakage.kind, sheet_id, payload, faults)
        if extra_note:
            note = f"{note} ({extra_note})"
        if payload is not None:
            payloads[sheet_id] = payload
        tag = city.lower().replace(" ", "-")
        sheets.append(SheetEntry(sheet_id, title, (tag,), breakage.kind, breakage.expect, note))
    if stores < n:
        catalogue_id = _unique_ids(rng, 1, exclude=set(ids))[0]
        payloads[catalogue_id] = _catalogue_payload(pools)
        sheets.append(SheetEntry(catalogue_id, CATALOGUE_TITLE, ("head-office",), CATALOGUE.kind,
                                 CATALOGUE.expect, CATALOGUE.description, profile="catalogue"))
    return Dataset(seed=seed, now=now, sheets=sheets, payloads=payloads, faults=faults, edits=edits)


def _catalogue_payload(pools: _Pools) -> dict:
    header = ["SKU", "Product", "Supplier", "Price"]
    return {"title": CATALOGUE_TITLE, "tabs": {CATALOGUE_TAB: [header, *map(list, pools.catalog)]},
            "modifiedTime": rfc3339(pools.now - timedelta(days=3))}


def _edited(rng: random.Random, kind: str, payload: dict) -> dict:
    """What a store whose breakage comes after the first read becomes (``payload`` stays healthy)."""
    stock = payload["tabs"][STOCK_TAB]
    if kind == "rows_dropped":
        kept = stock[:1 + (len(stock) - 1) // 2]
    else:  # headers_renamed
        kept = [[*stock[0][:1], "Item", *stock[0][2:]], *stock[1:]]
    # Without the original's modifiedTime: the edit is made when it is applied, and Drive stamps it then.
    edited = {key: value for key, value in payload.items() if key != "modifiedTime"}
    return {**edited, "tabs": {**payload["tabs"], STOCK_TAB: kept}}


def _deal_breakages(rng: random.Random, n: int) -> list[Breakage]:
    broken = round(n * BROKEN_SHARE)
    chosen = rng.sample(range(n), broken)
    kinds = [HEALTHY] * n
    dealt: dict[str, int] = {}
    cycle = [b for b in BREAKAGES]
    position = 0
    for index in chosen:
        while True:
            breakage = cycle[position % len(cycle)]
            position += 1
            if breakage.kind not in _AT_MOST_ONE or not dealt.get(breakage.kind):
                break
        dealt[breakage.kind] = dealt.get(breakage.kind, 0) + 1
        kinds[index] = breakage
    return kinds


def _unique_ids(rng: random.Random, n: int, exclude: set[str] | None = None) -> list[str]:
    """Ids shaped like Google's: 44 characters of base64url, starting with "1"."""
    ids: list[str] = []
    seen: set[str] = set(exclude or ())
    while len(ids) < n:
        candidate = "1" + "".join(rng.choices(_ID_ALPHABET, k=43))
        if candidate not in seen:
            seen.add(candidate)
            ids.append(candidate)
    return ids


def _stamp(moment: datetime) -> dict:
    return {"datetime": moment.strftime("%Y-%m-%dT%H:%M:%SZ")}


def rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


class _Pools:
    """Row lists shared by every spreadsheet of one dataset (read-only once built)."""

    def __init__(self, rng: random.Random, now: datetime) -> None:
        self.now = now
        self.catalog = [self._product(rng, i) for i in range(_CATALOG_SIZE)]
        rows = [self._stock_row(rng, self.catalog[i % _CATALOG_SIZE]) for i in range(_POOL_ROWS)]
        self.stock = rows + rows[:MAX_STOCK_ROWS]  # slices never need to wrap around
        sales = [self._sales_row(rng) for _ in range(_SALES_POOL_ROWS)]
        self.sales = sales + sales[:120]
        # A handful of recent moments, shared as cells: 5..90 minutes before ``now``.
        self.recent = [_stamp(now - timedelta(minutes=m)) for m in range(5, 91, 5)]

    @staticmethod
    def _product(rng: random.Random, index: int) -> tuple[str, str, str, float]:
        adjective, flavour, thing = (words[rng.randrange(len(words))] for words in _PRODUCT_WORDS)
        size = _SIZES[rng.randrange(len(_SIZES))]
        sku = f"SKU-{10000 + index * 7:05d}"
        supplier = _SUPPLIERS[rng.randrange(len(_SUPPLIERS))]
        price = round(rng.uniform(39, 1490), 2)
        return sku, f"{adjective} {flavour} {thing}, {size}", supplier, price

    def _stock_row(self, rng: random.Random, product: tuple[str, str, str, float]) -> list:
        sku, name, supplier, price = product
        quantity = rng.randint(5, 480)
        # Older than a day: only a sheet's few "recent" rows make it fresh.
        age = timedelta(days=rng.randint(2, 30), minutes=rng.randint(0, 1439))
        updated = _stamp(self.now - age)
        reorder = rng.choice(REORDER_LEVELS)
        return [sku, name, supplier, price, updated, quantity, reorder, round(price * quantity, 2)]

    def _sales_row(self, rng: random.Random) -> list:
        sku, _, _, price = self.catalog[rng.randrange(_CATALOG_SIZE)]
        sold = rng.randint(1, 40)
        day = _stamp(self.now - timedelta(days=rng.randint(1, 14), hours=rng.randint(0, 12)))
        return [day, sku, sold, round(price * sold, 2)]


def _healthy_payload(rng: random.Random, pools: _Pools, title: str) -> dict:
    count = rng.randint(MIN_STOCK_ROWS, MAX_STOCK_ROWS)
    start = rng.randrange(_POOL_ROWS)
    rows = pools.stock[start:start + count]  # a new list of shared row lists
    newest = 0
    for _ in range(_RECENT_ROWS_PER_SHEET):
        position = rng.randrange(count)
        which = rng.randrange(len(pools.recent))
        newest = max(newest, len(pools.recent) - 1 - which)
        row = list(rows[position])
        row[4] = pools.recent[which]
        rows[position] = row
    sales_start = rng.randrange(_SALES_POOL_ROWS)
    sales = pools.sales[sales_start:sales_start + rng.randint(30, 120)]
    manager = _MANAGERS[rng.randrange(len(_MANAGERS))]
    notes = [["Manager", manager], ["Note", _NOTES[rng.randrange(len(_NOTES))]]]
    freshest = pools.recent[len(pools.recent) - 1 - newest]["datetime"]
    return {
        "title": title,
        "tabs": {
            STOCK_TAB: [list(STOCK_HEADER), *rows],
            "Sales": [list(SALES_HEADER), *sales],
            "Notes": notes,
        },
        "modifiedTime": freshest.replace("Z", ".000Z"),
    }


def broken_copy(payload: dict, kind: str, sheet_id: str, now: datetime, seed: int = 0
                ) -> tuple[dict | None, dict | None, list[dict]]:
    """A healthy store's ``payload`` (left as it is) broken by ``kind`` as ``generate`` breaks one:
    the payload to serve (None: the spreadsheet does not exist), what it becomes after the first read
    for a breakage that comes then (else None), and the faults to add."""
    rng = random.Random(seed)
    copy = {**payload, "tabs": {name: list(rows) for name, rows in payload["tabs"].items()}}
    edited = _edited(rng, kind, copy) if kind in AFTER_FIRST_READ else None
    faults: list[dict] = []
    _break(rng, now, kind, sheet_id, copy, faults)
    return (None if kind == "missing" else copy), edited, faults


def _break(
    rng: random.Random, now: datetime, kind: str, sheet_id: str, payload: dict | None, faults: list
) -> str:
    """Apply ``kind`` to a healthy payload (in place) or add its faults; returns a detail note."""
    stock = payload["tabs"][STOCK_TAB] if payload is not None else None
    if kind == "formula_errors":
        cells = [(7, "#REF!"), (3, "#N/A"), (7, "#DIV/0!")]
        refs = []
        for column, error in cells:
            row_number = rng.randrange(2, len(stock) + 1)
            row = list(stock[row_number - 1])
            row[column] = error
            stock[row_number - 1] = row
            refs.append(f"{'ABCDEFGH'[column]}{row_number}={error}")
        return ", ".join(refs)
    if kind == "stale":
        days = rng.randint(2, 20)
        newest = now - timedelta(days=days)
        for i in range(1, len(stock)):
            row = list(stock[i])
            older = timedelta(days=rng.randint(0, 30), minutes=rng.randint(0, 600))
            row[4] = _stamp(newest - older)
            stock[i] = row
        stock[rng.randrange(1, len(stock))][4] = _stamp(newest)
        payload["modifiedTime"] = rfc3339(newest)
        return f"newest {newest:%Y-%m-%d %H:%M}Z"
    if kind in ("negative_stock", "low_stock"):
        row_number = rng.randrange(2, len(stock) + 1)
        row = list(stock[row_number - 1])
        row[5] = -rng.randint(1, 12) if kind == "negative_stock" else rng.randint(0, 4)
        row[7] = round(row[3] * row[5], 2)
        stock[row_number - 1] = row
        return f"F{row_number}={row[5]}"
    if kind == "prices_in_kopecks":
        return _scaled(stock, 3, 100, lambda row: row[2] == WATCHED_SUPPLIER)
    if kind == "quantities_in_grams":
        return _scaled(stock, 5, 1000, lambda row: True)
    if kind in _TABLE_BREAKAGES:
        return _TABLE_BREAKAGES[kind](rng, stock)
    if kind == "unknown_sku":
        row_number = rng.randrange(2, len(stock) + 1)
        stock[row_number - 1] = [UNKNOWN_SKU, *stock[row_number - 1][1:]]
        return f"A{row_number}={UNKNOWN_SKU}"
    if kind == "empty_stock":
        del stock[1:]
        return ""
    if kind == "renamed_tab":
        tabs = payload["tabs"]
        payload["tabs"] = {RENAMED_STOCK_TAB if name == STOCK_TAB else name: rows
                           for name, rows in tabs.items()}
        return ""
    return _add_fault(rng, kind, sheet_id, faults)


def _add_fault(rng: random.Random, kind: str, sheet_id: str, faults: list) -> str:
    """A breakage the sandbox's faults make, not the data: its fault spec added; returns a note."""
    if kind == "access_removed":
        faults.append({"spreadsheet": sheet_id, "statuses": [403], "repeat": True})
    elif kind == "flaky":
        faults.append({"spreadsheet": sheet_id, "statuses": [503, 503]})
    elif kind == "server_error":
        faults.append({"spreadsheet": sheet_id, "statuses": [500]})
    elif kind == "slow":
        latency = rng.randrange(1500, 3001, 100)
        faults.append({"spreadsheet": sheet_id, "latency_ms": latency})
        return f"{latency} ms"
    elif kind == "hang":
        faults.append({"spreadsheet": sheet_id, "hang": True})
    return ""


def _scaled(stock: list[list], column: int, factor: int, which) -> str:
    """Multiply ``column`` by ``factor`` in the data rows ``which`` picks (copied: rows are shared)."""
    changed = 0
    for index in range(1, len(stock)):
        if which(stock[index]):
            row = list(stock[index])
            row[column] = round(row[column] * factor, 2)
            stock[index] = row
            changed += 1
    return f"{changed} rows"


def _own_row(stock: list, row_number: int) -> list:
    """Row ``row_number`` (1-based) as its own list: pool rows are shared by many spreadsheets."""
    row = stock[row_number - 1] = list(stock[row_number - 1])
    return row


def _swap_product_and_reorder_level(rng: random.Random, stock: list) -> str:
    # Columns no check names by letter (B and G), so only the checks by header could notice.
    for row_number in range(1, len(stock) + 1):
        row = _own_row(stock, row_number)
        row[1], row[6] = row[6], row[1]
    return "B <-> G"


def _rename_supplier(rng: random.Random, stock: list) -> str:
    _own_row(stock, 1)[2] = "Vendor"
    return "C1"


def _duplicate_a_key(rng: random.Random, stock: list) -> str:
    first, again = sorted(rng.sample(range(2, len(stock) + 1), 2))
    _own_row(stock, again)[0] = stock[first - 1][0]
    return f"A{again}=A{first}"


def _blank_suppliers(rng: random.Random, stock: list) -> str:
    rows = sorted(rng.sample(range(2, len(stock) + 1), rng.randint(1, 2)))
    for row_number in rows:
        _own_row(stock, row_number)[2] = rng.choice(("", "n/a"))
    return ", ".join(f"C{row_number}" for row_number in rows)


def _price_as_text(rng: random.Random, stock: list) -> str:
    row_number = rng.randrange(2, len(stock) + 1)
    row = _own_row(stock, row_number)
    row[3] = f"{row[3]:,.2f}".replace(",", " ").replace(".", ",")  # "1 290,00": pasted from a report
    return f"D{row_number}={row[3]!r}"


_TABLE_BREAKAGES = {
    "columns_moved": _swap_product_and_reorder_level,
    "header_renamed": _rename_supplier,
    "duplicate_keys": _duplicate_a_key,
    "missing_values": _blank_suppliers,
    "invalid_values": _price_as_text,
}
