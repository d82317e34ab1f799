"""Articles answered from memory with the semantics of the store questions: the articles decided
earlier in the same batch (not in any store yet), and the articles an Elasticsearch store wrote
that a search may not see before the next refresh. One index serves both, so a copy arriving in
the same batch, or a second after its original, is found exactly as a stored one would be.
"""

from __future__ import annotations

from typing import Iterable, Iterator

import numpy as np

from .base import BandQuery, KnnQuery, StoredArticle, TitleQuery


class MemoryIndex:
    """Articles by id (first write wins), with lookups by exact key, canonical URL, band key (and
    the Hamming bound a ``BandQuery`` carries) and cosine kNN (floor, window, exclusion)."""

    def __init__(self) -> None:
        self.articles: dict[str, StoredArticle] = {}
        self._by_key: dict[str, list[str]] = {}
        self._by_url: dict[str, list[str]] = {}
        self._by_band: dict[int, list[str]] = {}
        self._by_title: dict[str, list[str]] = {}
        self._rows: list[StoredArticle] = []  # articles with a non-zero vector, in row order
        self._vectors: np.ndarray | None = None  # unit rows 0..len(_rows)-1 used; doubled when full

    def __len__(self) -> int:
        return len(self.articles)

    def __iter__(self) -> Iterator[StoredArticle]:
        return iter(self.articles.values())

    def add(self, articles: Iterable[StoredArticle]) -> None:
        for a in articles:
            if a.id in self.articles:
                continue
            self.articles[a.id] = a
            self._by_key.setdefault(a.content_key, []).append(a.id)
            if a.canonical_url:
                self._by_url.setdefault(a.canonical_url, []).append(a.id)
            for band in a.bands:
                self._by_band.setdefault(band, []).append(a.id)
            self._by_title.setdefault(a.title_md5, []).append(a.id)
            self._add_vector(a)

    def _add_vector(self, a: StoredArticle) -> None:
        if a.vector is None:
            return
        vec = np.asarray(a.vector, dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(vec))
        if norm == 0:  # cosine is undefined: never a neighbour (Elasticsearch refuses such vectors)
            return
        n = len(self._rows)
        if self._vectors is None or n == len(self._vectors):
            grown = np.zeros((max(64, 2 * n), len(vec)), dtype=np.float32)
            if self._vectors is not None:
                grown[:n] = self._vectors[:n]
            self._vectors = grown
        self._vectors[n] = vec / norm
        self._rows.append(a)

    def clear(self) -> None:
        self.__init__()

    def with_key(self, keys: Iterable[str]) -> list[StoredArticle]:
        return [self.articles[i] for k in dict.fromkeys(keys) for i in self._by_key.get(k, ())]

    def with_url(self, urls: Iterable[str]) -> list[StoredArticle]:
        return [self.articles[i] for u in dict.fromkeys(urls) if u for i in self._by_url.get(u, ())]

    def bands(self, q: BandQuery) -> list[StoredArticle]:
        found = dict.fromkeys(i for band in q.bands for i in self._by_band.get(band, ()))
        return [a for a in (self.articles[i] for i in found)
                if a.id != q.exclude_id and q.window.contains(a.publish_time) and q.admits(a.simhash)]

    def same_title(self, q: TitleQuery) -> list[StoredArticle]:
        found = [a for a in (self.articles[i] for i in self._by_title.get(q.title_md5, ()))
                 if a.id != q.exclude_id and q.window.contains(a.publish_time)]
        return found[-q.limit:] if q.limit > 0 else []  # the newest, as the stores answer

    def knn(self, q: KnnQuery) -> list[tuple[StoredArticle, float]]:
        if not self._rows:
            return []
        query = np.asarray(q.vector, dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(query))
        if norm == 0:
            return []
        cosines = self._vectors[: len(self._rows)] @ (query / norm)
        hits = []
        for j in np.argsort(-cosines, kind="stable"):
            c = float(cosines[j])
            if c < q.min_score or len(hits) == q.k:
                break
            a = self._rows[j]
            if a.id != q.exclude_id and q.window.contains(a.publish_time):
                hits.append((a, c))
        return hits
