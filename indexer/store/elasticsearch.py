"""The Elasticsearch store: the ``Store`` protocol over an index alias (see ``es_schema``).

Each protocol call on a batch is one ``_msearch`` (chunked by ``es.msearch_max``): ``term`` on
``content_key``; a ``bool`` filter of ``terms`` on band keys plus the time window (Hamming is
confirmed by the caller); a top-level ``knn`` with the same window as ``filter`` and the cosine
floor as ``similarity``. Elasticsearch reports a cosine hit's ``_score`` as ``(1 + cos) / 2``; it is
converted back so callers see the cosine the embedded store returns. The ``similarity`` option is
compared with the raw cosine, not the score (Elastic docs, "kNN search": similarity).

Near-real-time gap: a search sees documents only after a refresh. Articles this store wrote and
that may not be refreshed yet are kept in an in-flight buffer and answered from memory by the
lookups (exact, canonical URL, bands, kNN); when it holds ``es.inflight_max`` articles the store
refreshes the alias and empties it, so it never grows without bound. ``get_many`` uses the
real-time ``_mget`` and needs no buffer. Reports (clusters, stats, iteration) refresh first when
something was written since the last refresh. Writes of other processes become visible at the
index's refresh interval, as with any Elasticsearch reader.

Writes: ``op_type=create`` with ``_id`` = article id (first write wins; 409 is "already there"),
through ``es_bulk`` (retries, dead letter, ``BulkWriteError``). Rollover is not done by default; if
the alias has several backing indices, ids are looked up across the alias before writing, since
``_id`` is only unique within one index.

Cluster merges and splits (``merge_clusters``, ``write(articles, merges)``, ``split_article``) are
logged in their own index (``es_changes``): a merge is recorded as pending before the articles
whose decision made it are written, then applied and marked applied; what a crash leaves
unfinished is finished when a store opens (or on its next write). Members are found with a
``term`` on ``cluster_id`` and re-pointed with bulk partial-document updates (no scripts), which
are idempotent; the alias is refreshed before members are read and after they are changed, so
neither searches nor the in-flight buffer answer with a cluster id a change replaced.
"""

from __future__ import annotations

import itertools
import json
import logging
import threading
import time
from datetime import datetime
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from ..errors import BulkWriteError, StoreError, StoreSchemaError, StoreUnavailable
from ..features.simhash import from_signed, to_signed
from .base import (MANUAL, MERGED, UNREADABLE_EXTRA_KEY, BandQuery, ClusterChange, KnnQuery, StoredArticle, StoreMixin, StoreStats, TimeWindow,
                   TitleQuery, moved_article, oldest_other_member)
from .es_bulk import bulk_create, bulk_update, dead_letter, is_retryable
from .es_changes import APPLIED, APPLYING, PENDING, SKIPPED, ChangeLog, LoggedChange
from .es_config import check_version, client_from_settings, translate
from .es_schema import Schema, backing_indices, build_schema, check_mapping, init, schema_options
from .memory import MemoryIndex

log = logging.getLogger(__name__)

MAX_NUM_CANDIDATES = 10_000  # Elasticsearch's limit
MGET_CHUNK = 1000
SCAN_PAGE = 1000
SEQ_SORT = [{"ingest_seq": "asc"}, {"id": "asc"}]


# ---- documents -----------------------------------------------------------------------------------
def to_doc(a: StoredArticle, seq: int, indexed_at: datetime) -> dict[str, Any]:
    """The ``_source`` of one article. Zero vectors are dropped: cosine is undefined for them and
    Elasticsearch refuses them (they never match a positive floor in the embedded store either)."""
    vector = None
    if a.vector is not None:
        vec = np.asarray(a.vector, dtype=np.float32).reshape(-1)
        if np.any(vec):
            vector = vec.tolist()
    return {
        "id": a.id, "url": a.url, "canonical_url": a.canonical_url, "source": a.source,
        "title": a.title, "content": a.content,
        "publish_time": a.publish_time.isoformat() if a.publish_time else None,
        "indexed_at": (a.indexed_at or indexed_at).isoformat(), "ingest_seq": seq,
        "clean_title": a.clean_title, "clean_body": a.clean_body,
        "title_md5": a.title_md5, "body_md5": a.body_md5, "content_key": a.content_key,
        "simhash": to_signed(a.simhash), "bands": [str(b) for b in a.bands],
        **({"vector": vector} if vector is not None else {}),
        "cluster_id": a.cluster_id, "is_canonical": bool(a.is_canonical), "duplicate": 0 if a.is_canonical else 1,
        "dup_of": a.dup_of, "dup_reason": a.dup_reason, "score": a.score,
        "extra": json.loads(json.dumps(a.extra, ensure_ascii=False, default=str)),
    }


def _when(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def from_source(src: dict[str, Any]) -> StoredArticle:
    vector = src.get("vector")
    extra = src.get("extra") or {}
    return StoredArticle(
        id=src["id"], url=src.get("url", ""), canonical_url=src.get("canonical_url", ""), source=src.get("source", ""),
        title=src.get("title", ""), content=src.get("content", ""), publish_time=_when(src.get("publish_time")),
        clean_title=src.get("clean_title", ""), clean_body=src.get("clean_body", ""),
        title_md5=src.get("title_md5", ""), body_md5=src.get("body_md5", ""), content_key=src.get("content_key", ""),
        simhash=from_signed(int(src.get("simhash", 0))), bands=tuple(int(b) for b in src.get("bands", [])),
        vector=np.asarray(vector, dtype=np.float32) if vector is not None else None,
        cluster_id=src["cluster_id"], is_canonical=bool(src.get("is_canonical")), dup_of=src.get("dup_of"),
        dup_reason=src.get("dup_reason"), score=src.get("score"), indexed_at=_when(src.get("indexed_at")),
        # as in the embedded store: extra fields that are not an object never break reading the row
        extra=extra if isinstance(extra, dict) else {UNREADABLE_EXTRA_KEY: extra},
    )


def _filters(window: TimeWindow, exclude_id: str | None) -> list[dict]:
    """The window as a range on publish_time that passes articles without one (``should`` range OR
    ``must_not exists``), and the id left out."""
    out: list[dict] = []
    bounds = {}
    if window.start is not None:
        bounds["gte"] = window.start.isoformat()
    if window.end is not None:
        bounds["lte"] = window.end.isoformat()
    if bounds:
        out.append({"bool": {"should": [{"range": {"publish_time": bounds}},
                                        {"bool": {"must_not": {"exists": {"field": "publish_time"}}}}],
                             "minimum_should_match": 1}})
    if exclude_id is not None:
        out.append({"bool": {"must_not": {"ids": {"values": [exclude_id]}}}})
    return out


def score_to_cosine(score: float) -> float:
    """Elasticsearch's cosine ``_score`` is (1 + cos) / 2."""
    return max(-1.0, min(1.0, 2.0 * float(score) - 1.0))


def _follow(went: dict[str, str], cluster_id: str) -> str:
    """Where ``cluster_id`` ends after the merges ``went`` (merged cluster -> the one it joined)."""
    seen = {cluster_id}
    while cluster_id in went and went[cluster_id] not in seen:
        cluster_id = went[cluster_id]
        seen.add(cluster_id)
    return cluster_id


# ---- in-flight buffer ------------------------------------------------------------------------------
def _has_direction(vector) -> bool:
    v = np.asarray(vector, dtype=np.float32)
    return bool(np.all(np.isfinite(v)) and np.any(v))


def _merge(first: list[StoredArticle], more: Iterable[StoredArticle]) -> list[StoredArticle]:
    seen = {a.id for a in first}
    return first + [a for a in more if a.id not in seen and not seen.add(a.id)]


# ---- the store -------------------------------------------------------------------------------------------
class ElasticsearchStore(StoreMixin):
    """``Store`` over the alias ``es.index``. Thread-safe; one client per store."""

    def __init__(self, client, cfg, *, vector_dims: int | None, embedding_model: str, fingerprint_layout: str,
                 bands: int, num_candidates: int = 100, hnsw_m: int = 16, hnsw_ef_construction: int = 100,
                 target: str = "elasticsearch"):
        self.client = client
        self.cfg = cfg
        self.target = target
        self.vector_dims = vector_dims
        self.alias = cfg.index
        self.num_candidates = num_candidates
        self._lock = threading.RLock()
        self._inflight = MemoryIndex()
        self._dirty = False
        self._seq = 0
        self.schema: Schema = build_schema(cfg, vector_dims=vector_dims, embedding_model=embedding_model,
                                           fingerprint_layout=fingerprint_layout, bands=bands, hnsw_m=hnsw_m,
                                           hnsw_ef_construction=hnsw_ef_construction)
        self._connect()
        self._indices = self._open_index()
        self._changes = ChangeLog(client, self.alias, target, replicas=cfg.replicas)
        self._changes_ready = self._changes.open(create=cfg.auto_create)
        # True while the log may hold changes not finished (at open, and after a failed apply)
        self._unfinished = self._changes_ready
        if self._changes_ready:
            self._finish_changes()
        if cfg.inflight_max == 0 and cfg.write_refresh == "false":
            log.warning("es.inflight_max=0 and es.write_refresh=false: articles written in this run stay invisible "
                        "to duplicate lookups until the next refresh (up to %s)", cfg.refresh_interval)

    @classmethod
    def from_settings(cls, settings, *, vector_dims: int | None, embedding_model: str) -> "ElasticsearchStore":
        client, cfg, target = client_from_settings(settings)
        try:
            return cls(client, cfg, vector_dims=vector_dims, embedding_model=embedding_model,
                       num_candidates=settings.decision.knn_num_candidates, target=target, **schema_options(settings))
        except BaseException:
            client.close()
            raise

    # ---- lifecycle ------------------------------------------------------------------------------------
    def _connect(self) -> None:
        with translate("connecting", self.target):
            info = self.client.info()
        check_version(info, self.target)

    def _open_index(self) -> list[str]:
        """Check (or, with ``es.auto_create``, create) the alias and its mapping."""
        with translate(f"opening index {self.alias}", self.target):
            indices = backing_indices(self.client, self.alias)
            if not indices:
                if not self.cfg.auto_create:
                    raise StoreError(f"Elasticsearch alias {self.alias!r} does not exist at {self.target}; "
                                     "run `newsdedup es init` (or set es.auto_create = true)")
                return init(self.client, self.schema)["indices"]
            return check_mapping(self.client, self.schema)

    @property
    def multi_index(self) -> bool:
        """After a rollover ``_id`` is no longer unique across the alias (see module docstring)."""
        return len(self._indices) > 1

    def refresh(self) -> None:
        """Make every write visible to search and empty the in-flight buffer."""
        with self._lock, translate(f"refreshing {self.alias}", self.target):
            self.client.indices.refresh(index=self.alias)
            self._inflight.clear()
            self._dirty = False

    def _ensure_visible(self) -> None:
        if self._dirty:
            self.refresh()

    def close(self) -> None:
        with self._lock:
            self.client.close()

    # ---- search helpers --------------------------------------------------------------------------------
    def _msearch(self, bodies: Sequence[dict], what: str) -> list[list[dict]]:
        """Hits of each body, one ``_msearch`` per ``es.msearch_max`` bodies."""
        out: list[list[dict]] = []
        step = self.cfg.msearch_max
        for start in range(0, len(bodies), step):
            searches: list[dict] = []
            for body in bodies[start : start + step]:
                searches += [{"index": self.alias}, body]
            with translate(what, self.target):
                responses = self.client.msearch(searches=searches)["responses"]
            for body, resp in zip(bodies[start : start + step], responses):
                out.append(self._hits(resp, body, what))
        return out

    def _hits(self, resp: dict, body: dict, what: str) -> list[dict]:
        if "error" in resp:
            status, error = resp.get("status", 500), resp["error"]
            reason = error.get("reason", error) if isinstance(error, dict) else error
            cls = StoreUnavailable if is_retryable(status) else StoreError
            raise cls(f"{what}: Elasticsearch answered {status}: {reason}")
        hits = resp["hits"]["hits"]
        total = resp["hits"].get("total", {}).get("value", len(hits))
        if "knn" not in body and total > len(hits) and len(hits) >= body.get("size", 10):
            log.warning("%s: %d matches, only the first %d used (es.candidates_max)", what, total, len(hits))
        return hits

    def _search(self, what: str, **body) -> dict:
        with translate(what, self.target):
            return self.client.search(index=self.alias, **body)

    def _scan(self, query: dict, what: str) -> Iterator[StoredArticle]:
        """Every match in write order, paged with ``search_after``."""
        return (from_source(h["_source"]) for h in self._scan_hits(query, what))

    def _scan_hits(self, query: dict, what: str, after: list | None = None, **fields) -> Iterator[dict]:
        """The raw hits of every match in write order (after the sort values ``after``), paged
        with ``search_after``; ``fields``: more search parameters, e.g. ``source``."""
        while True:
            extra = {"search_after": after} if after is not None else {}
            hits = self._search(what, query=query, sort=SEQ_SORT, size=SCAN_PAGE, track_total_hits=False, **extra, **fields)["hits"]["hits"]
            yield from hits
            if len(hits) < SCAN_PAGE:
                return
            after = hits[-1]["sort"]

    # ---- the Store protocol --------------------------------------------------------------------------
    def get_many(self, ids: Sequence[str]) -> dict[str, StoredArticle]:
        ids = list(dict.fromkeys(ids))
        found: dict[str, StoredArticle] = {}
        if self.multi_index:  # a search sees refreshed articles only: the buffer holds the others
            with self._lock:
                found.update({i: self._inflight.articles[i] for i in ids if i in self._inflight.articles})
        read = self._read([i for i in ids if i not in found])
        found.update({i: from_source(src) for i, (_, src) in read.items()})
        return {i: found[i] for i in ids if i in found}

    def _read(self, ids: Sequence[str]) -> dict[str, tuple[str, dict]]:
        """(backing index, source) of each stored id: the real-time ``_mget`` on one backing
        index, a search across a rolled-over alias (``_mget`` needs a single index)."""
        found: dict[str, tuple[str, dict]] = {}
        for start in range(0, len(ids), MGET_CHUNK):
            chunk = list(ids[start : start + MGET_CHUNK])
            if self.multi_index:
                hits = self._search("reading articles", query={"ids": {"values": chunk}}, size=len(chunk))["hits"]["hits"]
                for h in hits:
                    found.setdefault(h["_id"], (h["_index"], h["_source"]))
            else:
                with translate("reading articles", self.target):
                    docs = self.client.mget(index=self.alias, ids=chunk)["docs"]
                found.update({d["_id"]: (d["_index"], d["_source"]) for d in docs if d.get("found")})
        return found

    def find_by_canonical_url(self, urls: Sequence[str]) -> dict[str, StoredArticle]:
        urls = [u for u in dict.fromkeys(urls) if u]
        if not urls:
            return {}
        bodies = [{"query": {"term": {"canonical_url": u}}, "size": 1, "sort": SEQ_SORT, "track_total_hits": False} for u in urls]
        buffered = self._buffered(lambda m: m.with_url(urls))
        found: dict[str, StoredArticle] = {}
        for url, hits in zip(urls, self._msearch(bodies, "canonical URL lookup")):
            if hits:
                found[url] = from_source(hits[0]["_source"])
        for a in buffered:
            found.setdefault(a.canonical_url, a)
        return found

    def find_exact(self, keys: Sequence[str]) -> dict[str, list[StoredArticle]]:
        keys = [k for k in dict.fromkeys(keys) if k]
        if not keys:
            return {}
        bodies = [{"query": {"term": {"content_key": k}}, "size": self.cfg.candidates_max, "sort": SEQ_SORT} for k in keys]
        buffered = self._buffered(lambda m: m.with_key(keys))
        found = {k: [from_source(h["_source"]) for h in hits] for k, hits in zip(keys, self._msearch(bodies, "exact lookup"))}
        for a in buffered:
            found[a.content_key] = _merge(found[a.content_key], [a])
        return {k: v for k, v in found.items() if v}

    def find_band_candidates(self, queries: Sequence[BandQuery]) -> list[list[StoredArticle]]:
        asked = [i for i, q in enumerate(queries) if q.bands]
        size = self.cfg.candidates_max
        bodies = [{
            "query": {"bool": {"filter": [{"terms": {"bands": [str(b) for b in queries[i].bands]}},
                                          *_filters(queries[i].window, queries[i].exclude_id)]}},
            "size": size, "sort": SEQ_SORT, "track_total_hits": False,
        } for i in asked]
        buffered = self._buffered(lambda m: [m.bands(queries[i]) for i in asked])
        results: list[list[StoredArticle]] = [[] for _ in queries]
        for i, body, hits in zip(asked, bodies, self._msearch(bodies, "SimHash band lookup")):
            results[i] = [from_source(h["_source"]) for h in hits]
            if len(hits) == size:  # a full page: more articles share a band
                results[i] += self._more_band_matches(queries[i], body["query"], hits[-1]["sort"])
        for i, more in zip(asked, buffered):
            results[i] = [a for a in _merge(results[i], more) if queries[i].admits(a.simhash)]
        return results

    def find_same_title(self, queries: Sequence[TitleQuery]) -> list[list[StoredArticle]]:
        asked = [i for i, q in enumerate(queries) if q.limit > 0]
        bodies = [{
            "query": {"bool": {"filter": [{"term": {"title_md5": queries[i].title_md5}},
                                          *_filters(queries[i].window, queries[i].exclude_id)]}},
            "size": queries[i].limit, "sort": [{"ingest_seq": "desc"}, {"id": "desc"}], "track_total_hits": False,
        } for i in asked]
        buffered = self._buffered(lambda m: [m.same_title(queries[i]) for i in asked])
        results: list[list[StoredArticle]] = [[] for _ in queries]
        for i, hits, more in zip(asked, self._msearch(bodies, "headline lookup"), buffered):
            # oldest first, as the other lookups answer; the buffer holds the newest
            results[i] = _merge([from_source(h["_source"]) for h in reversed(hits)], more)[-queries[i].limit:]
        return results

    def _more_band_matches(self, q: BandQuery, query: dict, after: list) -> list[StoredArticle]:
        """The band matches after the first page, as the embedded store finds them: every one
        whose fingerprint is within the query's distance bound. Pages read fingerprints only
        (templated pages can share a band with thousands of articles); whole articles are read
        for those within the bound."""
        read, admitted = 0, []
        for hit in self._scan_hits(query, "SimHash band lookup", after, source=["simhash"]):
            read += 1
            if q.admits(from_signed(int(hit["_source"].get("simhash", 0)))):
                admitted.append(hit["_id"])
        log.debug("SimHash band lookup read %d more fingerprints; %d within the bound", read, len(admitted))
        found = self.get_many(admitted)
        return [found[i] for i in admitted if i in found]

    def knn(self, queries: Sequence[KnnQuery]) -> list[list[tuple[StoredArticle, float]]]:
        if not queries:
            return []
        if not self.vector_dims:
            return [[] for _ in queries]
        # A vector without a direction (all zeros) is near nothing, as in the embedded store;
        # Elasticsearch refuses it outright for cosine similarity (400), on every retry.
        asked = [i for i, q in enumerate(queries) if _has_direction(q.vector)]
        bodies = [self._knn_body(queries[i]) for i in asked]
        buffered = self._buffered(lambda m: [m.knn(queries[i]) for i in asked])
        results: list[list[tuple[StoredArticle, float]]] = [[] for _ in queries]
        for i, hits, more in zip(asked, self._msearch(bodies, "kNN lookup"), buffered):
            pairs = [(from_source(h["_source"]), score_to_cosine(h["_score"])) for h in hits]
            results[i] = self._best(pairs + more, queries[i])
        return results

    def _buffered(self, ask):
        """The in-flight buffer's answer, read *before* the search it completes: a refresh in
        between (another thread's report, a correction) empties the buffer and makes its articles
        searchable, so each article is in one of the two answers."""
        with self._lock:
            return ask(self._inflight)

    def _knn_body(self, q: KnnQuery) -> dict:
        vector = np.asarray(q.vector, dtype=np.float32).reshape(-1)
        if vector.shape[0] != self.vector_dims:
            raise StoreSchemaError(f"kNN query has {vector.shape[0]} dims, the index has {self.vector_dims}")
        knn: dict[str, Any] = {
            "field": "vector", "query_vector": vector.tolist(), "k": q.k,
            "num_candidates": min(MAX_NUM_CANDIDATES, max(self.num_candidates, q.k)),
            "similarity": float(q.min_score),
        }
        filters = _filters(q.window, q.exclude_id)
        if filters:
            knn["filter"] = filters
        return {"knn": knn, "size": q.k}

    @staticmethod
    def _best(pairs: list[tuple[StoredArticle, float]], q: KnnQuery) -> list[tuple[StoredArticle, float]]:
        """Union by id, best first; the floor is re-checked (float32 rounding, servers that ignore it)."""
        best: dict[str, tuple[StoredArticle, float]] = {}
        for a, score in pairs:
            if score >= q.min_score - 1e-6 and (a.id not in best or score > best[a.id][1]):
                best[a.id] = (a, score)
        return sorted(best.values(), key=lambda p: -p[1])[: q.k]

    def write(self, articles: Sequence[StoredArticle], merges: Sequence[ClusterChange] = ()) -> None:
        """Create ``articles``, then apply ``merges`` (recorded as pending first: see ``es_changes``).
        Merges are applied even when some articles failed for good (those that were created belong
        to the merged clusters too); the failure is raised after."""
        if not articles and not merges and not self._unfinished:
            return
        for a in articles:
            if a.vector is not None and self.vector_dims and np.asarray(a.vector).reshape(-1).shape[0] != self.vector_dims:
                raise StoreSchemaError(f"article {a.id}: vector has {np.asarray(a.vector).shape[-1]} dims, store has {self.vector_dims}")
        not_merges = [c for c in merges if c.kind != "merge"]
        if not_merges:
            raise ValueError(f"write applies merges only; got a {not_merges[0].kind!r} change of {not_merges[0].source}")
        with self._lock:
            logged: list[LoggedChange] = []
            if merges:
                self._require_changes()
                # Read back from the log below with every change still unfinished there, also
                # another store's, so that changes apply in the log's order (a correction made
                # while an older merge sat half-done is not undone when that merge is finished).
                self._unfinished = True
                logged = self._changes.record(merges, [self._next_seq() for _ in merges])
            failure: BulkWriteError | None = None
            try:
                if articles:
                    self._create(articles)
            except BulkWriteError as exc:
                failure = exc
            # After the articles: they were decided against the clusters as stored, so a merge
            # left unfinished by an earlier failure, finished now, moves them along with the rest
            # of its cluster (finished before them, it would leave them in a merged-away cluster).
            try:
                self._finish_changes(logged)
            except Exception:
                if failure is None:
                    raise
                # the articles refused for good are the caller's to set aside; the changes stay
                # unfinished in the log and are finished by the next write
                log.warning("cluster changes left unfinished after a failed write; finished on the next write", exc_info=True)
            if failure is not None:
                raise failure

    def _create(self, articles: Sequence[StoredArticle]) -> None:
        """Called by ``write`` only, which holds ``self._lock``."""
        batch: dict[str, StoredArticle] = {}
        for a in articles:
            batch.setdefault(a.id, a)  # first write wins inside a batch too
        if self.multi_index:
            present = self.get_many(list(batch))
            batch = {i: a for i, a in batch.items() if i not in present}
        now = datetime.now().astimezone()
        docs = {i: to_doc(a, self._next_seq(), now) for i, a in batch.items()}
        outcome = bulk_create(
            self.client, self.alias, docs, chunk_docs=self.cfg.bulk_chunk_docs,
            chunk_bytes=self.cfg.bulk_chunk_bytes, max_retries=self.cfg.max_retries,
            backoff=self.cfg.retry_backoff, refresh=self.cfg.write_refresh,
        )
        if outcome.written and self.cfg.write_refresh == "false":
            self._dirty = True
        self._remember(batch, outcome.written, outcome.existing)
        if outcome.failed:
            self._fail(docs, outcome.failed, outcome.statuses)
        if self.cfg.inflight_max and len(self._inflight) >= self.cfg.inflight_max:
            self.refresh()

    def _next_seq(self) -> int:
        """Write order (the embedded store's row id): microseconds, strictly increasing per store."""
        self._seq = max(self._seq + 1, time.time_ns() // 1000)
        return self._seq

    def _remember(self, batch: dict[str, StoredArticle], created: list[str], existing: list[str]) -> None:
        """Buffer what a search may not see yet: our created articles, and for 409s the stored
        version (a retry of our own earlier write, or a concurrent writer's)."""
        if not self.cfg.inflight_max or self.cfg.write_refresh != "false":
            return
        self._inflight.add(batch[i] for i in created)
        if existing:
            self._inflight.add(self.get_many(existing).values())

    def _fail(self, docs: dict[str, dict], failed: dict[str, str], statuses: dict[str, int | None]) -> None:
        """Dead-letter, then raise: an accepted article is never dropped silently. The error names
        the articles refused for good (their last answer not one to retry), so the daemon can set
        them aside instead of retrying the batch forever."""
        where = ""
        try:
            where = f"; saved to {dead_letter(self.cfg.dead_letter_dir, docs, failed)}"
        except OSError as exc:
            log.error("cannot write the dead-letter file in %s: %s", self.cfg.dead_letter_dir, exc)
            where = f"; the dead-letter file could not be written either ({exc})"
        first_id, first_reason = next(iter(failed.items()))
        raise BulkWriteError(
            f"{len(failed)} of {len(docs)} articles were not written to {self.alias} "
            f"(first: {first_id}: {first_reason}){where}",
            list(failed.items()),
            [aid for aid in failed if not is_retryable(statuses.get(aid))],
        )

    # ---- merges and splits -----------------------------------------------------------------------------
    # Each change is logged (es_changes) and applied as idempotent partial updates (bulk ``update``
    # with a ``doc``, no scripts) of the members a ``term`` on ``cluster_id`` finds. A search sees
    # only refreshed documents, so the alias is refreshed, unconditionally, before members are read
    # (the articles of this very write and another writer's included) and, when writes do not
    # refresh, again after the updates: lookups then never answer with a cluster id a change
    # replaced, and the in-flight buffer, emptied by the refresh, holds no copy older than the
    # change. Changes are rare next to writes, and a refresh is cheap.
    def split_article(self, change: ClusterChange) -> str | None:
        moved_article(change)  # a split that names its article, or ValueError
        with self._lock:
            self._require_changes()
            self._unfinished = True  # whatever is unfinished in the log, another store's too, goes first
            self._finish_changes()
            plan = self._resolve_split(change)  # KeyError for an unknown article: nothing recorded
            if plan["into"] == plan["source"] and change.into != change.article_id:
                return None  # into the cluster it is in: nothing to move (nor to log, as a label)
            self._unfinished = True
            entry = self._changes.record([change], [self._next_seq()], state=APPLYING, plans=[plan])[0]
            self._apply_changes([entry])
            return plan["new_canonical"]

    def cluster_changes(self, cluster_id: str | None = None, *, corrections_only: bool = False) -> list[ClusterChange]:
        with self._lock:
            if not self._changes_ready:
                self._changes_ready = self._changes.open(create=False)
            if not self._changes_ready:
                return []  # no log index: nothing was ever changed
            return self._changes.applied(cluster_id, corrections_only=corrections_only)

    def _require_changes(self) -> None:
        """A change is never applied without its log entry (it could not be finished after a crash)."""
        if not self._changes_ready:
            self._changes_ready = self._changes.open(create=self.cfg.auto_create)
        if not self._changes_ready:
            raise StoreError(
                f"the cluster change log index {self._changes.index!r} does not exist at {self.target}; merges and "
                "splits are not applied without it (set es.auto_create = true to create it); nothing was written"
            )

    def _finish_changes(self, ours: Sequence[LoggedChange] = ()) -> None:
        """Apply what the log holds unfinished (a crash, or a failure, came between recording a
        change and marking it applied), in the log's order, with ``ours``: the changes this
        store has just recorded. One of those that another store finished meanwhile is done
        again from its record (idempotent), so it reaches the articles written since."""
        if not self._unfinished:
            return
        entries = self._changes.unfinished()
        listed = {e.change_id for e in entries}
        left = len(listed - {e.change_id for e in ours})
        if left:
            log.warning("finishing %d cluster changes left unfinished in %s", left, self._changes.index)
        entries += [e for e in ours if e.change_id not in listed]
        self._apply_changes(sorted(entries, key=lambda e: (e.seq, e.change_id)))

    def _apply_changes(self, entries: Sequence[LoggedChange]) -> None:
        """Apply ``entries`` in order (each run of merges together); on any failure the rest stay
        in the log for the next try."""
        try:
            for merges, run in itertools.groupby(entries, key=lambda e: e.change.kind == "merge"):
                if merges:
                    self._apply_merges(list(run))
                else:
                    for entry in run:
                        self._apply_split(entry)
        except BaseException:
            self._unfinished = True
            raise
        self._unfinished = False
        self._ensure_visible()  # the updates, for searches (see the section comment)

    def _apply_merges(self, entries: Sequence[LoggedChange]) -> None:
        """Merges in order, with one read of their ends, one member scan and one bulk update for
        all of them. Each pending merge resolves both ends through their canonical articles'
        current clusters, following the merges before it (a merge into a cluster that was itself
        merged away lands where it went)."""
        pending = [e for e in entries if e.state == PENDING]
        stored = {aid: src["cluster_id"] for aid, (_, src) in
                  self._locate([end for e in pending for end in (e.change.into, e.change.source)]).items()}
        went: dict[str, str] = {}  # merged cluster -> the cluster it joined, in this run
        for entry in entries:
            # a conflict leaves in ``entry`` what another store recorded first; follow that
            while entry.state == PENDING:
                into, source = stored.get(entry.change.into), stored.get(entry.change.source)
                plan = None
                if into is not None and source is not None:
                    into, source = _follow(went, into), _follow(went, source)
                    plan = {"into": into, "source": source} if into != source else None
                self._changes.mark(entry, SKIPPED if plan is None else APPLYING, **(plan or {}))
            if entry.state != SKIPPED:
                went[entry.source] = entry.into
        plans = [e for e in entries if e.state != SKIPPED]
        if plans:
            self._move_clusters([(e.into, e.source, e.change.article_id or e.into) for e in plans])
        # Applied already only when another store finished a merge while we wrote its articles:
        # the moves above were redone from its record (idempotent), so they reach those too.
        self._changes.mark_applied([e for e in plans if e.state != APPLIED])

    def _apply_split(self, entry: LoggedChange) -> None:
        while entry.state == PENDING:
            try:
                plan = self._resolve_split(entry.change)
            except KeyError:
                plan = None
            self._changes.mark(entry, SKIPPED if plan is None else APPLYING, **(plan or {}))
        if entry.state == SKIPPED:
            return
        self._move_article(entry.change.article_id, entry.into, entry.source, entry.new_canonical)
        if entry.state != APPLIED:
            self._changes.mark_applied([entry])

    def _move_clusters(self, plans: Sequence[tuple[str, str, str]]) -> None:
        """(into, source, dup_of) in order: every member of each ``source`` joins where its
        ``into`` ends after all of them; each ``source``'s canonical article points at its
        ``dup_of`` unless it already points somewhere (so a redo keeps the first)."""
        went = {source: into for into, source, _ in plans}
        sources = list(dict.fromkeys(source for _, source, _ in plans))
        what = f"merging {len(sources)} clusters (first: {plans[0][1]} into {plans[0][0]})"
        updates: dict[str, tuple[str, dict]] = {}
        canonicals = self._locate(sources)
        for into, source, dup_of in plans:
            if source in canonicals and source not in updates and canonicals[source][1].get("dup_of") is None:
                updates[source] = (canonicals[source][0], {"dup_of": dup_of, "dup_reason": MERGED, "score": None})
        for hit in self._members(sources, what):
            index, doc = updates.get(hit["_id"], (hit["_index"], {}))
            destination = _follow(went, hit["_source"]["cluster_id"])
            updates[hit["_id"]] = (index, {**doc, "cluster_id": destination, "is_canonical": False, "duplicate": 1})
        self._update_docs(updates, what)

    def _resolve_split(self, change: ClusterChange) -> dict[str, str | None]:
        """The article's cluster, the cluster it goes to and, when it is the canonical article, the
        oldest other member (``oldest_other_member``) that leads the rest."""
        aid = change.article_id
        if self.multi_index:
            self.refresh()
        found = self.get_many([aid, change.into])
        if aid not in found:
            raise KeyError(aid)
        source = found[aid].cluster_id
        if change.into == aid:
            into = aid
        elif change.into in found:
            into = found[change.into].cluster_id
        else:
            raise KeyError(change.into)
        new_canonical = None
        if source == aid:
            # every member is read (a split is a person's rare act), so the rule is applied here
            # as in every store, not re-spelt as a search sort (dates there are cut to milliseconds)
            self.refresh()
            hits = self._scan_hits({"term": {"cluster_id": aid}}, "electing a canonical article",
                                   source=["id", "publish_time"])
            new_canonical = oldest_other_member(
                ((h["_id"], _when(h["_source"].get("publish_time"))) for h in hits), aid)
        return {"into": into, "source": source, "new_canonical": new_canonical}

    def _move_article(self, aid: str, into: str, source: str, new_canonical: str | None) -> None:
        """A split as resolved by ``_resolve_split``; every step is a redo-safe partial update."""
        what = f"splitting {aid} out of cluster {source}"
        located = self._locate([aid] + ([new_canonical] if new_canonical else []))
        updates: dict[str, tuple[str, dict]] = {}
        leader = {"is_canonical": True, "duplicate": 0, "dup_of": None, "dup_reason": None, "score": None}
        if new_canonical is not None:
            for hit in self._members([aid], what):
                if hit["_id"] != aid:
                    updates[hit["_id"]] = (hit["_index"], {"cluster_id": new_canonical})
            if new_canonical in located:
                updates[new_canonical] = (located[new_canonical][0], {"cluster_id": new_canonical, **leader})
        if aid in located:
            if into == aid:
                updates[aid] = (located[aid][0], {"cluster_id": aid, **leader})
            elif into != source:
                updates[aid] = (located[aid][0], {"cluster_id": into, "is_canonical": False, "duplicate": 1,
                                                  "dup_of": into, "dup_reason": MANUAL, "score": None})
        self._update_docs(updates, what)

    def _members(self, cluster_ids: Sequence[str], what: str) -> list[dict]:
        """Raw hits (``_index``, ``_id``, ``cluster_id`` in ``_source``) of every member of
        ``cluster_ids``, after a refresh."""
        self.refresh()
        hits = []
        for at in range(0, len(cluster_ids), MGET_CHUNK):
            query = {"terms": {"cluster_id": list(cluster_ids[at : at + MGET_CHUNK])}}
            hits += self._scan_hits(query, what, source=["id", "cluster_id"])
        return hits

    def _locate(self, ids: Sequence[str]) -> dict[str, tuple[str, dict]]:
        """(backing index, source) of each stored id, also of those written a moment ago."""
        ids = list(dict.fromkeys(ids))
        if ids and self.multi_index:
            self.refresh()
        return self._read(ids)

    def _update_docs(self, updates: dict[str, tuple[str, dict]], what: str) -> None:
        """Partial updates (id -> (index, fields)). An article gone meanwhile is skipped with a
        warning; any other failure raises, leaving the change unfinished in the log."""
        if not updates:
            return
        with translate(what, self.target):
            outcome = bulk_update(
                self.client, updates, chunk_docs=self.cfg.bulk_chunk_docs, chunk_bytes=self.cfg.bulk_chunk_bytes,
                max_retries=self.cfg.max_retries, backoff=self.cfg.retry_backoff, refresh=self.cfg.write_refresh,
            )
        failed = {aid: (outcome.statuses.get(aid), reason) for aid, reason in outcome.failed.items()}
        if self.cfg.write_refresh == "false":
            self._dirty = True
        gone = [aid for aid, (status, _) in failed.items() if status == 404]
        if gone:
            log.warning("%s: %d articles are no longer stored, skipped (first: %s)", what, len(gone), gone[0])
        rest = {aid: f for aid, f in failed.items() if f[0] != 404}
        if rest:
            first, (status, reason) = next(iter(rest.items()))
            cls = StoreUnavailable if is_retryable(status) else StoreError
            raise cls(f"{what}: {len(rest)} of {len(updates)} article updates failed (first: {first}: {reason}); "
                      "the change stays in the log and is finished on the next write or open")

    def cluster_members(self, cluster_id: str) -> list[StoredArticle]:
        self._ensure_visible()
        return list(self._scan({"term": {"cluster_id": cluster_id}}, "cluster members"))

    def top_clusters(self, n: int) -> list[tuple[str, int]]:
        self._ensure_visible()
        aggs = {"clusters": {
            "terms": {"field": "cluster_id", "size": n, "shard_size": max(n * 10, 100),
                      "order": [{"_count": "desc"}, {"first": "asc"}]},
            "aggs": {"first": {"min": {"field": "ingest_seq"}}},
        }}
        resp = self._search("largest clusters", size=0, aggs=aggs)
        return [(b["key"], b["doc_count"]) for b in resp["aggregations"]["clusters"]["buckets"]]

    def iter_articles(self) -> Iterator[StoredArticle]:
        self._ensure_visible()
        return self._scan({"match_all": {}}, "iterating articles")

    def stats(self) -> StoreStats:
        """Cluster count is a ``cardinality`` aggregation: exact up to 40,000 clusters, within about
        1% beyond (Elastic docs, precision_threshold)."""
        self._ensure_visible()
        aggs = {
            "clusters": {"cardinality": {"field": "cluster_id", "precision_threshold": 40000}},
            "duplicates": {"filter": {"term": {"is_canonical": False}}},
            "reasons": {"terms": {"field": "dup_reason", "size": 100}},
        }
        resp = self._search("store statistics", size=0, track_total_hits=True, aggs=aggs)
        a = resp["aggregations"]
        return StoreStats(
            articles=resp["hits"]["total"]["value"], clusters=int(a["clusters"]["value"]),
            duplicates=a["duplicates"]["doc_count"],
            by_reason={b["key"]: b["doc_count"] for b in a["reasons"]["buckets"]},
        )
