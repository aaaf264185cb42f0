"""Prometheus metrics of the service (``GET /metrics``), through ``prometheus_client``.

Counters count what this process did since it started; the ``dptopic_reports_stored`` and
``dptopic_batches_trained`` gauges are read from the database at scrape time, so they survive
restarts and agree across processes.
"""
from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, disable_created_metrics, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST


class _DatabaseCollector:
    def __init__(self, service):
        self.service = service

    def collect(self):
        storage = self.service.storage
        if storage is None:
            return
        c = storage.counts()
        row = storage.active_model()
        yield GaugeMetricFamily("dptopic_reports_stored", "Randomized reports stored in the database.",
                                value=c["reports_stored"])
        yield GaugeMetricFamily("dptopic_submissions_stored", "Uploads (idempotency keys) stored.", value=c["submissions"])
        yield GaugeMetricFamily("dptopic_batches_trained", "Mini-batches trained into OLP-LDA models (all models).",
                                value=c["batches_trained"])
        yield GaugeMetricFamily("dptopic_batches_skipped", "Mini-batches the trainer consumed but could not use.",
                                value=c["batches_skipped"])
        yield GaugeMetricFamily("dptopic_reports_pending", "Stored reports the active model has not consumed yet.",
                                value=storage.count_reports(row["last_report_id"]))
        yield GaugeMetricFamily("dptopic_model_version", "Version of the active model.", value=row["version"])


class Metrics:
    """One registry per app (several apps in one process never collide)."""

    def __init__(self, service):
        disable_created_metrics()  # no *_created series: the gauges below carry the durable counts
        self.registry = CollectorRegistry()
        self.uploads = Counter("dptopic_uploads", "Report uploads answered, by outcome.", ["outcome"],
                               registry=self.registry)
        self._stored = self.uploads.labels("stored")
        self.reports = Counter("dptopic_reports_received", "Reports accepted by this process (replays excluded).",
                               registry=self.registry)
        self.errors = Counter("dptopic_errors", "Requests answered with an error, by code.", ["code"],
                              registry=self.registry)
        self.batches = Counter("dptopic_trainer_batches", "Mini-batches consumed by this process's trainer.",
                               ["status"], registry=self.registry)
        self.fed = Counter("dptopic_fed_updates", "FedLDA updates answered, by outcome.", ["outcome"],
                           registry=self.registry)
        self.registry.register(_DatabaseCollector(service))

    def upload(self, outcome: str, n: int) -> None:
        if outcome == "stored":     # every upload's: its labelled counter looked up once
            self._stored.inc()
            self.reports.inc(n)
        else:
            self.uploads.labels(outcome).inc()

    def error(self, code: str) -> None:
        self.errors.labels(code).inc()

    def batch_done(self, info: dict) -> None:
        self.batches.labels(info["status"]).inc()

    def fed_update(self, outcome: str) -> None:
        self.fed.labels(outcome).inc()

    def render(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
