"""Prometheus metrics of one daemon, in a registry of its own (no id or URL labels)."""

from __future__ import annotations

from typing import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

__all__ = ["DaemonMetrics", "CONTENT_TYPE_LATEST"]


class DaemonMetrics:
    def __init__(self, queue_depth: Callable[[], float], ready: Callable[[], float], lease_held: Callable[[], float],
                 dead_letters: Callable[[], float] = lambda: 0.0):
        r = self.registry = CollectorRegistry(auto_describe=True)
        self.accepted = Counter("newsdedup_daemon_articles_accepted", "Articles durably enqueued", ["origin"], registry=r)
        self.request_rejected = Counter("newsdedup_daemon_articles_rejected", "Articles refused at POST time (invalid)", registry=r)
        self.requests = Counter("newsdedup_daemon_http_requests", "HTTP requests by route and status", ["route", "code"], registry=r)
        self.processed = Counter("newsdedup_indexer_articles", "Articles processed by the indexer, by decision", ["decision"], registry=r)
        self.duplicates = Counter("newsdedup_indexer_duplicates", "Duplicates found, by reason", ["reason"], registry=r)
        self.merges = Counter("newsdedup_indexer_cluster_merges", "Clusters merged into another by an article that bridged them", registry=r)
        self.batch_seconds = Histogram("newsdedup_batch_seconds", "Seconds to decide and write one batch", registry=r,
                                       buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120))
        self.batch_size = Histogram("newsdedup_batch_articles", "Articles per batch", registry=r,
                                    buckets=(1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 5000))
        self.store_errors = Counter("newsdedup_store_errors", "Store failures (batch kept in the queue and retried)", registry=r)
        self.dead = Counter("newsdedup_daemon_dead_letters", "Articles moved to the queue's dead table", registry=r)
        self.crawl_runs = Counter("newsdedup_crawl_runs", "Scheduled crawl runs, by outcome", ["outcome"], registry=r)
        for name, doc, read in (("newsdedup_queue_depth", "Articles waiting in the durable queue", queue_depth),
                                ("newsdedup_daemon_ready", "1 when /readyz answers 200", ready),
                                ("newsdedup_daemon_lease_held", "1 while this daemon holds the writer lease", lease_held),
                                ("newsdedup_queue_dead_letters", "Articles in the queue's dead-letter table now (any run)", dead_letters)):
            Gauge(name, doc, registry=r).set_function(read)
        self.body_bytes_in_flight = Gauge("newsdedup_daemon_http_body_bytes_in_flight",
                                          "Request body bytes (by Content-Length) being read or handled now", registry=r)
        self.busy = Counter("newsdedup_daemon_http_refused", "Requests refused unread because the server was busy, by limit",
                            ["limit"], registry=r)

    def render(self) -> bytes:
        return generate_latest(self.registry)
