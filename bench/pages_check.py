"""Whole saved pages: is one story saved from two sites one cluster?

Takes real articles from ccf2019_inews (distinct ones: each is a new cluster when its plain text is
ingested), saves each as two whole pages on two site templates (tests/site_pages.py: navigation,
a hot-list sidebar and recommendations with the other stories' headlines and leads, comments,
footer, scripts), ingests all pages through ``Indexer.index_many`` with default settings and the
default embedding model, and prints the pairwise precision, recall and F1 of the clusters against
the stories. ``--off`` reads the pages as before main-content extraction (all visible text), for a
before/after in one run:

    python bench/pages_check.py [--articles 60] [--off]

Reads ../shared/data (see bench/datasets.py).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import datasets  # noqa: E402
import indexer.cleaning  # noqa: E402
from indexer.features import Featurizer  # noqa: E402
from indexer.features.embedding import UseM3Embedder  # noqa: E402
from indexer.features.simhash import FINGERPRINT_LAYOUT  # noqa: E402
from indexer.html import html_to_text  # noqa: E402
from indexer.pipeline import Decision, Indexer  # noqa: E402
from indexer.settings import Settings  # noqa: E402
from indexer.store.sqlite import SqliteStore  # noqa: E402
from tests.site_pages import pair_scores, saved_pages  # noqa: E402

MIN_BODY, MAX_BODY = 200, 5000  # news-sized bodies; the corpus also holds one-line stubs and dumps


def new_indexer(root: Path, name: str, embedder) -> Indexer:
    settings = Settings().replace(**{"store.path": str(root / name)})
    store = SqliteStore(settings.store.path, vector_dims=embedder.dims, embedding_model=embedder.name,
                        fingerprint_layout=FINGERPRINT_LAYOUT, bands=settings.simhash.bands)
    return Indexer(settings, store, Featurizer(settings, embedder))


def distinct_articles(count: int, root: Path, embedder) -> list[dict]:
    """The first ``count`` news-sized plain-text inews articles that are each a new cluster."""
    pool = [a for a in datasets.inews_articles()
            if MIN_BODY <= len(a["content"]) <= MAX_BODY and a["title"].strip() and "<" not in a["content"]][: count * 3]
    ix = new_indexer(root, "plain", embedder)
    try:
        outcomes = ix.index_many(pool)
    finally:
        ix.close()
    chosen = [a for a, o in zip(pool, outcomes) if o.decision is Decision.NEW][:count]
    if len(chosen) < count:
        raise SystemExit(f"only {len(chosen)} distinct articles found")
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--articles", type=int, default=60)
    parser.add_argument("--off", action="store_true", help="also measure without main-content extraction")
    args = parser.parse_args()
    embedder = UseM3Embedder()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        articles = distinct_articles(args.articles, root, embedder)
        records = saved_pages(articles)
        stories = [r["id"].split("-", 1)[1] for r in records]
        modes = [("main content", indexer.cleaning.page_text)]
        if args.off:
            modes.insert(0, ("whole page text", html_to_text))
        for label, read in modes:
            indexer.cleaning.page_text = read  # the reading clean_body gives HTML content
            ix = new_indexer(root, label.replace(" ", "-"), embedder)
            started = time.perf_counter()
            try:
                outcomes = ix.index_many(records)
            finally:
                ix.close()
            elapsed = time.perf_counter() - started
            precision, recall, f1 = pair_scores(stories, [o.cluster_id for o in outcomes])
            found = sum(outcomes[i].cluster_id == outcomes[i + 1].cluster_id for i in range(0, len(records), 2))
            print(f"{label:16s} {len(articles)} stories x 2 pages: pairs found {found}/{len(articles)}, "
                  f"precision {precision:.3f} recall {recall:.3f} F1 {f1:.3f} ({elapsed:.1f} s)")


if __name__ == "__main__":
    main()
