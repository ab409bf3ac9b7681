"""Cross-sheet checks tied to their other spreadsheet, once every spreadsheet of the config is known.

A cross-sheet check names its other spreadsheet by id or by its name in the config; it must be
monitored too, because its range is read in that spreadsheet's own batchGet (no request of its own:
the other side costs a range, not a read) and kept, bounded, in its history for the dependents
(``monitor.engine.history``). So the other spreadsheet *lends* that range: it is added to its ranges
and to its fingerprint (a new dependent makes the next round read it, to have the value to lend).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from monitor.checks import CrossSheetCheck

from .issues import ConfigIssue
from .model import Lend, Sheet, checks_fingerprint

# Where a check's other is written ("monitor.toml:31", "profiles.stock.checks[2].other"), or None.
Locate = Callable[[CrossSheetCheck], tuple[str, str] | None]


def link_cross_sheets(sheets: Sequence[Sheet], issues: list[ConfigIssue], *,
                      unloaded: Collection[str] = (), locate: Locate = lambda check: None
                      ) -> tuple[Sheet, ...]:
    """``sheets`` with each cross-sheet check's other spreadsheet resolved (``Sheet.others``) and the
    ranges each spreadsheet lends (``Sheet.lends``); an unknown other spreadsheet goes to ``issues``,
    at the check's own line (``locate``), once for a profile's check that all its spreadsheets share.

    ``unloaded``: ids and names of spreadsheets the config lists but that did not load, their own
    problems reported already; a check naming one of them is not reported again (the one cause
    would drown under as many follow-ons as it has dependents)."""
    by_id = {sheet.id: sheet for sheet in sheets}
    by_name: dict[str, list[str]] = {}
    for sheet in sheets:
        by_name.setdefault(sheet.name, []).append(sheet.id)
    others: dict[str, list[tuple[str, str]]] = {}
    lends: dict[str, list[Lend]] = {}
    for sheet in sheets:
        for check in sheet.checks:
            if not isinstance(check, CrossSheetCheck):
                continue
            found = _resolve(sheet, check, by_id, by_name, unloaded)
            if isinstance(found, _Unresolved):
                where, key = locate(check) or (sheet.origin, f"check {check.name!r}: other")
                issue = ConfigIssue(where, key, found.problem, found.fix)
                if issue not in issues:
                    issues.append(issue)
                continue
            if found is None:
                continue
            others.setdefault(sheet.id, []).append((check.name, found))
            lend = Lend(check.other_range, "keys" if check.match == "keys" else check.aggregate)
            if lend not in lends.setdefault(found, []):
                lends[found].append(lend)
    if not others:
        return tuple(sheets)
    # One tuple for identical links: a profile's check names the same other for all its spreadsheets.
    shared: dict[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]] = {}
    return tuple(_linked(sheet, shared.setdefault(own := tuple(others.get(sheet.id, ())), own),
                         tuple(lends.get(sheet.id, ())))
                 for sheet in sheets)


@dataclass(frozen=True)
class _Unresolved:
    problem: str
    fix: str


def _resolve(sheet: Sheet, check: CrossSheetCheck, by_id: dict[str, Sheet], by_name: dict[str, list[str]],
             unloaded: Collection[str]) -> str | _Unresolved | None:
    """The other spreadsheet's id; why there is none; None when its own problems are told already."""
    if check.other in by_id:
        found = check.other
    elif len(by_name.get(check.other, ())) == 1:
        found = by_name[check.other][0]
    elif check.other in by_name:
        return _Unresolved(f"{len(by_name[check.other])} spreadsheets are named {check.other!r}",
                           "name the other spreadsheet by its id")
    elif check.other in unloaded:
        return None
    else:
        return _Unresolved(f"other spreadsheet {check.other!r} is not in the config",
                           "write the id or name of a configured spreadsheet; to compare with one not "
                           "monitored yet, add it to [[sheets]] (its range is read in its own batchGet)")
    if found == sheet.id:
        return _Unresolved(f"{sheet.name!r} is compared with itself: a cross-sheet check compares with "
                           "another spreadsheet, not its own", "compare two ranges of one spreadsheet "
                           "with two threshold checks, or name another spreadsheet")
    return found


def _linked(sheet: Sheet, others: tuple[tuple[str, str], ...], lends: tuple[Lend, ...]) -> Sheet:
    if not others and not lends:
        return sheet
    ranges, fingerprint = sheet.ranges, sheet.fingerprint  # its profile's, shared: see CheckSet
    if lends:  # a new dependent: the next round reads this spreadsheet to have its range to lend
        ranges = tuple(dict.fromkeys((*sheet.ranges, *(lend.range for lend in lends))))
        fingerprint = checks_fingerprint(sheet.checks, extra=[lend.key for lend in lends])
    # Field by field rather than ``dataclasses.replace``, which looks the fields up again for every
    # spreadsheet: at 20,000 spreadsheets that was 0.1 s of each run's start-up (a test holds this
    # list to the fields).
    return Sheet(id=sheet.id, name=sheet.name, profile=sheet.profile, tags=sheet.tags, checks=sheet.checks,
                 origin=sheet.origin, fingerprint=fingerprint, ranges=ranges,
                 needs_modified_time=sheet.needs_modified_time, max_age=sheet.max_age,
                 always_read=sheet.always_read, owner=sheet.owner, others=others, lends=lends)
