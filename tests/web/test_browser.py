"""The browser view in a real browser: Debian's chromium driven by Playwright (no browser is
downloaded). Log in with the token, open each page, filter, search, open a cluster, compare a
member with the canonical, split an article out, merge two clusters; after each step the page
and the store agree. No dialog opens and no page is retitled on the hostile story.

Set NEWSDEDUP_UI_SCREENSHOTS=DIR to keep a screenshot of each page there (docs/ui/ holds them).
Without chromium the test is skipped, unless NEWSDEDUP_REQUIRE_BROWSER=1 (as in .ci/run)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.daemon.conftest import read_store

from .conftest import TOKEN

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--disable-dev-shm-usage"]


@pytest.fixture
def browser_page():
    if not Path(CHROMIUM).exists():
        if os.environ.get("NEWSDEDUP_REQUIRE_BROWSER"):
            pytest.fail(f"no chromium at {CHROMIUM} (apt-get install -y chromium)")
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900}, locale="zh-CN")
        page.set_default_timeout(20_000)
        events: list[str] = []
        page.on("dialog", lambda d: (events.append(f"dialog: {d.message}"), d.dismiss()))
        page.on("console", lambda m: events.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
        page.events = events
        yield page
        browser.close()


def _shot(page, name: str) -> None:
    where = os.environ.get("NEWSDEDUP_UI_SCREENSHOTS")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(where) / f"{name}.png"), full_page=True)


def _clusters_of(store) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for a in read_store(store):
        out.setdefault(a.cluster_id, set()).add(a.id)
    return out


def _row_ids(page, table: str, attr: str) -> list[str]:
    return page.locator(f"#{table} tbody tr[{attr}]").evaluate_all(f"rows => rows.map(r => r.getAttribute('{attr}'))")


def test_browse_filter_search_split_and_merge_in_chromium(browser_page, token_daemon):
    page, d = browser_page, token_daemon
    # log in once: every page needs the session
    page.goto(d.url + "/ui/clusters/s01")
    assert page.url.startswith(d.url + "/ui/login")
    _shot(page, "login")
    page.fill("input[name=token]", TOKEN)
    page.fill("input[name=name]", "编辑 李")
    page.click("form.login button")
    page.wait_for_url(d.url + "/ui/clusters/s01")
    cookie = next(c for c in page.context.cookies() if c["name"] == "newsdedup_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert TOKEN not in page.content()

    # the clusters list: largest first, paged, filtered, searched
    page.goto(d.url + "/ui/clusters")
    ids = _row_ids(page, "clusters", "data-cluster")
    assert len(ids) == 25 and ids[0] == "s01"
    assert page.locator("#clusters tbody tr").first.locator("td").first.inner_text() == "3"
    _shot(page, "clusters")
    page.click("#next-page")
    assert len(_row_ids(page, "clusters", "data-cluster")) == 8
    page.goto(d.url + "/ui/clusters")
    page.select_option("select[name=reason]", "exact")
    page.click("#filters button")
    assert set(_row_ids(page, "clusters", "data-cluster")) == {"s01", "s02", "s03", "evil"}
    page.fill("input[name=q]", "第2届")
    page.click("#filters button")
    assert _row_ids(page, "clusters", "data-cluster") == ["s02"]
    page.goto(d.url + "/ui/clusters")
    page.fill("input[name=since]", "2024-03-12")
    page.fill("input[name=until]", "2024-03-12")
    page.click("#filters button")
    dated = _row_ids(page, "clusters", "data-cluster")
    assert "evil" in dated and "s01" not in dated and "s02" in dated

    # the hostile story: shown as text, nothing runs
    page.goto(d.url + "/ui/clusters/evil")
    assert "<script>alert('title')</script>台风“海燕”" in page.inner_text("#cluster-title")
    assert page.title().startswith("Cluster evil")
    assert page.locator("a[href^='javascript']").count() == 0
    page.goto(d.url + "/ui/articles/evil")
    assert "<img src=x onerror=alert(2)>" in page.inner_text("#article-title")

    # one cluster: members on a timeline, with reason, score and evidence
    page.goto(d.url + "/ui/clusters")
    page.click("#clusters a[href='/ui/clusters/s01']")
    page.wait_for_url(d.url + "/ui/clusters/s01")
    assert _row_ids(page, "members", "data-article") == ["s01", "s01-a", "s01-b"]
    assert page.locator("svg.timeline circle").count() == 3
    row = page.locator("#members tr[data-article='s01-a']")
    assert "exact" in row.inner_text() and "hamming 0" in row.inner_text()
    _shot(page, "cluster")
    row.locator("a.compare").click()
    page.wait_for_url(d.url + "/ui/clusters/s01/compare/s01-a")
    assert page.inner_text("#shared-ratio") == "100%"
    assert page.locator("#side-by-side .shared").count() >= 2
    page.goto(d.url + "/ui/clusters/s05")
    assert "near" in page.locator("#members tr[data-article='s05-n']").inner_text()
    page.locator("#members tr[data-article='s05-n'] a.compare").click()
    page.wait_for_url(d.url + "/ui/clusters/s05/compare/s05-n")
    assert 80 <= int(page.inner_text("#shared-ratio").rstrip("%")) < 100
    differs = page.locator("#side-by-side section").nth(1).locator(".differs").all_inner_texts()
    assert [t.strip() for t in differs] == ["新华社电", "记者 张明"], differs
    _shot(page, "compare")
    page.goto(d.url + "/ui/articles/s01-b")
    assert "Duplicate (exact" in page.inner_text("#decision")
    assert "s01" in _row_ids(page, "candidates", "data-candidate")
    _shot(page, "article")
    page.goto(d.url + "/ui/overview")
    assert page.locator("#chart-per-day rect").count() >= 3
    assert page.locator("#chart-per-source rect").count() >= 4
    assert page.locator("#chart-largest rect").count() >= 10
    _shot(page, "overview")

    # split s01-b out of s01: the page and the store show it at once
    page.goto(d.url + "/ui/clusters/s01")
    page.locator("#members tr[data-article='s01-b'] form.split button").click()
    page.wait_for_url(d.url + "/ui/clusters/s01?done=split")
    assert page.inner_text("#cluster-size") == "2" and page.locator("#done").is_visible()
    assert _clusters_of(d.store)["s01-b"] == {"s01-b"}
    # split s01-a into cluster s04 (a person names where it belongs)
    page.locator("#members tr[data-article='s01-a'] input[name=into]").fill("s04")
    page.locator("#members tr[data-article='s01-a'] form.split button").click()
    page.wait_for_url(d.url + "/ui/clusters/s04?done=split")
    assert set(_row_ids(page, "members", "data-article")) == {"s04", "s01-a"}
    assert _clusters_of(d.store)["s04"] == {"s04", "s01-a"}

    # merge s03 into s02
    page.goto(d.url + "/ui/clusters/s02")
    page.fill("#merge-form input[name=from]", "s03")
    page.click("#merge-form button")
    page.wait_for_url(d.url + "/ui/clusters/s02?done=merge")
    assert set(_row_ids(page, "members", "data-article")) == {"s02", "s02-a", "s03", "s03-a"}
    assert page.locator("#changes li").count() == 1 and "编辑 李" in page.inner_text("#changes")
    assert _clusters_of(d.store)["s02"] == {"s02", "s02-a", "s03", "s03-a"}
    _shot(page, "cluster-after-merge")
    assert page.events == [], page.events  # no dialog, no script error, no CSP report, nothing missing
    # a mistake shows an error page and changes nothing
    page.goto(d.url + "/ui/clusters/s02")
    page.fill("#merge-form input[name=from]", "no-such-cluster")
    page.click("#merge-form button")
    assert "no such cluster" in page.inner_text("#error-message")

    labels = d.request("GET", "/v1/labels", headers={"Authorization": f"Bearer {TOKEN}"}).json()["labels"]
    assert [(x["a"], x["b"], x["label"]) for x in labels] == [
        ("s01-b", "s01", 0), ("s01-a", "s01", 0), ("s01-a", "s04", 1), ("s03", "s02", 1)]
    assert all(x["by"] == "编辑 李" for x in labels)
    assert TOKEN not in d.log_text()
