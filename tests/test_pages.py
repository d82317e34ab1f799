"""Whole saved pages as ``content``: one story saved from two sites is one cluster, the page is kept
as given and the stored article says its text was extracted. The measurement over 60 real
articles is bench/pages_check.py."""

import json
from pathlib import Path

from indexer.article import EXTRACTED_FROM_PAGE
from indexer.pipeline import Decision

from .site_pages import COMMENTS, pair_scores, saved_pages

FIXTURES = Path(__file__).parent / "fixtures"
STORIES = 10


def _articles(count):
    with open(FIXTURES / "originals.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle][:count]


def test_one_story_saved_as_pages_of_two_sites_is_one_cluster(make_indexer):
    articles = _articles(STORIES)
    records = saved_pages(articles)
    ix = make_indexer()
    outcomes = ix.index_many(records)
    assert all(o.decision in (Decision.NEW, Decision.DUPLICATE) for o in outcomes), [o.error for o in outcomes]
    stories = [r["id"].split("-", 1)[1] for r in records]
    precision, recall, f1 = pair_scores(stories, [o.cluster_id for o in outcomes])
    # Read whole, the navigation, hot lists and comments each site puts around every story make
    # this 0.67 (half the pairs missed).
    assert f1 >= 0.99, (precision, recall)

    stored = ix.store.get_many([r["id"] for r in records])
    for record in records:
        article = stored[record["id"]]
        assert article.content == record["content"]  # the page is kept as given
        assert article.extra[EXTRACTED_FROM_PAGE] is True
    # the features read the story alone: no sidebar headline, comment or footer line
    first = stored[records[0]["id"]]
    others = {a["title"] for a in articles[1:]}
    assert not any(title in first.clean_body for title in others)
    assert not any(comment in first.clean_body for comment in COMMENTS)
    assert "icp" not in first.clean_body and "热点排行" not in first.clean_body
    assert articles[0]["content"].splitlines()[0][:30] in first.content


def test_text_and_fragments_are_not_marked_as_pages(make_indexer):
    ix = make_indexer(embedder=None)
    ix.index_many([
        {"id": "text", "title": "北京暴雨", "content": "北京今日暴雨，多条道路积水。"},
        {"id": "fragment", "title": "上海晴天", "content": "<div><p>上海今日晴，气温回升。</p><aside>相关：天气</aside></div>"},
    ])
    stored = ix.store.get_many(["text", "fragment"])
    assert all(EXTRACTED_FROM_PAGE not in a.extra for a in stored.values())
    assert stored["fragment"].clean_body == "上海今日晴,气温回升。"


def test_a_page_is_read_past_the_raw_cut_for_plain_bodies():
    """The story of a saved page can sit behind 200 KB of scripts, beyond the raw prefix a body's
    features read (input.feature_max_chars x 8): a page is read further, so its story is found whole."""
    from indexer.cleaning import clean_body
    from indexer.features import RAW_PER_FEATURE_CHAR, text_features
    from indexer.settings import Settings

    from .site_pages import portal_page

    article, *others = _articles(STORIES)
    settings = Settings()
    page = portal_page(article, others).replace("</head>", "<script>" + "var a = 1;" * 20_000 + "</script></head>")
    assert len(page) > settings.input.feature_max_chars * RAW_PER_FEATURE_CHAR
    last_paragraph = clean_body(article["content"]).splitlines()[-1]
    assert text_features(article["title"], page, settings).clean_body.endswith(last_paragraph)
