"""Reads of the stored reports and who sent them: the trainer's batches of reports, the counts and contributors
that the status pages show, and each contributor's reports among a batch, for the dataset ledger."""
from __future__ import annotations

from sqlalchemy import func, select

from .database import Database
from .schema import reports, submissions, train_batches


class ReportReads(Database):
    """The stored reports, read (tables ``reports`` and ``submissions``)."""

    def fetch_reports(self, after_id: int, limit: int) -> list[tuple[int, bytes]]:
        with self.read() as conn:
            rows = conn.execute(select(reports.c.id, reports.c.packed).where(reports.c.id > after_id)
                                .order_by(reports.c.id).limit(limit)).all()
        return [(int(i), bytes(p)) for i, p in rows]

    def count_reports(self, after_id: int = 0) -> int:
        with self.read() as conn:
            return int(conn.execute(select(func.count()).select_from(reports).where(reports.c.id > after_id)).scalar())

    def counts(self) -> dict:
        with self.read() as conn:
            n_reports = conn.execute(select(func.count()).select_from(reports)).scalar()
            n_sub = conn.execute(select(func.count()).select_from(submissions)).scalar()
            n_contrib = conn.execute(select(func.count(func.distinct(submissions.c.contributor)))).scalar()
            n_anon = conn.execute(select(func.count()).select_from(submissions)
                                  .where(submissions.c.contributor.is_(None))).scalar()
            n_batches = conn.execute(select(func.count()).select_from(train_batches)
                                     .where(train_batches.c.status == "trained")).scalar()
            n_skipped = conn.execute(select(func.count()).select_from(train_batches)
                                     .where(train_batches.c.status == "skipped")).scalar()
        return {"reports_stored": int(n_reports), "submissions": int(n_sub), "contributors": int(n_contrib),
                "anonymous_uploads": int(n_anon), "batches_trained": int(n_batches), "batches_skipped": int(n_skipped)}

    def contributors(self, limit: int = 50) -> list[dict]:
        """Reports per contributor, most first, at most ``limit``: per pseudonym, and every upload without one as a
        contributor of its own (``contributor`` None): nothing says two anonymous uploads came from one person, nor
        from different ones, and grouping them would describe no one."""
        with self.read() as conn:
            named = conn.execute(
                select(submissions.c.contributor, func.sum(submissions.c.n_reports).label("n"),
                       func.count().label("uploads")).where(submissions.c.contributor.is_not(None))
                .group_by(submissions.c.contributor).order_by(func.sum(submissions.c.n_reports).desc())
                .limit(limit)).all()
            anonymous = conn.execute(
                select(submissions.c.n_reports).where(submissions.c.contributor.is_(None))
                .order_by(submissions.c.n_reports.desc()).limit(limit)).scalars().all()
        rows = ([{"contributor": c, "reports": int(n), "uploads": int(u)} for c, n, u in named]
                + [{"contributor": None, "reports": int(n), "uploads": 1} for n in anonymous])
        return sorted(rows, key=lambda r: -r["reports"])[:limit]

    def max_reports_per_contributor(self) -> int:
        """The most reports one contributor may have sent: the largest total of one pseudonym, or the largest upload
        without one (each counted as its own contributor, as :meth:`contributors` lists them)."""
        with self.read() as conn:
            sub = (select(func.sum(submissions.c.n_reports).label("n")).where(submissions.c.contributor.is_not(None))
                   .group_by(submissions.c.contributor).subquery())
            named = conn.execute(select(func.max(sub.c.n))).scalar() or 0
            anonymous = conn.execute(select(func.max(submissions.c.n_reports))
                                     .where(submissions.c.contributor.is_(None))).scalar() or 0
            return int(max(named, anonymous))

    def report_contributors(self, first: int, last: int) -> dict:
        """The contributors of the reports with ids ``first``..``last`` and their reports among them, for the dataset
        ledger (:mod:`dptopic.service.ledger`): per pseudonym, and each upload without one as a contributor of its
        own (``upload:`` and its Idempotency-Key)."""
        with self.read() as conn:
            rows = conn.execute(
                select(submissions.c.contributor, submissions.c.idempotency_key, func.count().label("n"))
                .select_from(reports.join(submissions, reports.c.submission_id == submissions.c.id))
                .where((reports.c.id >= first) & (reports.c.id <= last))
                .group_by(submissions.c.contributor, submissions.c.idempotency_key)).all()
        out: dict = {}
        for who, key, n in rows:
            name = who if who is not None else f"upload:{key}"
            out[name] = out.get(name, 0) + int(n)
        return out
