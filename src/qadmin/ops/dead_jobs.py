"""A job-queue library's failed jobs as dead letters: listing them with their errors (dead)
and giving them back as the library's own retry does (redrive).

The row change is the library's, kept as data in its profile (``Profile.retry``): this module
only renders it. Each job is one UPDATE that checks again that the job is still failed, so a
job given back meanwhile (by a worker, the library's tooling or another redrive) is left
alone and reported gone: each failed job goes back once.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, fields
from typing import Any

from qadmin import interrupts
from qadmin.errors import Interrupted, NotFound, UsageError
from qadmin.ops.dead import PAGE, REDRIVE, ErrorEntry, Filter, Outcome, Pace
from qadmin.profiles import query
from qadmin.profiles.model import Profile
from qadmin.values import iso


@dataclass(frozen=True)
class FailedJob:
    """One failed job as the listing shows it (a column the library's row lacks is None)."""

    id: Any
    state: str | None
    attempts: Any
    errors: int
    first_error: Any
    last_error: Any
    failed_at: str | None

    def as_dict(self) -> dict[str, Any]:
        """The row at the edge (JSON, CSV, tables)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class JobHistory:
    """One failed job's errors as the library recorded them."""

    id: Any
    state: str | None
    attempts: Any
    failed_at: str | None
    errors: list[ErrorEntry]

    def to_json_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["errors"] = [e.as_dict() for e in self.errors]
        return data


def _errors(value: Any) -> list[dict[str, Any]]:
    """A library's error column as a list of error objects (Oban's jsonb array, River's
    jsonb[]); anything else (no column, a plain text) as one error or none."""
    if value is None:
        return []
    if isinstance(value, str | bytes):
        try:
            value = json.loads(value)
        except ValueError:
            return [{"error": value if isinstance(value, str) else value.decode()}]
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        return [e if isinstance(e, dict) else {"error": str(e)} for e in value]
    return [{"error": str(value)}]


def _key(profile: Profile) -> str:
    key = profile.id_column or profile.order_by
    if key is None or not profile.failed or profile.state_column is None:
        raise UsageError(
            f"dead: {profile.name} has no failed state qadmin can read (a job id and a "
            "state column with failed values)"
        )
    return key


def _filter(reader: query.Reader, picked: Filter) -> tuple[str, dict[str, Any]]:
    """The failed states (in the named queue asked about) and the filters, as SQL."""
    profile = reader.profile
    where, params = reader.where(profile.failed)
    parts = [where]
    if picked.older_s is not None or picked.newer_s is not None:
        if profile.failed_at_column is None:
            raise UsageError(
                f"--older-than/--newer-than: {profile.library or profile.name} keeps no time "
                "of failure on the job's row"
            )
        age = reader.age(profile.failed_at_column)
        if picked.older_s is not None:
            parts.append(f"{age} >= :older_s")
            params["older_s"] = picked.older_s
        if picked.newer_s is not None:
            parts.append(f"{age} < :newer_s")
            params["newer_s"] = picked.newer_s
    if picked.error is not None:
        if profile.error_column is None or not reader.has("error_like"):
            raise UsageError(
                f"--error: {profile.library or profile.name} keeps no error text on the job's row"
            )
        text = reader.section_text("error_like")
        parts.append(reader.engine.hooks.render_text(text, {"col": profile.error_column}))
        params["pattern"] = picked.params()["pattern"]
    return " AND ".join(parts), params


def _columns(reader: query.Reader, key: str) -> str:
    profile = reader.profile
    out = [f"{reader.name(key)} AS id", f"{reader.state} AS state"]
    if profile.attempts_column:
        out.append(f"{reader.name(profile.attempts_column)} AS attempts")
    if profile.failed_at_column:
        out.append(f"{reader.instant(profile.failed_at_column)} AS failed_at")
    if profile.error_column:
        out.append(f"{reader.name(profile.error_column)} AS errors")
    return ", ".join(out)


def _require(reader: query.Reader) -> None:
    """Read only where it is cheap: a small table, or an index leading with the state."""
    if not reader.has("dead_jobs"):
        raise UsageError(
            f"dead: a library's failed jobs are not read on {reader.engine.dialect} yet"
        )
    if not (reader.state_indexed or reader.small):
        raise UsageError(
            f"dead: {reader.profile.name}'s failed jobs are not read: the table is big and no "
            f"index leads with its state ({reader.index_hint()})"
        )


def listing(reader: query.Reader, count: int, picked: Filter | None = None) -> list[FailedJob]:
    """The library's failed jobs, oldest id first: id, state, attempts, errors recorded,
    first and last error, when it failed (where the row keeps it)."""
    _require(reader)
    key = _key(reader.profile)
    where, params = _filter(reader, picked or Filter())
    rows = reader.run(
        "dead_jobs",
        {"filter": where, "columns": _columns(reader, key)},
        {**params, "count": count},
        {"id_col": key},
    )
    out = []
    for row in rows:
        errors = _errors(row.get("errors"))
        out.append(
            FailedJob(
                id=row["id"],
                state=query.state_text(row["state"]),
                attempts=row.get("attempts"),
                errors=len(errors),
                first_error=errors[0].get("error") if errors else None,
                last_error=errors[-1].get("error") if errors else None,
                failed_at=iso(reader.when(row.get("failed_at"), "failed_at")),
            )
        )
    return out


def history(reader: query.Reader, job_id: int) -> JobHistory:
    """One failed job's errors as the library recorded them (attempt, at, error)."""
    _require(reader)
    key = _key(reader.profile)
    where, params = reader.where(reader.profile.failed)
    rows = reader.run(
        "dead_jobs",
        {"filter": f"{where} AND {reader.name(key)} = :job_id", "columns": _columns(reader, key)},
        {**params, "count": 1, "job_id": job_id},
        {"id_col": key},
    )
    if not rows:
        raise NotFound(f"dead: no failed job {job_id} in {reader.profile.shown}")
    row = rows[0]
    errors = [
        ErrorEntry(e.get("attempt"), e.get("at"), e.get("error"))
        for e in _errors(row.get("errors"))
    ]
    return JobHistory(
        id=row["id"],
        state=query.state_text(row["state"]),
        attempts=row.get("attempts"),
        failed_at=iso(reader.when(row.get("failed_at"), "failed_at")),
        errors=errors,
    )


def why_no_retry(profile: Profile) -> str:
    who = profile.library or profile.name
    return (
        f"redrive: {profile.name} is a {who} table whose own retry is more than one row's "
        "change (or qadmin does not know it): retry its jobs with the library's own tooling"
    )


def redrive(
    reader: query.Reader,
    ids: list[int] | None,
    *,
    picked: Filter | None = None,
    dry_run: bool = False,
    pace: Pace | None = None,
) -> Outcome:
    """Give failed jobs back as the library's own retry does (``Profile.retry``): ``ids``
    (each must be failed: else nothing is done), or those ``picked``; one UPDATE per job,
    each checking the job is still failed."""
    profile = reader.profile
    retry = profile.retry
    if retry is None or profile.state_column is None:
        raise UsageError(why_no_retry(profile))
    _require(reader)
    key = _key(profile)
    where, params = _filter(reader, picked or Filter())
    sets = [f"{reader.name(profile.state_column)} = :retry_state"]
    sets += [f"{reader.name(column)} = {reader.template(sql)}" for column, sql in retry.sets]
    taken: list[int] = []
    gone: list[int] = []

    def outcome(ids: list[int]) -> Outcome:
        return Outcome(profile.shown, REDRIVE, dry_run, ids, gone, source=retry.source)

    if ids is not None:
        wanted = list(dict.fromkeys(ids))
        found = _match(reader, key, where, params, wanted=wanted)
        missing = [i for i in wanted if i not in found]
        if missing:
            raise NotFound(
                f"redrive: no failed job {', '.join(map(str, missing))} in {profile.shown} "
                "(nothing was retried)"
            )
    else:
        found = _match(reader, key, where, params)
    if dry_run:
        return outcome(found)
    started = time.monotonic()
    try:
        for job in found:
            with interrupts.deferred() as held:
                rows = reader.run(
                    "retry_job",
                    {"filter": where, "assignments": ", ".join(sets)},
                    {**params, "id": job, "retry_state": retry.state},
                    {"id_col": key},
                    write=True,
                )
            (taken if rows else gone).append(job)
            if held.signum is not None:
                raise KeyboardInterrupt
            if pace is not None:
                time.sleep(max(0.0, started + len(taken) / pace.per_s - time.monotonic()))
    except KeyboardInterrupt:  # between jobs: each one before it committed
        raise Interrupted(
            f"redrive: retried {len(taken):,} failed jobs (committed); the rest are still failed"
        ) from None
    return outcome(taken)


def _match(
    reader: query.Reader,
    key: str,
    where: str,
    params: dict[str, Any],
    wanted: list[int] | None = None,
) -> list[int]:
    """The failed jobs' ids (all the filter picks up to the highest id now, or those of
    ``wanted`` that are failed), read without locks."""
    if wanted is not None:
        extra = f" AND {reader.name(key)} IN ({', '.join(f':w{i}' for i in range(len(wanted)))})"
        params = {**params, **{f"w{i}": w for i, w in enumerate(wanted)}}
        where += extra
    high = reader.run("high_water", {}, {}, {"order_col": key})[0]["high"]
    if high is None:
        return []
    out: list[int] = []
    after = 0
    while True:
        rows = reader.run(
            "dead_jobs_match",
            {"filter": where},
            {**params, "after": after, "upto": int(high), "limit": PAGE},
            {"id_col": key},
        )
        got = [int(r["id"]) for r in rows]
        out.extend(got)
        if len(got) < PAGE:
            return out
        after = got[-1]
