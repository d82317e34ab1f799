"""The ``Store`` protocol: the only thing the decision code knows about storage.

A store answers four questions, each asked for a whole batch at once so that a remote store can
send one request per batch (Elasticsearch ``_msearch``):

* ``find_exact``   term lookup of content MD5s;
* ``find_band_candidates``  articles sharing any SimHash band key (Hamming is checked by the caller);
* ``knn``          nearest stored embeddings with a time-window filter and a similarity floor;
* ``find_same_title``  the newest articles under one cleaned headline (its MD5) in a time window.

and stores batches of decided articles. Writes are idempotent by article id: writing an id that is
already stored keeps the stored article (first write wins), so retries never change a decision.

Clusters change after the fact in two ways, both recorded in the store's change log:

* ``merge``  every member of one cluster joins another (an article that arrived later bridged two
             clusters that arrived apart, or a person said "same story"). A cluster's id is its
             canonical article's id; the merged cluster's canonical becomes an ordinary member.
* ``split``  one article leaves its cluster, alone or into another named cluster ("not the same
             story"). When it was the canonical article, the oldest remaining member becomes the
             canonical of the rest, and the rest take that member's id as their cluster id
             (``oldest_other_member``: one rule for every store and the API).

Merges passed to ``write`` are applied in the same unit as the articles (one transaction in the
embedded store; recorded first and re-applied on open in Elasticsearch), so a crash never keeps
the articles and loses the merge their decision made. Both changes are idempotent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Iterable, Iterator, Protocol, Sequence, runtime_checkable

import numpy as np


@dataclass(frozen=True)
class TimeWindow:
    """Closed interval of publish times; ``None`` on a side means unbounded.
    Articles without a publish time always pass a window (no time: no window)."""

    start: datetime | None = None
    end: datetime | None = None

    def contains(self, when: datetime | None) -> bool:
        if when is None:
            return True
        return (self.start is None or when >= self.start) and (self.end is None or when <= self.end)


@dataclass
class StoredArticle:
    """An article with its features and its cluster assignment, as kept in a store."""

    id: str
    url: str
    canonical_url: str
    source: str
    title: str
    content: str
    publish_time: datetime | None
    clean_title: str
    clean_body: str
    title_md5: str
    body_md5: str
    content_key: str  # MD5 the exact layer matches on (body, else title)
    simhash: int  # unsigned 64-bit
    bands: tuple[int, ...]
    vector: np.ndarray | None
    cluster_id: str
    is_canonical: bool
    dup_of: str | None = None
    dup_reason: str | None = None
    score: float | None = None
    indexed_at: datetime | None = None
    extra: dict = field(default_factory=dict)
    # Distinct content tokens of the cleaned text (TextFeatures.token_count), kept so a stored
    # candidate's features need no tokenising again; None where a store does not keep it.
    token_count: int | None = None

    def export_record(self) -> dict:
        return {
            "id": self.id,
            "url": self.url,
            "source": self.source,
            "title": self.title,
            "publish_time": self.publish_time.isoformat() if self.publish_time else None,
            "cluster_id": self.cluster_id,
            "is_canonical": self.is_canonical,
            "dup_of": self.dup_of,
            "dup_reason": self.dup_reason,
            "score": self.score,
        }


@dataclass(frozen=True)
class BandQuery:
    """Articles sharing a band key with ``bands``, inside ``window``.

    With ``simhash`` and ``max_distance`` set, only candidates within that Hamming distance of
    ``simhash`` come back, so a store can drop band collisions before it reads whole articles.
    """

    bands: tuple[int, ...]
    window: TimeWindow = TimeWindow()
    exclude_id: str | None = None
    simhash: int | None = None
    max_distance: int | None = None

    def admits(self, simhash: int) -> bool:
        """Whether a candidate's fingerprint passes the distance bound (always, without one)."""
        if self.simhash is None or self.max_distance is None:
            return True
        return (self.simhash ^ simhash).bit_count() <= self.max_distance


@dataclass(frozen=True)
class TitleQuery:
    """The newest ``limit`` articles whose cleaned headline has the MD5 ``title_md5``, inside
    ``window``. A trimmed repost keeps its story's headline when its text and embedding drift."""

    title_md5: str
    limit: int
    window: TimeWindow = TimeWindow()
    exclude_id: str | None = None


@dataclass(frozen=True)
class KnnQuery:
    vector: np.ndarray
    k: int
    min_score: float
    window: TimeWindow = TimeWindow()
    exclude_id: str | None = None


INDEXER = "indexer"  # ``by`` of the changes the indexer's own decisions made (everything else: a person)
MERGED = "merged"  # dup_reason of a canonical article whose cluster was merged into another
MANUAL = "manual"  # dup_reason of an article a person moved into a cluster
UNREADABLE_EXTRA_KEY = "unreadable_extra"  # holds stored extra text that cannot be parsed back


@dataclass(frozen=True)
class ClusterChange:
    """One entry of a store's change log: a merge of ``source`` into ``into``, or a split of
    ``article_id`` out of ``source`` (into ``into``, or alone when ``into`` is its own id). When
    a split moves a cluster's canonical out, the rest of that cluster goes on under ``lead``, its
    oldest other member (``oldest_other_member``), and the stores record that on the entry."""

    kind: str  # "merge" | "split"
    into: str
    source: str
    article_id: str | None = None  # merge: the article that bridged the clusters; split: the article moved
    reason: str = ""
    by: str = ""  # who asked: "indexer" for merges its decisions made, else a user name
    at: datetime | None = None
    lead: str | None = None  # a split of a canonical: the member that leads what it left (set by the store)

    def record(self) -> dict:
        return {"kind": self.kind, "into": self.into, "source": self.source, "article_id": self.article_id,
                "reason": self.reason, "by": self.by, "at": self.at.isoformat() if self.at else None,
                "lead": self.lead}


def moved_article(change: ClusterChange) -> str:
    """The article a split moves; a change that is no split, or names no article, is refused."""
    if change.kind != "split":
        raise ValueError(f"split_article takes a split; got a {change.kind!r} change of {change.article_id}")
    if change.article_id is None:
        raise ValueError("a split names the article to move")
    return change.article_id


def age_order(article_id: str, publish_time: datetime | None) -> tuple[bool, float, str]:
    """Sort key, oldest first: publish time, then article id; articles without a publish time
    after every dated one. Ties go by id, not by write order, so the stores and the API (which
    reads members in no particular order) pick the same article."""
    return (publish_time is None, publish_time.timestamp() if publish_time else 0.0, article_id)


def oldest_other_member(members: Iterable[tuple[str, datetime | None]], leaving: str) -> str | None:
    """Of ``members`` (``(id, publish_time)`` pairs), the oldest other than ``leaving`` by
    ``age_order``: the article that leads a cluster once its canonical ``leaving`` is split out;
    None when there is no other member."""
    others = [m for m in members if m[0] != leaving]
    return min(others, key=lambda m: age_order(*m))[0] if others else None


@dataclass(frozen=True)
class StoreStats:
    articles: int
    clusters: int
    duplicates: int
    by_reason: dict[str, int]


@runtime_checkable
class Store(Protocol):
    """What every store implements. See the module docstring for the contract."""

    def get_many(self, ids: Sequence[str]) -> dict[str, StoredArticle]: ...

    def find_by_canonical_url(self, urls: Sequence[str]) -> dict[str, StoredArticle]: ...

    def find_exact(self, keys: Sequence[str]) -> dict[str, list[StoredArticle]]: ...

    def find_band_candidates(self, queries: Sequence[BandQuery]) -> list[list[StoredArticle]]: ...

    def find_same_title(self, queries: Sequence[TitleQuery]) -> list[list[StoredArticle]]: ...

    def knn(self, queries: Sequence[KnnQuery]) -> list[list[tuple[StoredArticle, float]]]: ...

    def write(self, articles: Sequence[StoredArticle], merges: Sequence[ClusterChange] = ()) -> None: ...

    def merge_clusters(self, merges: Sequence[ClusterChange]) -> None: ...

    def split_article(self, change: ClusterChange) -> str | None: ...

    def cluster_changes(self, cluster_id: str | None = None, *, corrections_only: bool = False) -> list[ClusterChange]: ...

    def cluster_members(self, cluster_id: str) -> list[StoredArticle]: ...

    def top_clusters(self, n: int) -> list[tuple[str, int]]: ...

    def iter_articles(self) -> Iterator[StoredArticle]: ...

    def stats(self) -> StoreStats: ...

    def close(self) -> None: ...


class StoreMixin:
    """What the embedded and the Elasticsearch store do the same way: a merge alone is a ``write``
    of no articles, and a store is a context manager that closes it."""

    def merge_clusters(self, merges: Sequence[ClusterChange]) -> None:
        self.write([], merges)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def cluster_history(store: Store, cluster_id: str) -> list[ClusterChange]:
    """What made ``cluster_id`` the cluster it is, in the order it happened: its own entries in the
    change log, and before each merge into it, the merged cluster's history up to that merge (and
    so on down a chain). A store's ``cluster_changes`` answers one cluster's own entries: after a
    was merged into b and b into c, c's hold b → c but not a → b, which moved a's articles too.
    A cluster that goes on under a new lead, because a split took its canonical out, is followed
    the same way: the new lead's history starts with the old cluster's, up to that split."""
    history: list[ClusterChange] = []
    seen: set[ClusterChange] = set()
    # each cluster walked, with how far (None: to now); one id can be continued more than once
    # (split out, merged back, split out again), and each time its entries up to then count
    followed: dict[str, datetime | None] = {cluster_id: None}

    def walk(cid: str, until: datetime | None) -> None:
        for change in store.cluster_changes(cid):
            if change in seen or (until is not None and change.at is not None and change.at > until):
                continue  # listed already, or after cid was merged away (its id may lead a new cluster later)
            continues = (change.kind == "merge" and change.into == cid) or (change.kind == "split" and change.lead == cid)
            if continues and _walks_further(followed, change.source, change.at):
                followed[change.source] = change.at
                walk(change.source, change.at)
            if change not in seen:  # the merged cluster's own entries end with this merge
                seen.add(change)
                history.append(change)

    walk(cluster_id, None)
    return history


def _walks_further(followed: dict[str, datetime | None], cid: str, until: datetime | None) -> bool:
    """Whether walking ``cid`` up to ``until`` reaches entries its earlier walks did not."""
    if cid not in followed:
        return True
    done = followed[cid]
    return done is not None and until is not None and until > done
