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
    lends: dict[str, dict[Lend, None]] = {}  # in the order first lent
    # A profile's spreadsheets share one tuple of checks (config.model.CheckSet), and its checks name
    # the same other spreadsheet for each: the cross-sheet checks of a tuple are picked out once, and
    # each check's other spreadsheet looked up once, not once per spreadsheet (at 20,000 spreadsheets
    # of 15 checks that was a fifth of a second of every run's start-up).
    crossing: dict[int, tuple[CrossSheetCheck, ...]] = {}
    looked_up: dict[int, tuple[str | _Unresolved | None, Lend]] = {}
    for sheet in sheets:
        cross_checks = crossing.get(id(sheet.checks))
        if cross_checks is None:
            cross_checks = crossing[id(sheet.checks)] = tuple(
                check for check in sheet.checks if isinstance(check, CrossSheetCheck))
        for check in cross_checks:
            known = looked_up.get(id(check))
            if known is None:
                known = looked_up[id(check)] = (
                    _other_of(check, by_id, by_name, unloaded),
                    Lend(check.other_range, "keys" if check.match == "keys" else check.aggregate))
            found, lend = known
            if found == sheet.id:
                found = _compared_with_itself(sheet)
            if isinstance(found, _Unresolved):
                where, key = locate(check) or (sheet.origin, f"check {check.name!r}: other")
                issue = ConfigIssue(where, key, found.problem, found.fix)
                if issue not in issues:
                    issues.append(issue)
                continue
            if found is None:
                continue
            others.setdefault(sheet.id, []).append((check.name, found))
            lends.setdefault(found, {})[lend] = None
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


def _other_of(check: CrossSheetCheck, by_id: dict[str, Sheet], by_name: dict[str, list[str]],
              unloaded: Collection[str]) -> str | _Unresolved | None:
    """The other spreadsheet's id; why there is none; None when its own problems are told already."""
    if check.other in by_id:
        return check.other
    if len(by_name.get(check.other, ())) == 1:
        return by_name[check.other][0]
    if check.other in by_name:
        return _Unresolved(f"{len(by_name[check.other])} spreadsheets are named {check.other!r}",
                           "name the other spreadsheet by its id")
    if check.other in unloaded:
        return None
    return _Unresolved(f"other spreadsheet {check.other!r} is not in the config",
                       "write the id or name of a configured spreadsheet; to compare with one not "
                       "monitored yet, add it to [[sheets]] (its range is read in its own batchGet)")


def _compared_with_itself(sheet: Sheet) -> _Unresolved:
    return _Unresolved(f"{sheet.name!r} is compared with itself: a cross-sheet check compares with "
                       "another spreadsheet, not its own", "compare two ranges of one spreadsheet "
                       "with two threshold checks, or name another spreadsheet")


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
