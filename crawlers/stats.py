"""Crawl statistics as hierarchical counters (``fetch/failures/timeout``), kept per source.

Scrapy-style flat keys with ``/`` separators keep the collector trivial and let reports group
by prefix (everything under ``fetch/failures/`` is a failure by cause).
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Iterable, Mapping


class CrawlStats:
    """Counters per source; ``total()`` sums them. Sources crawl concurrently: updates and
    reads hold a lock."""

    def __init__(self) -> None:
        self._by_source: dict[str, Counter[str]] = {}
        self._lock = threading.Lock()

    def add_source(self, source: str) -> None:
        with self._lock:
            self._by_source.setdefault(source, Counter())

    def inc(self, source: str, key: str, n: int = 1) -> None:
        with self._lock:
            self._by_source.setdefault(source, Counter())[key] += n

    def get(self, source: str, key: str) -> int:
        with self._lock:
            return self._by_source.get(source, Counter())[key]

    def for_source(self, source: str) -> Mapping[str, int]:
        with self._lock:
            return dict(self._by_source.get(source, Counter()))

    def sources(self) -> list[str]:
        with self._lock:
            return list(self._by_source)

    def total(self) -> Mapping[str, int]:
        out: Counter[str] = Counter()
        with self._lock:
            for counter in self._by_source.values():
                out.update(counter)
        return dict(out)

    def as_dict(self) -> dict[str, dict[str, int]]:
        with self._lock:
            return {name: dict(sorted(c.items())) for name, c in self._by_source.items()}


def with_prefix(counters: Mapping[str, int], prefix: str) -> dict[str, int]:
    """The counters under ``prefix/`` with the prefix removed (``fetch/failures/`` -> causes)."""
    p = prefix.rstrip("/") + "/"
    return {k[len(p):]: v for k, v in counters.items() if k.startswith(p) and v}


def format_table(rows: Iterable[tuple[str, Mapping[str, int]]]) -> str:
    """A plain-text per-source summary for the CLI."""
    lines = []
    for name, c in rows:
        lines.append(
            f"{name}: pages fetched {c.get('fetch/pages', 0)}"
            f" (not modified {c.get('fetch/not_modified', 0)}, retries {c.get('retry/count', 0)}),"
            f" articles parsed {c.get('articles/parsed', 0)}, skipped as seen {c.get('articles/skipped_seen', 0)},"
            f" new {c.get('index/new', 0)}, duplicate {c.get('index/duplicate', 0)},"
            f" already indexed {c.get('index/already_indexed', 0)}, rejected {c.get('index/rejected', 0)},"
            f" written {c.get('output/written', 0)}"
        )
        for label, prefix in (("failures", "fetch/failures"), ("not fetched", "fetch/rejected"), ("dropped", "pipeline/dropped")):
            if causes := with_prefix(c, prefix):
                lines.append(f"  {label}: " + ", ".join(f"{k} {v}" for k, v in sorted(causes.items())))
    return "\n".join(lines)
