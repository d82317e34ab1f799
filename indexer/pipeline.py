"""The indexer: featurise a batch, ask the store its questions, decide, write.

It only orchestrates: text rules live in ``cleaning`` and ``features``, the pair comparison in
``compare``, which cluster an article joins (and which clusters it bridges) in ``clusters``,
storage behind the ``Store`` protocol. Both stores therefore make the same decisions.

Within a batch, articles are decided in input order and each one also sees the articles decided
before it in the same batch (they are not in the store yet), so two copies arriving together
still end up in one cluster with exactly one canonical article. Merges decided during a batch are
written with its articles, in one unit.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter, deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from enum import Enum
from typing import Iterable, Iterator, Mapping, Sequence

import numpy as np

from .article import Article, article_from_record
from .clusters import COPY_REASONS, Candidate, assign
from .compare.evidence import PairEvidence, compare_sides
from .compare.rules import Verdict, judge, refusal
from .compare.sides import Side, shingle_source
from .compare.verifier import verifier_for
from .comparer import PairComparer
from .errors import InvalidArticle
from .features import Featurizer, TextFeatures, stored_text_features
from .features.embedding import create_embedder, model_name
from .features.shingles import contained, shingles
from .features.simhash import hamming
from .settings import Settings
from .store import BandQuery, ClusterChange, KnnQuery, Store, StoredArticle, TimeWindow, TitleQuery, open_store
from .store.base import cluster_history
from .store.memory import MemoryIndex

log = logging.getLogger(__name__)

# Articles per part of the features computed ahead: small enough that the model starts soon after
# the text stage, large enough for its micro-batches (about five news texts each) to fill both cores.
FEATURE_PART = 64
# Stored articles' comparison sides kept between lookups: candidates of a news stream repeat (a
# story's canonical article is asked about by each repost). A side is tens of KB.
SIDE_CACHE_SIZE = 4096
# Shingles of stored candidates the pre-check rejected, by article id, up to this many bytes: the
# same window neighbours are asked about by article after article (92% of pre-checks on 1,000
# ccf2019_inews articles were for an article already pre-checked).
PRECHECK_CACHE_BYTES = 64 * 2**20
# A cluster whose canonical article (or an exact-key member) is already a copy of the new article
# is not compared member by member (see Indexer._judge_candidates). Off only to check that it
# changes no cluster (tests) and to measure what it saves (bench/burst_speed.py --full-compare).
SETTLE_ON_COPY = True
# A fourth question: articles under the same cleaned headline (its MD5) in the window. A trimmed
# repost keeps its story's headline while its embedding and fingerprint drift (cosine 0.2-0.4,
# Hamming 4-11 seen in bursts), and a commentary quoting its story keeps it too; the rules still
# decide (rules.quotes_its_story, the guards). Short headlines (通知, 公告) say nothing, and a
# column under one standing headline is capped to its newest issues.
SAME_TITLE_MIN_CHARS = 8
SAME_TITLE_CANDIDATES = 10


class Decision(str, Enum):
    NEW = "new"
    DUPLICATE = "duplicate"
    ALREADY_INDEXED = "already_indexed"
    REJECTED = "rejected"


@dataclass
class IndexOutcome:
    article_id: str | None
    decision: Decision
    cluster_id: str | None = None
    dup_of: str | None = None
    reason: str | None = None
    score: float | None = None
    error: str | None = None
    where: str | None = None
    merged: list[str] = field(default_factory=list)  # clusters this article's arrival merged into its own


@dataclass
class BatchSummary:
    counts: Counter = field(default_factory=Counter)

    def add(self, outcome: IndexOutcome) -> None:
        self.counts[outcome.decision.value] += 1
        if outcome.decision is Decision.DUPLICATE and outcome.reason:
            self.counts[f"duplicate/{outcome.reason}"] += 1
        if outcome.merged:
            self.counts["merged"] += len(outcome.merged)


@dataclass
class PreparedBatch:
    """One batch read and parsed, its features under way on the indexer's stages (``Indexer.prepare``).

    ``outcomes`` holds one slot per record, REJECTED filled in; ``valid`` the parsed articles, each
    with its slot and where it came from; ``parts`` the futures of their features."""

    outcomes: list[IndexOutcome | None]
    valid: list[tuple[int, Article, str | None]]
    parts: list[Future]
    _features: dict[str, tuple[TextFeatures, np.ndarray | None]] | None = field(default=None, repr=False)

    def features(self) -> dict[str, tuple[TextFeatures, np.ndarray | None]]:
        """Wait for the features (by article id); raises what a stage raised."""
        if self._features is None:
            features: dict[str, tuple[TextFeatures, np.ndarray | None]] = {}
            for part in self.parts:
                features.update(part.result())
            self._features = features
        return self._features


class Indexer:
    """Decides duplicate-or-new for batches of articles and writes them to a store."""

    def __init__(self, settings: Settings, store: Store, featurizer: Featurizer):
        self.settings = settings
        self.store = store
        self.featurizer = featurizer
        self._side_cache: dict[str, Side] = {}
        self._precheck_shingles: dict[str, np.ndarray] = {}
        self._precheck_bytes = 0
        self._stages: tuple[ThreadPoolExecutor, ThreadPoolExecutor] | None = None  # text, embedding
        # A batch decides from clusters as it read them and writes them back: a merge or split by a
        # person in between would leave an article in a cluster that no longer exists. Batches and
        # corrections made through this indexer (``exclusive``) take turns.
        self._writing = threading.RLock()

    def exclusive(self) -> threading.RLock:
        """Hold while reading clusters and applying a correction (merge, split), so no batch is
        decided and written in between."""
        return self._writing

    @classmethod
    def open(cls, settings: Settings) -> "Indexer":
        verifier_for(settings.decision.verifier)  # a missing package fails now, not at the first borderline pair
        embedder = create_embedder(settings.embedding.model, settings.embedding.device)
        dims = embedder.dims if embedder is not None else None
        store = open_store(settings, vector_dims=dims, embedding_model=model_name(settings.embedding.model))
        return cls(settings, store, Featurizer(settings, embedder))

    def close(self) -> None:
        for stage in self._stages or ():
            stage.shutdown(wait=True, cancel_futures=True)  # parts read ahead of a stream that stopped
        self.store.close()

    def __enter__(self) -> "Indexer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- public API ----------------------------------------------------------------------------
    def index_many(
        self, records: Iterable[Mapping | Article], where: Sequence[str | None] | None = None
    ) -> list[IndexOutcome]:
        """Validate, decide and write. One outcome per record, in order; invalid records are
        REJECTED with the reason, the others are written before this returns."""
        if where is None:
            return list(self.index_stream((r, None) for r in records))
        records = list(records)
        if len(records) != len(where):  # before any work: a mismatch found late would leave a batch half-written
            raise ValueError(f"{len(records)} records but {len(where)} places")
        return list(self.index_stream(zip(records, where)))

    def prepare(self, records: Sequence[Mapping | Article], where: Sequence[str | None] | None = None) -> PreparedBatch:
        """Read one batch (each record parsed once, invalid ones REJECTED in place) and start its
        features on the indexer's stages; ``index_prepared`` decides and writes it. A caller that
        takes batches itself (the daemon's worker) prepares batch n+1 before deciding batch n,
        the way ``index_stream`` does."""
        places = list(where) if where is not None else [None] * len(records)
        if len(places) != len(records):
            raise ValueError(f"{len(records)} records but {len(places)} places")
        outcomes: list[IndexOutcome | None] = []
        valid: list[tuple[int, Article, str | None]] = []
        for record, loc in zip(records, places):
            self._read_one(record, loc, outcomes, valid)
        return self._start(outcomes, valid)

    def index_prepared(self, batch: PreparedBatch) -> list[IndexOutcome]:
        """Decide and write a prepared batch: one outcome per record, in order. Raises what its
        feature stages or the store raised; the same batch may then be indexed again (its
        features stay valid, and what the store already holds comes back ALREADY_INDEXED)."""
        outcomes = list(batch.outcomes)
        if batch.valid:
            decided = self._index_batch([a for _, a, _ in batch.valid], batch.features())
            for (i, _, loc), outcome in zip(batch.valid, decided):
                outcome.where = loc
                outcomes[i] = outcome
        return outcomes  # type: ignore[return-value]

    def index_stream(self, items: Iterable[tuple[Mapping | Article, str | None]]) -> Iterator[IndexOutcome]:
        """Validate, decide and write a stream of (record, where it came from) pairs, yielding one
        outcome per record in input order, a batch at a time once its articles are written.
        Invalid records are REJECTED with the reason.

        Three stages overlap: while batch n is decided (Python, holding the GIL), the next
        batch's embeddings are computed (compiled code and matrix products, outside the GIL) and
        text features (Python again) run further ahead. The two Python stages share one core; the
        model gets the rest. Input is read two batches ahead of the decisions, no further.

        When reading fails (the input, or the store asked which articles are known), the batches
        already read are still decided, written and yielded before the error is raised.
        """
        batches = self._read_batches(items)
        ahead: deque[PreparedBatch] = deque()
        failure: Exception | None = None

        def read_one() -> None:
            nonlocal failure
            if failure is not None:
                return
            try:
                got = next(batches, None)
                if got is not None:
                    ahead.append(self._start(*got))
            except Exception as exc:  # noqa: BLE001 - raised below, once what was read is written
                failure = exc

        read_one()
        read_one()
        while ahead:
            batch = ahead.popleft()
            batch.features()  # its features first: the stages then take the batch read next
            read_one()
            yield from self.index_prepared(batch)
        if failure is not None:
            raise failure

    def _read_one(self, record: Mapping | Article, loc: str | None,
                  outcomes: list[IndexOutcome | None], valid: list[tuple[int, Article, str | None]]) -> None:
        """Parse ``record`` into ``valid`` (with its index in ``outcomes``), or REJECT it there."""
        try:
            article = record if isinstance(record, Article) else article_from_record(
                record, loc, self.settings.default_tz, self.settings.input.max_body_bytes)
        except InvalidArticle as exc:
            rid = record.get("id") if isinstance(record, Mapping) else None
            outcomes.append(IndexOutcome(str(rid) if rid is not None else None, Decision.REJECTED, error=exc.reason, where=loc))
            return
        valid.append((len(outcomes), article, loc))
        outcomes.append(None)

    def _read_batches(
        self, items: Iterable[tuple[Mapping | Article, str | None]]
    ) -> Iterator[tuple[list[IndexOutcome | None], list[tuple[int, Article, str | None]]]]:
        """Batches of ``input.batch_size`` valid articles: each as the outcomes of its stretch of
        input (REJECTED filled in, the rest None) and its articles, each with its index there and
        where it came from."""
        size = self.settings.input.batch_size
        outcomes: list[IndexOutcome | None] = []
        valid: list[tuple[int, Article, str | None]] = []
        try:
            for record, loc in items:
                self._read_one(record, loc, outcomes, valid)
                if len(valid) == size:
                    yield outcomes, valid
                    outcomes, valid = [], []
        except Exception:
            if outcomes:  # the records read before the input failed are still a batch
                yield outcomes, valid
            raise
        if outcomes:
            yield outcomes, valid

    def _start(self, outcomes: list[IndexOutcome | None], valid: list[tuple[int, Article, str | None]]) -> PreparedBatch:
        return PreparedBatch(outcomes, valid, self._features_ahead([a for _, a, _ in valid]))

    def _features_ahead(self, articles: list[Article]) -> list[Future]:
        """Features of the articles not stored yet, by article id, in parts: each a future of the
        embedding stage. Text features come from one thread and embeddings from another, each
        taking the parts in order: the model's piece cache then sees the same calls in the same
        order on every run, and equal input gives equal vectors."""
        if not articles:
            return []
        known = self.store.get_many([a.id for a in articles])
        first_copies: dict[str, Article] = {}  # the first copy of an id is the one decided
        for a in articles:
            if a.id not in known:
                first_copies.setdefault(a.id, a)
        todo = list(first_copies.values())
        if self._stages is None:
            self._stages = (
                ThreadPoolExecutor(max_workers=1, thread_name_prefix="text-features"),
                ThreadPoolExecutor(max_workers=1, thread_name_prefix="embedding"),
            )
        text_stage, embed_stage = self._stages

        def embed(part: list[Article], texts: Future) -> dict[str, tuple[TextFeatures, np.ndarray | None]]:
            done = texts.result()
            return {a.id: (t, v) for a, t, v in zip(part, done, self.featurizer.embed(done))}

        futures = []
        for start in range(0, len(todo), FEATURE_PART):
            part = todo[start : start + FEATURE_PART]
            texts = text_stage.submit(lambda part=part: [self.featurizer.text(a) for a in part])
            futures.append(embed_stage.submit(embed, part, texts))
        return futures

    def compare(self, a: Mapping | Article, b: Mapping | Article) -> tuple[PairEvidence, Verdict | None]:
        """The ingest rules applied to one pair, ignoring time windows and clusters."""
        return PairComparer(self.settings, self.featurizer).compare(a, b)

    def explain(self, article_id: str, limit: int = 5) -> dict:
        """Why a stored article is, or is not, a duplicate: its decision, and the evidence against
        its match, its cluster's canonical article and the nearest other candidates."""
        stored = self.store.get_many([article_id]).get(article_id)
        if stored is None:
            raise KeyError(article_id)
        side = self._side_for(stored)
        candidates = self._gather([side], [self._window(stored.publish_time)], exclude=[stored.id])[0]
        wanted = [x for x in (stored.dup_of, stored.cluster_id) if x and x != stored.id]
        pool = {c.id: c for c in candidates}
        pool.update(self.store.get_many(wanted))
        rows = []
        for cand in pool.values():
            ev, verdict = self.compare_stored(stored, cand)
            rows.append({
                "id": cand.id, "title": cand.title, "cluster_id": cand.cluster_id,
                "role": "dup_of" if cand.id == stored.dup_of else ("canonical" if cand.id == stored.cluster_id else "candidate"),
                "verdict": verdict.reason.value if verdict else None, "score": verdict.score if verdict else None,
                "refused": refusal(ev, self.settings.decision, self.settings.simhash),
                "evidence": ev.__dict__,
            })
        rows.sort(key=lambda r: (r["role"] == "candidate", -(r["score"] or 0), -(r["evidence"]["event_score"] or 0)))
        changes = [c.record() for c in cluster_history(self.store, stored.cluster_id)]
        return {"article": stored.export_record(), "comparisons": rows[: max(limit, len(wanted))], "cluster_changes": changes}

    # ---- batch decision ------------------------------------------------------------------------------
    def _window(self, when: datetime | None) -> TimeWindow:
        days = self.settings.decision.time_window_days
        if when is None or days <= 0:
            return TimeWindow()
        span = timedelta(days=days)
        return TimeWindow(when - span, when + span)

    def compare_stored(self, a: StoredArticle, b: StoredArticle) -> tuple[PairEvidence, Verdict | None]:
        """The evidence and verdict for two stored articles, read from their stored features."""
        ev = compare_sides(self._side_for(a), self._side_for(b), self.settings)
        return ev, judge(ev, self.settings.decision, self.settings.simhash)

    def _side_for(self, stored: StoredArticle) -> Side:
        side = self._side_cache.get(stored.id)
        if side is None:
            tf = stored_text_features(
                stored.clean_title, stored.clean_body, title_md5=stored.title_md5, body_md5=stored.body_md5,
                content_key=stored.content_key, simhash_=stored.simhash, token_count=stored.token_count,
                settings=self.settings,
            )
            # The pre-check shingled the same text (the body cut to feature_max_chars) a moment ago.
            side = self._remember(Side.of(stored.id, tf, stored.vector, stored.publish_time,
                                          known_shingles=self._precheck_shingles.get(stored.id)))
        return side

    def _remember(self, side: Side) -> Side:
        if len(self._side_cache) >= SIDE_CACHE_SIZE:
            del self._side_cache[next(iter(self._side_cache))]  # oldest first
        self._side_cache[side.id] = side
        return side

    def _gather(self, sides: Sequence[Side], windows: Sequence[TimeWindow], exclude: Sequence[str | None]) -> list[list[StoredArticle]]:
        """Candidates from the store for each side: exact key, SimHash bands, kNN, headline (deduplicated).

        A textless side (nothing left after cleaning) asks nothing: it matches nothing
        (compare_sides), and every such article shares one content key, so asking by it would read
        every textless article ever stored, a cost that grew with the store (12.7 articles/s of page
        chrome after 4,000 of them, against 175 in a fresh store). A side without content tokens
        (only stopwords, or lone letters) has SimHash 0, which says nothing: it asks no bands."""
        d = self.settings.decision
        asking = [i for i, s in enumerate(sides) if not s.textless]
        exact = self.store.find_exact([sides[i].text.content_key for i in asking])
        banded = [i for i in asking if sides[i].text.token_count]
        bands = dict(zip(banded, self.store.find_band_candidates(
            [BandQuery(sides[i].text.bands, windows[i], exclude[i], sides[i].text.simhash, self.settings.simhash.max_distance)
             for i in banded]
        )))
        knn_sides = [i for i in asking if sides[i].vector is not None]
        knn_by_side = dict(zip(knn_sides, self.store.knn(
            [KnnQuery(sides[i].vector, d.knn_k, d.knn_min_cosine, windows[i], exclude[i]) for i in knn_sides])))
        titled = [i for i in asking if _asks_by_title(sides[i])]
        by_title = dict(zip(titled, self.store.find_same_title(
            [TitleQuery(sides[i].text.title_md5, SAME_TITLE_CANDIDATES, windows[i], exclude[i]) for i in titled])))
        out = []
        for i, s in enumerate(sides):
            pool: dict[str, StoredArticle] = {}
            for a in exact.get(s.text.content_key, []):  # a textless side's key was not asked
                if a.id != exclude[i]:
                    pool.setdefault(a.id, a)
            for a in bands.get(i, ()):
                if hamming(a.simhash, s.text.simhash) <= self.settings.simhash.max_distance:
                    pool.setdefault(a.id, a)
            for a, _score in knn_by_side.get(i, []):
                pool.setdefault(a.id, a)
            for a in by_title.get(i, []):
                pool.setdefault(a.id, a)
            out.append(list(pool.values()))
        return out

    def _in_batch_candidates(self, in_batch: MemoryIndex, side: Side, window: TimeWindow) -> list[StoredArticle]:
        """The same questions as ``_gather``, asked of the articles decided earlier in the batch
        (none for a textless side, no bands for a side without content tokens)."""
        d = self.settings.decision
        if side.textless:
            return []
        found = in_batch.with_key([side.text.content_key])
        if side.text.token_count:
            found += in_batch.bands(BandQuery(side.text.bands, window, None, side.text.simhash, self.settings.simhash.max_distance))
        if side.vector is not None:
            found += [a for a, _ in in_batch.knn(KnnQuery(side.vector, d.knn_k, d.knn_min_cosine, window))]
        if _asks_by_title(side):
            found += in_batch.same_title(TitleQuery(side.text.title_md5, SAME_TITLE_CANDIDATES, window))
        return found

    def _index_batch(self, articles: list[Article], ahead: Mapping[str, tuple[TextFeatures, np.ndarray | None]]) -> list[IndexOutcome]:
        """Decide and write one batch. ``ahead``: features computed by ``_features_ahead``; an
        article it lacks (a row deleted by hand since) is featurised here."""
        with self._writing:
            return self._decide_and_write(articles, ahead)

    def _decide_and_write(self, articles: list[Article], ahead: Mapping[str, tuple[TextFeatures, np.ndarray | None]]) -> list[IndexOutcome]:
        outcomes: list[IndexOutcome | None] = [None] * len(articles)
        known = self.store.get_many([a.id for a in articles])
        by_url = self.store.find_by_canonical_url([a.canonical_url for a in articles if not a.id_given and a.canonical_url])
        fresh: list[int] = []
        batch_ids: dict[str, int] = {}
        batch_urls: dict[str, int] = {}
        for i, a in enumerate(articles):
            seen = known.get(a.id) or (by_url.get(a.canonical_url) if not a.id_given and a.canonical_url else None)
            if seen is not None:
                outcomes[i] = IndexOutcome(seen.id, Decision.ALREADY_INDEXED, seen.cluster_id, seen.dup_of, seen.dup_reason, seen.score)
                continue
            first = batch_ids.get(a.id)
            if first is None and not a.id_given and a.canonical_url:
                first = batch_urls.get(a.canonical_url)
            if first is not None:
                outcomes[i] = IndexOutcome(articles[first].id, Decision.ALREADY_INDEXED)  # filled in below
                continue
            batch_ids[a.id] = i
            if a.canonical_url:
                batch_urls.setdefault(a.canonical_url, i)
            fresh.append(i)

        ready = [ahead.get(articles[i].id) for i in fresh]
        texts = [r[0] if r is not None else self.featurizer.text(articles[i]) for i, r in zip(fresh, ready)]
        missing = [j for j, r in enumerate(ready) if r is None]
        vectors = [r[1] if r is not None else None for r in ready]
        for j, v in zip(missing, self.featurizer.embed([texts[j] for j in missing])):
            vectors[j] = v
        sides = [Side.of(articles[i].id, t, v, articles[i].publish_time) for i, t, v in zip(fresh, texts, vectors)]
        windows = [self._window(s.publish_time) for s in sides]
        store_candidates = self._gather(sides, windows, [None] * len(sides))
        canonical_ids = {a.cluster_id for cands in store_candidates for a in cands if a.cluster_id != a.id}
        canonicals = self.store.get_many(list(canonical_ids)) if canonical_ids else {}

        decided: list[StoredArticle] = []
        pending_sides: dict[str, Side] = {}
        pending: dict[str, StoredArticle] = {}
        in_batch = MemoryIndex()  # the batch's decided articles, asked like the store
        view = _BatchClusters(self, canonicals, pending_sides)
        merges: list[ClusterChange] = []
        now = datetime.now(timezone.utc)
        for pos, (i, side, window) in enumerate(zip(fresh, sides, windows)):
            article = articles[i]
            pool = {c.id: c for c in store_candidates[pos]}
            for c in self._in_batch_candidates(in_batch, side, window):
                pool.setdefault(c.id, c)
            cands = self._judge_candidates(side, pool.values(), view, pending_sides)
            got = assign(side, cands, view, self.settings)
            match = got.match
            stored = StoredArticle(
                id=article.id, url=article.url, canonical_url=article.canonical_url, source=article.source,
                title=article.title, content=article.content, publish_time=article.publish_time,
                clean_title=side.text.clean_title, clean_body=side.text.clean_body,
                title_md5=side.text.title_md5, body_md5=side.text.body_md5, content_key=side.text.content_key,
                simhash=side.text.simhash, bands=side.text.bands, vector=side.vector,
                cluster_id=got.cluster_id,  # the surviving cluster when its arrival merged clusters
                is_canonical=match is None,
                dup_of=match.article.id if match else None,
                dup_reason=match.verdict.reason.value if match else None,
                score=match.verdict.score if match else None,
                indexed_at=now, extra=dict(article.extra), token_count=side.text.token_count,
            )
            pending[stored.id] = stored
            pending_sides[stored.id] = side
            in_batch.add([stored])
            decided.append(stored)
            view.merge(got.merges)
            merges.extend(got.merges)
            outcomes[i] = IndexOutcome(
                stored.id, Decision.DUPLICATE if match else Decision.NEW, stored.cluster_id, stored.dup_of,
                stored.dup_reason, stored.score, merged=[m.source for m in got.merges],
            )
        self.store.write(decided, merges)
        # Fresh articles are the likeliest candidates of the next ones (reposts follow within hours):
        # keep their sides, which equal what _side_for would rebuild from the stored rows.
        for stored in decided:
            self._remember(pending_sides[stored.id])
        for outcome in outcomes:  # every one filled in above
            if outcome.decision is Decision.ALREADY_INDEXED and outcome.cluster_id is None:
                # Repeats inside the batch report what their first copy got.
                first = pending.get(outcome.article_id or "")
                if first is not None:
                    outcome.cluster_id, outcome.dup_of = first.cluster_id, first.dup_of
                    outcome.reason, outcome.score = first.dup_reason, first.score
            if outcome.cluster_id is not None:
                outcome.cluster_id = view.resolve(outcome.cluster_id)  # where the batch's later merges took it
        return outcomes  # type: ignore[return-value]

    def _judge_candidates(self, side: Side, pool, view: "_BatchClusters", pending_sides: dict[str, Side]) -> list[Candidate]:
        """The evidence and verdict of each candidate worth comparing, a cluster at a time.

        In a burst a story's cluster holds tens of copies, and every one of them is a candidate of
        the next copy. A cluster is judged once: its exact-key members and its canonical article
        first, and when one of them is already a copy (exact or near) the cluster's other members
        are not compared (``SETTLE_ON_COPY``): the article is a copy of the cluster's canonical
        (or of an exact copy in it), so the cluster admits it whatever the others say. They could
        only name another member as ``dup_of``, or rank this cluster above another that admits
        the article too (a higher near score): so when another cluster has a match too, the
        skipped members are compared after all (a teaser cut before the figures an edited report
        changed is a near copy of both; the original's canonical, a reworded copy, scored lower
        than the edit, a fourth generator's never-read seed 508)."""
        clusters: dict[str, list[StoredArticle]] = {}
        for c in pool:
            clusters.setdefault(view.cluster_of(c), []).append(c)
        cands, skipped = [], []
        for cid, members in clusters.items():
            # exact-key members, then the canonical, then the rest (sort is stable)
            members.sort(key=lambda c: (c.content_key != side.text.content_key, c.id != cid))
            for k, c in enumerate(members):
                cand = self._judge(side, c, pending_sides)
                if cand is None:
                    continue
                cands.append(cand)
                settled = cand.verdict is not None and cand.verdict.reason in COPY_REASONS
                if SETTLE_ON_COPY and settled and (c.id == cid or c.content_key == side.text.content_key):
                    skipped += members[k + 1:]
                    break
        if skipped and len({view.cluster_of(c.article) for c in cands if c.verdict is not None}) > 1:
            cands += filter(None, (self._judge(side, c, pending_sides) for c in skipped))
        return cands

    def _judge(self, side: Side, stored: StoredArticle, pending_sides: dict[str, Side]) -> Candidate | None:
        """The evidence and verdict of one candidate, or None when none of the rules can accept it."""
        known = pending_sides.get(stored.id) or self._side_cache.get(stored.id)
        if self._cannot_match(side, stored, known.shingles if known is not None else None):
            return None
        ev = compare_sides(side, known or self._side_for(stored), self.settings)
        return Candidate(stored, ev, judge(ev, self.settings.decision, self.settings.simhash))

    def _cannot_match(self, side: Side, stored: StoredArticle, stored_shingles: np.ndarray | None = None) -> bool:
        """Whether no rule of ``judge`` can accept this stored candidate, told from what its row
        already holds (exact key, fingerprint, vector, cleaned text) without tokenising it again.

        Most kNN neighbours of a news article are other news: below the semantic cosine floor,
        not within the SimHash distance and not a trimmed copy, they can only be rejected, so the
        full comparison (tokens, headline grams, template check) is skipped for them.
        """
        d = self.settings.decision
        if stored.content_key == side.text.content_key:
            return False
        if hamming(stored.simhash, side.text.simhash) <= self.settings.simhash.max_distance:
            return False
        if side.vector is not None and stored.vector is not None and float(np.dot(side.vector, stored.vector)) >= d.semantic_min_cosine:
            return False
        if side.shares_headline_with(stored.clean_title):
            return False  # one may quote the other word for word (rules.quotes_its_story)
        if stored_shingles is None:
            stored_shingles = self._stored_shingles(stored)
        return not contained(side.shingles, stored_shingles, d.near_containment)

    def _stored_shingles(self, stored: StoredArticle) -> np.ndarray:
        found = self._precheck_shingles.get(stored.id)
        if found is None:
            body = stored.clean_body[: self.settings.input.feature_max_chars]
            found = shingles(shingle_source(stored.clean_title, body))
            while self._precheck_shingles and self._precheck_bytes + found.nbytes > PRECHECK_CACHE_BYTES:
                self._precheck_bytes -= self._precheck_shingles.pop(next(iter(self._precheck_shingles))).nbytes  # oldest
            self._precheck_shingles[stored.id] = found
            self._precheck_bytes += found.nbytes
        return found


class _BatchClusters:
    """Clusters as a batch's decisions see them: stored clusters as read at the start of the batch,
    the batch's own new clusters, and the merges decided so far (applied to the store with the
    batch's articles)."""

    def __init__(self, indexer: Indexer, canonicals: dict[str, StoredArticle], pending_sides: dict[str, Side]):
        self._indexer = indexer
        self._canonicals = canonicals
        self._pending_sides = pending_sides
        self._merged_into: dict[str, str] = {}
        self._apart: list[frozenset[str]] | None = None  # labelled "different" pairs, read when first needed
        self._labelled: dict[str, str] = {}  # their articles' clusters at the start of the batch

    def resolve(self, cluster_id: str) -> str:
        while cluster_id in self._merged_into:
            cluster_id = self._merged_into[cluster_id]
        return cluster_id

    def cluster_of(self, article: StoredArticle) -> str:
        return self.resolve(article.cluster_id)

    def canonical_side(self, cluster_id: str) -> Side | None:
        side = self._pending_sides.get(cluster_id)
        if side is not None:
            return side
        canon = self._canonicals.get(cluster_id)
        if canon is None:
            canon = self._indexer.store.get_many([cluster_id]).get(cluster_id)
            if canon is None:
                return None
            self._canonicals[cluster_id] = canon
        return self._indexer._side_for(canon)

    def side_of(self, article: StoredArticle) -> Side:
        return self._pending_sides.get(article.id) or self._indexer._side_for(article)

    def kept_apart(self, a: str, b: str) -> bool:
        """Whether a person said that an article of cluster ``a`` and one of ``b`` are different
        stories (``indexer.labels``): the indexer never merges such clusters again."""
        if self._apart is None:  # read once a batch, and only when a merge is considered
            from .labels import different_pairs

            self._apart = list(different_pairs(self._indexer.store.cluster_changes(corrections_only=True)))
            ids = sorted({x for pair in self._apart for x in pair})
            self._labelled = {k: v.cluster_id for k, v in self._indexer.store.get_many(ids).items()} if ids else {}
        want = {a, b}
        for pair in self._apart:
            x, y = tuple(pair)
            if x in self._labelled and y in self._labelled and \
                    {self.resolve(self._labelled[x]), self.resolve(self._labelled[y])} == want:
                return True
        return False

    def merge(self, merges: list[ClusterChange]) -> None:
        for m in merges:
            self._merged_into[m.source] = m.into


def _asks_by_title(side: Side) -> bool:
    return len(side.text.clean_title.strip()) >= SAME_TITLE_MIN_CHARS
