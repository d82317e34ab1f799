"""The clusters of a store as the browser view lists them: filtered, searched, sorted, paged, and
summed up for the overview charts.

The ``Store`` protocol answers single clusters and the largest ones; listing by publish date,
source, reason or a search needs every article's cluster, so this keeps a light row per article
(no bodies, no vectors), read once with ``iter_articles`` and read again only when the store has
changed (its article count or its change log grew).
"""

from __future__ import annotations

import threading
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timezone, tzinfo
from typing import Iterable, Sequence

from ..store.base import Store, StoredArticle

SORTS = ("largest", "newest")


@dataclass(frozen=True)
class Row:
    id: str
    title: str
    url: str
    source: str
    publish_time: datetime | None
    cluster_id: str
    is_canonical: bool
    dup_reason: str | None

    @classmethod
    def of(cls, a: StoredArticle, tz: tzinfo) -> "Row":
        """Publish times in ``tz`` (input.default_timezone): the days people filter by are local."""
        when = a.publish_time.astimezone(tz) if a.publish_time else None
        return cls(a.id, a.title or "", a.url or "", a.source or "", when, a.cluster_id, a.is_canonical, a.dup_reason)


@dataclass
class ClusterSummary:
    cluster_id: str
    members: list[Row] = field(default_factory=list)

    @property
    def size(self) -> int:
        return len(self.members)

    @property
    def canonical(self) -> Row:
        for m in self.members:
            if m.id == self.cluster_id:
                return m
        return self.members[0]

    @property
    def first(self) -> datetime | None:
        return min((m.publish_time for m in self.members if m.publish_time), default=None)

    @property
    def last(self) -> datetime | None:
        return max((m.publish_time for m in self.members if m.publish_time), default=None)

    @property
    def sources(self) -> list[str]:
        return sorted({m.source for m in self.members if m.source})

    @property
    def reasons(self) -> set[str]:
        return {m.dup_reason for m in self.members if m.dup_reason}


@dataclass(frozen=True)
class ClusterFilter:
    query: str = ""
    source: str = ""
    reason: str = ""
    since: date | None = None
    until: date | None = None

    def admits(self, c: ClusterSummary) -> bool:
        if self.source and self.source not in c.sources:
            return False
        if self.reason and self.reason not in c.reasons:
            return False
        if self.since or self.until:
            days = [m.publish_time.date() for m in c.members if m.publish_time]
            if not any((self.since is None or d >= self.since) and (self.until is None or d <= self.until) for d in days):
                return False
        if self.query:
            q = self.query.casefold()
            if not any(q in m.title.casefold() or q in m.id.casefold() or q in m.url.casefold() for m in c.members):
                return False
        return True


@dataclass(frozen=True)
class Page:
    clusters: list[ClusterSummary]
    total: int
    page: int
    pages: int


def page_of(clusters: Sequence[ClusterSummary], flt: ClusterFilter, sort: str, page: int, per_page: int) -> Page:
    chosen = [c for c in clusters if flt.admits(c)]
    if sort == "newest":
        chosen.sort(key=lambda c: (c.last is not None, c.last.timestamp() if c.last else 0.0, c.cluster_id), reverse=True)
    else:
        chosen.sort(key=lambda c: (-c.size, c.cluster_id))
    pages = max(1, -(-len(chosen) // per_page))
    page = min(max(1, page), pages)
    return Page(chosen[(page - 1) * per_page : page * per_page], len(chosen), page, pages)


def summarise(rows: Iterable[Row]) -> list[ClusterSummary]:
    by_cluster: dict[str, ClusterSummary] = {}
    for r in rows:
        by_cluster.setdefault(r.cluster_id, ClusterSummary(r.cluster_id)).members.append(r)
    for c in by_cluster.values():
        c.members.sort(key=lambda m: (m.id != c.cluster_id, m.publish_time is None,
                                      m.publish_time.timestamp() if m.publish_time else 0.0, m.id))
    return list(by_cluster.values())


# ---- overview figures ---------------------------------------------------------------------------------
def duplicates_per_day(clusters: Iterable[ClusterSummary]) -> dict[str, Counter]:
    """``{YYYY-MM-DD: Counter(reason -> duplicates published that day)}``, days in order."""
    out: dict[str, Counter] = defaultdict(Counter)
    for c in clusters:
        for m in c.members:
            if m.dup_reason and m.publish_time:
                out[m.publish_time.date().isoformat()][m.dup_reason] += 1
    return dict(sorted(out.items()))


def duplicate_rate_per_source(clusters: Iterable[ClusterSummary]) -> list[tuple[str, int, int]]:
    """``(source, duplicates, articles)``, highest rate first."""
    dups: Counter = Counter()
    total: Counter = Counter()
    for c in clusters:
        for m in c.members:
            total[m.source or "(none)"] += 1
            dups[m.source or "(none)"] += m.dup_reason is not None
    return sorted(((s, dups[s], n) for s, n in total.items()), key=lambda x: (-x[1] / x[2], -x[2], x[0]))


@dataclass(frozen=True)
class Listing:
    """The clusters of one version of the store, with the sources and reasons the filters offer."""

    clusters: list[ClusterSummary]
    sources: list[str]
    reasons: list[str]

    @classmethod
    def of(cls, clusters: list[ClusterSummary]) -> "Listing":
        return cls(clusters, sorted({s for c in clusters for s in c.sources}), sorted({r for c in clusters for r in c.reasons}))


class ClusterIndex:
    """Light rows of one store, read again when the store changed."""

    def __init__(self, store: Store, tz: tzinfo = timezone.utc):
        self._store, self._tz = store, tz
        self._lock = threading.Lock()
        self._version: tuple | None = None
        self._listing = Listing([], [], [])

    def listing(self) -> Listing:
        """The current listing. Each call checks the store's version (its stats and its change
        log, read whole), so a page asks once and reads clusters, sources and reasons from it."""
        stats = self._store.stats()
        version = (stats.articles, stats.clusters, len(self._store.cluster_changes()))
        with self._lock:
            if version != self._version:
                self._listing = Listing.of(summarise(Row.of(a, self._tz) for a in self._store.iter_articles()))
                self._version = version
            return self._listing
