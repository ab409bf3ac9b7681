"""`check-config` (validate and print the plan) and `check ID` (read one spreadsheet now).

`check ID` inspects a spreadsheet exactly as a run does (``monitor.engine.inspect``), but records
nothing: no queue, breaker, health or DLQ change, and it needs no lock. It does spend one read of a
credential's quota (the same read gives the formulas ``volatile_formulas`` looks at), two when a
freshness check needs the spreadsheet's time zone; it picks the credential the last run used least in
its final minute, so that a check typed between runs does not push a run into a 429.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, NoReturn

from monitor.notify import lean_httpx  # noqa: F401  before httpx: see its doc

# isort: split

import click

from monitor.admin.change_plan import DEFAULT_EDIT_SHARES
from monitor.admin.plan import MEASURED, TYPICAL
from monitor.admin.reports import error_dict
from monitor.admin.targets import resolve_any
from monitor.app.operator_clock import operator_clock as clock
from monitor.app.operator_state import with_listed_folders
from monitor.checks import Check, CheckResult, Health, VolatileCell
from monitor.checks.conditions import format_number
from monitor.checks.explain import condition_text
from monitor.cli.common import admin_call, quiet_logs, reading_options
from monitor.cli.output import echo_fields, echo_table, emit_json, fail, styled_status
from monitor.cli.state_access import EXIT_OPERATIONAL, EXIT_USAGE, load_or_exit
from monitor.config import Config, Sheet
from monitor.core.durations import format_duration
from monitor.core.timefmt import format_utc
from monitor.core.wording import counted
from monitor.engine.inspect import SheetPlan

# What `check` exits 1 for: a check that fails (or could not be evaluated). A warning exits 0: it
# asks for a look, not for a script to stop.
FAILING = frozenset({Health.FAIL, Health.ERROR})


class EditShare(click.ParamType):
    """A share of spreadsheets edited per round interval, written as a percentage ("20%")."""

    name = "PERCENT"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, float):
            return value
        text = str(value).strip()
        try:
            # The sign is required: "0.2" could mean a fifth or a fifth of a percent.
            share = float(text.removesuffix("%")) / 100 if text.endswith("%") else math.nan
        except ValueError:
            share = math.nan
        if not 0 <= share <= 1:  # NaN fails both
            self.fail(f"{value!r} is not a percentage from 0% to 100%, e.g. 20%", param, ctx)
        return share


@click.command("check-config")
@reading_options
@click.option("--edits", "edit_shares", type=EditShare(), multiple=True,
              help="Share of spreadsheets edited per round interval to plan change detection's reads "
                   "for, e.g. 20% (repeatable; default: 5%, 20% and 50%).")
@click.option("--offline", is_flag=True,
              help="Ask neither Google's token service for a token (each key is still loaded and signs) "
                   "nor Telegram about the bot token and the chats.")
@click.option("--access", is_flag=True,
              help="Ask Drive whether the credentials can open every spreadsheet and folder the config "
                   "names (one files.get each, against Drive's quota, not Sheets'), and list those they "
                   "cannot, with the account to share them with.")
def check_config(config_path: Path | None, as_json: bool, edit_shares: tuple[float, ...],
                 offline: bool, access: bool) -> None:
    """Validate the config (credential files included) and print the plan: spreadsheets, reads per
    round (a full round, and with change detection at a few edit rates), the quota arithmetic per
    Google Cloud project, the round time at the quota and at the last run's read time, and warnings.
    Then check that a run's budget ends before the next round_interval tick, and this machine: the
    state folder can be read and written, the run lock taken, every key loads and signs and (unless
    --offline) Google issues a token for it, and Telegram knows the bot token and lets the bot see
    every chat (getMe, getChat; nothing is sent). Exit 2 with every problem listed (with --json, as
    a document on stdout) if the config, the budget, a key, the token or a chat is refused, 1 if only
    the machine has a problem (the state folder, the network). With --access, also every spreadsheet
    and folder the credentials cannot open."""
    quiet_logs()
    if access and offline:
        raise click.UsageError("--access asks Drive about every spreadsheet: leave out --offline")
    config = load_or_exit(config_path, require_secrets=True, as_json=as_json, listed=False)
    from monitor.app.check_config import review_config  # google-auth loads only for this command

    # The plan counts the folders' spreadsheets as the last run listed them; --access asks about
    # the files the config names (a folder, not each spreadsheet Drive lists in it).
    review = review_config(with_listed_folders(config), edit_shares or DEFAULT_EDIT_SHARES,
                           offline=offline, access=access, named=config)
    plan = review.plan
    if as_json:
        emit_json({"valid": True, **plan, "explanations": review.explanations,
                   "checks": [probe.to_dict() for probe in review.probes],
                   **({"access": _access_json(review.access)} if review.access is not None else {})})
        _exit_for(review)
        return
    click.echo(f"Config valid: {plan['config']}")
    echo_fields([
        ("spreadsheets", f"{plan['spreadsheets']} ({counted(plan['checks'], 'check')} over "
                         f"{counted(plan['ranges'], 'range')})"),
        ("reads per round", _reads_per_round(plan)),
        ("change detection", _change_detection(plan)),
        *_cross_sheet_field(plan),
        *_project_fields(plan),
        ("quota", plan["summary"]),
        ("read time", _read_time(plan)),
        ("runs per round", _runs(plan, config)),
        ("state", plan["state_dir"]),
        ("telegram", _telegram_field(config, offline)),
    ])
    _echo_change_estimates(plan, config)
    _echo_explanations(review.explanations)
    if plan["warnings"]:
        click.echo(f"\nWarnings ({len(plan['warnings'])}):")
        for warning in plan["warnings"]:
            click.echo(f"  - {click.style(warning, fg='yellow')}")
    if review.access is not None:
        _echo_access(review.access)
    _echo_probes(review)
    _exit_for(review)


def _echo_access(report) -> None:
    """Every spreadsheet and folder the credentials cannot open, by the account to share it with."""
    from monitor.app.access import share_lines

    if not report.refusals:
        return
    click.echo(f"\nCannot open ({len(report.refusals)} of {report.targets * report.credentials} asked):")
    for account, refusals in share_lines(report.refusals).items():
        whom = f"share with {account}" if account else "the key's account (its key did not load)"
        click.echo(f"  {whom}:")
        for refusal in refusals:
            target = refusal.target
            click.echo(f"    - {target.name} ({target.id}), {target.origin}: {refusal.problem}")
    click.echo("  then recheck: sheet-monitor check-config --access")


def _access_json(report) -> dict[str, Any]:
    return {"asked": report.targets * report.credentials, "requests": report.requests,
            "seconds": round(report.seconds, 3), "accounts": report.accounts,
            "cannot_open": [{"id": r.target.id, "name": r.target.name, "origin": r.target.origin,
                             "credential": r.credential, "account": r.account, "problem": r.problem,
                             "answered": r.answered} for r in report.refusals]}


_OWN_CHECKS_SHOWN = 20  # spreadsheets whose own checks are told one by one; the rest counted


def _echo_explanations(told: list[dict[str, Any]]) -> None:
    """Each profile's checks, then each spreadsheet's own, one sentence per check."""
    profiles = [group for group in told if "profile" in group]
    own = [group for group in told if "sheet" in group]
    click.echo("\nWhat the checks do:")
    for group in [*profiles, *own[:_OWN_CHECKS_SHOWN]]:
        if "profile" in group:
            count = group["spreadsheets"]
            click.echo(f"  profile {group['profile']} ({counted(count, 'spreadsheet')}):")
        else:
            click.echo(f"  {group['name']} ({group['sheet']}), its own:")
        for check in group["checks"]:
            owner = f" (owner: {check['owner']})" if check["owner"] else ""
            click.echo(f"    - {check['name']}: {check['explanation']}{owner}")
    if len(own) > _OWN_CHECKS_SHOWN:
        click.echo(f"  and {len(own) - _OWN_CHECKS_SHOWN} more spreadsheets with checks of their own "
                   "(--json lists them all)")


def _telegram_field(config: Config, offline: bool) -> str:
    if not config.telegram.enabled:
        return "not configured: messages go to stdout"
    routes = config.telegram.routes
    chats = len({route.chat_id for route in routes} - {config.telegram.chat_id})
    routes = f", routes: {len(routes)}, to {counted(chats, 'more chat')}" if routes else ""
    return f"enabled{routes}" + (" (Telegram not asked: --offline)" if offline else "")


def _echo_probes(review) -> None:
    """One line per probe of this machine: ok, or the problem and, under it, its fix."""
    click.echo("\nChecks:")
    for probe in review.probes:
        mark = click.style("ok     ", fg="green") if probe.ok else click.style("problem", fg="red")
        click.echo(f"  {mark}  {probe.name}: {probe.detail}")
        if probe.fix:
            click.echo(f"           fix: {probe.fix}")
    # The verdict comes last, where the eye lands: a valid config on a machine that cannot run it
    # (a state folder it cannot write, a key Google refuses) is not ready.
    if review.problems:
        click.echo(click.style(f"\nNot ready: {counted(review.problems, 'problem')} above.", fg="red"))
    else:
        click.echo(click.style("\nReady: the config is valid and every check passed.", fg="green"))


def _exit_for(review) -> None:
    """Exit 2 when a problem is the config's (a key, the bot token, a chat), 1 when only the
    machine's, else return."""
    if review.problems:
        raise SystemExit(EXIT_USAGE if review.usage_problem else EXIT_OPERATIONAL)


def _reads_per_round(plan: dict[str, Any]) -> str:
    drive = f", plus {plan['drive_reads_per_round']} Drive reads" if plan["drive_reads_per_round"] else ""
    # A time zone a freshness check needs comes in the same request as the values: no read of its own.
    return f"{plan['reads_per_round']} in a full round (one read per spreadsheet{drive})"


def _cross_sheet_field(plan: dict[str, Any]) -> list[tuple[str, str]]:
    cross = plan["cross_sheet"]
    if not cross["checks"]:
        return []
    text = (f"{cross['checks']} checks; their other sides are {cross['ranges_lent']} ranges read in their "
            "own spreadsheets' batchGet: no extra read")
    if cross["reads_per_change_of_keys"]:
        text += (f"; a change of the keys compared with reads the {cross['reads_per_change_of_keys']} "
                 "spreadsheets checked against them again")
    return [("cross-sheet", text)]


def _change_detection(plan: dict[str, Any]) -> str:
    detection, count = plan["change_detection"], plan["spreadsheets"]
    if not detection["enabled"]:
        return f"off ([run] change_detection = false): every round reads all {count} spreadsheets"
    reasons = ["what Drive reports edited"]
    if detection["max_age"]:
        every = "; ".join(f"{group['max_age']}: every {group['rounds_between_reads']} rounds for "
                          f"{group['spreadsheets']}" for group in detection["max_age"])
        reasons.append(f"what max_age makes due ({every})")
    if detection["always_read"]:
        reasons.append(f"the {detection['always_read']} always_read")
    listed = ", ".join(reasons[:-1]) + " and " + reasons[-1] if len(reasons) > 1 else reasons[0]
    return (f"on: a round reads {listed}; the first round, and any round Drive cannot answer, "
            f"reads all {count}")


def _echo_change_estimates(plan: dict[str, Any], config: Config) -> None:
    estimates = plan["change_detection"]["estimates"]
    if not estimates:
        return
    interval = format_duration(config.run.round_interval)
    click.echo(f"\nReads per round with change detection, by share of spreadsheets edited "
               f"per round_interval ({interval}):")
    headers = ("edited", "changed", "max_age due", "always_read", "reads", "Drive requests", "round", "fits")
    echo_table(headers,
               [(f"{row['edit_share'] * 100:g}%", row["changed_reads"], row["max_age_reads"],
                 row["always_read_reads"], row["reads_per_round"], row["drive_requests_per_round"],
                 _round_time(row["round_seconds_at_latency"]), _yes_no(row["fits"]))
                for row in estimates])


def _round_time(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds:.0f} s" if seconds < 60 else f"{seconds / 60:.1f} min"


def _yes_no(fits: bool | None) -> str:
    return "-" if fits is None else "yes" if fits else "no"


def _project_fields(plan: dict[str, Any]) -> list[tuple[str, str]]:
    projects = plan["projects"]
    head = (f"{len(projects)} ({plan['read_requests_per_minute']}/min per credential, "
            f"{plan['project_read_requests_per_minute']}/min per project)")
    fields = [("projects", head)]
    for project in projects:
        names = ", ".join(Path(path).name for path in project["credentials"])
        fields.append((f"  {project['project']}",
                       f"{names}: {project['reads_per_minute']} reads/min; alone, a round in "
                       f"{project['round_seconds_alone'] / 60:.1f} min"))
    return fields


def _read_time(plan: dict[str, Any]) -> str:
    if plan["round_seconds_at_latency"] is None:
        return "-"
    source = MEASURED if plan["read_seconds_source"] == "last_run" else TYPICAL
    return (f"{plan['read_seconds']:.2f} s a read ({source}): {plan['reads_in_flight']} reads in flight "
            f"(max_concurrent_reads {plan['max_concurrent_reads']}), a round in "
            f"{plan['round_seconds_at_latency'] / 60:.1f} min")


def _runs(plan: dict[str, Any], config) -> str:
    runs = plan["runs_per_round"]
    if runs is None:
        return "-"
    budget = format_duration(config.run.budget)
    return f"{runs} (each run works at most budget = {budget})"


@click.command()
@reading_options
@click.argument("reference", metavar="ID|URL|NAME")
@click.option("--profile", metavar="NAME",
              help="Judge it by this configured profile's checks instead of its own; for a spreadsheet "
                   "the config does not list, instead of the checks `suggest` proposes for it.")
@click.option("--exit-zero", is_flag=True,
              help="Exit 0 whatever the checks found (only a read that fails, or a usage error, exits "
                   "non-zero), as before checks that fail exited 1.")
def check(config_path: Path | None, as_json: bool, reference: str, profile: str | None,
          exit_zero: bool) -> None:
    """Read one spreadsheet now and print each check's result and the cells involved, and warn about
    formulas in its ranges whose values move without an edit (NOW(), IMPORTRANGE) when change
    detection would read it late. Changes no queue, breaker or health state; spends one read of Google
    quota (with a freshness check on a range, its dates are read in the spreadsheet's own time zone,
    which the same request gives), plus one Drive read for a freshness check on the file's modified
    time.

    The spreadsheet is named by its id, its URL or its name (a part of the name that fits only one).
    One the config does not list, named by its id or URL, is judged by --profile, or else by the
    checks `sheet-monitor suggest` proposes for it from one more read (they are printed first).
    Exit 0 when its checks are ok or only warn, 1 when one fails (or it cannot be read), 2 when the
    reference is no id or URL and fits no configured spreadsheet or several (they are listed), or
    --profile names no profile: a script can gate on it, as on `soda scan`. --exit-zero keeps 0 for
    what the checks found."""
    quiet_logs()
    config = load_or_exit(config_path, require_secrets=True, require_sheets=False)
    target = admin_call(resolve_any, config.sheets, reference)
    from monitor.app.check import check_any  # gspread loads only for the command that reads
    from monitor.app.pacing import NoQuotaLeft

    try:
        sheet, checked = admin_call(check_any, config, target, profile, clock)
    except NoQuotaLeft as exc:
        fail(str(exc), EXIT_OPERATIONAL)
    if checked.error is not None:
        _read_failed(sheet, error_dict(checked.error), checked.spent, as_json)
    plan, results, volatile = checked.plan, checked.results, checked.volatile
    warnings = _volatile_warnings(plan, sheet, volatile or [])
    by_name = {check.name: check for check in plan.checks}
    if as_json:
        emit_json({"id": sheet.id, "name": sheet.name, "judged_by": checked.judged_by,
                   "checked_at": format_utc(checked.checked_at),
                   "health": checked.health, "time_zone": checked.time_zone,
                   "results": [_result_dict(r, by_name.get(r.check_name)) for r in results],
                   "quota_spent": checked.spent,
                   "volatile": None if volatile is None else [cell.to_dict() for cell in volatile],
                   "warnings": warnings})
    else:
        _echo_check(sheet, checked.health, checked.time_zone, results, warnings, checked.spent,
                    checked.credential, by_name, checked.judged_by)
    if checked.health in FAILING and not exit_zero:
        raise SystemExit(EXIT_OPERATIONAL)


def _echo_check(sheet: Sheet, health: str, time_zone: str | None, results, warnings: list[str],
                spent: dict, credential: str, by_name: dict[str, Check], judged_by: str) -> None:
    zone = f" in its time zone {time_zone}" if time_zone else ""
    click.echo(f"{sheet.name} ({sheet.id}): {styled_status(health)}{zone}")
    if judged_by in _JUDGED_BY:
        checks = counted(len(sheet.checks), "check")
        click.echo(_JUDGED_BY[judged_by].format(profile=sheet.profile, checks=checks))
    echo_table(("check", "status", "value", "condition", "message", "cells"),
               [(r.check_name, r.status, _value_text(r.observed), _condition(by_name.get(r.check_name)),
                 r.message, ", ".join(map(str, r.cells))) for r in results],
               status_column=1, empty="(no checks configured)")
    _echo_baselines(results)
    for warning in warnings:
        click.echo(f"\n{click.style('Warning: ' + warning, fg='yellow')}")
    reads = {0: "no read", 1: "one read"}.get(spent["reads"]) or counted(spent["reads"], "read")
    drive = " and one Drive read" if spent["drive_reads"] else ""
    click.echo(f"\nSpent {reads} of {Path(credential).name}'s quota{drive}; nothing was recorded.", err=True)


def _echo_baselines(results) -> None:
    """What each anomaly check took as usual, uncut (a table cell would cut it to the width): the
    baseline it judged against, or how far it is in learning one."""
    learnt = [result for result in results if result.kind == "anomaly"]
    if learnt:
        click.echo("\nBaselines:")
    for result in learnt:
        click.echo(f"  {result.check_name}: {result.message}")


_JUDGED_BY = {
    "profile": "Judged by profile {profile} (--profile).",
    "suggested": "Not in the config: judged by the {checks} `sheet-monitor suggest` proposes for it.",
}


def _result_dict(result: CheckResult, check: Check | None) -> dict[str, Any]:
    """A result with what its check asks: its condition, its sentence, its severity and owner."""
    told = {"condition": None, "explanation": None, "severity": None}
    if check is not None:
        told = {"condition": condition_text(check), "explanation": check.explain(),
                "severity": check.severity}
    return {**result.to_dict(), **told}


def _value_text(observed: Any) -> str:
    """The metric as the check measured it: a number as a spreadsheet shows it, a time as stored."""
    if observed is None:
        return "-"
    return format_number(observed) if isinstance(observed, int | float) else str(observed)


def _condition(check: Check | None) -> str:
    return condition_text(check) if check is not None else "-"  # a finding of no check (IMPORTRANGE)


def _volatile_warnings(plan: SheetPlan, sheet: Sheet, volatile: list[VolatileCell]) -> list[str]:
    if not volatile:
        return []
    cells = "; ".join(f"{cell.cell} {', '.join(name + '()' for name in cell.functions)}"
                      for cell in volatile[:5])
    more = f"; and {len(volatile) - 5} more cells" if len(volatile) > 5 else ""
    where = (f"set always_read = true in [profiles.{sheet.profile}]" if sheet.profile
             else "give it a profile with always_read = true")
    return [
        f"{cells}{more}: these values change without an edit, which Drive does not report, so with "
        f"change detection a round reads them only when max_age ({format_duration(plan.max_age)}) "
        f"comes due; to read this spreadsheet every round, {where}"]


def _read_failed(sheet: Sheet, error: dict, spent: dict, as_json: bool) -> NoReturn:
    if as_json:
        emit_json({"id": sheet.id, "name": sheet.name, "health": Health.ERROR.value, "error": error,
                   "quota_spent": spent})
    else:
        status = f" (HTTP {error['http_status']})" if error.get("http_status") else ""
        named = sheet.id if sheet.name == sheet.id else f"{sheet.name} ({sheet.id})"  # no title read yet
        click.echo(f"{named}: could not be read: {error.get('error_class')}{status}: "
                   f"{error.get('message')}")
    raise SystemExit(EXIT_OPERATIONAL)


COMMANDS = (check_config, check)
