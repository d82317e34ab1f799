"""Loaders for the evaluation data beside the repository (``../shared/data``) and the synthetic
repost / templated-report sets built from it. Used by bench/quality.py; nothing here ships."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import random
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

from indexer.tuning import linked_groups
from splits import cec_key, check_part, ecom_key, part_of, sohu_key, story_key, wsdm_key

DATA = Path(os.environ.get("NEWSDEDUP_EVAL_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
CST = timezone(timedelta(hours=8))


def sohu_pairs(name: str = "short_short_B_train.jsonl", label: str = "labelB", part: str | None = None):
    """(source, target, same) of a sohu2021 pair file; ``part``: only the pairs of that split part
    (splits.sohu_key), None for all."""
    if part is not None:
        check_part(part)
    with open(DATA / "sohu2021_short_pairs" / name, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            source, target = row["source"].strip(), row["target"].strip()
            if part is None or part_of(sohu_key(source, target)) == part:
                yield source, target, row[label] == "1"


def wsdm_pairs(part: str | None = None):
    """(claim headline, other headline, label) of the WSDM Cup 2019 fake-news pairs: ``agreed`` (the
    other tells the same claim), ``disagreed`` (it refutes the claim) or ``unrelated``; ``part``: only
    the claims of that split part (splits.wsdm_key), a claim being every headline linked to it by a
    pair: one rumour stands under several ``tid1``s that share ``tid2`` headlines (57 and 61, one
    颈椎病 claim, both paired with 60), so splitting by ``tid1`` put one claim in both parts."""
    import csv

    if part is not None:
        check_part(part)
    with open(DATA / "wsdm2019_fakenews_pairs" / "train-small.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    claim = linked_groups((row["tid1"], row["tid2"]) for row in rows)
    for row in rows:
        if part is None or part_of(wsdm_key(claim[row["tid1"]])) == part:
            yield row["title1_zh"].strip(), row["title2_zh"].strip(), row["label"]


def ecom_articles(part: str | None = None):
    """(article, event_id) of ecom2022 dev; ``part``: only the events of that split part."""
    if part is not None:
        check_part(part)
    docs = json.loads((DATA / "ecom2022_event_clusters" / "dev.doc.json").read_text(encoding="utf-8"))
    for d in docs:
        doc, event = d["Doc"], d["Descriptor"]["event_id"]
        if part is not None and part_of(ecom_key(event)) != part:
            continue
        body = "".join(s["sent_text"] for s in sorted(doc["content"], key=lambda s: s["sent_idx"]))
        yield {"id": f"ecom-{doc['doc_id']}", "title": doc["title"], "content": body}, event


def inews_articles():
    with open(DATA / "ccf2019_inews" / "inews.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            yield {"id": f"inews-{row['id']}", "title": row["title"] or "", "content": row["content"] or ""}


def cec_articles():
    with open(DATA / "cec_news" / "cec_raw_news.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            yield {"id": f"cec-{row['id']}", "title": row["title"], "content": row["body"]}


def cec_reports():
    """cec_news articles with their category (火灾, 食物中毒, 交通事故, 地震, 恐怖袭击) and the raw
    ``date`` text, as {id, title, content, category, date_text}."""
    with open(DATA / "cec_news" / "cec_raw_news.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            yield {"id": f"cec-{row['id']}", "title": row["title"], "content": row["body"],
                   "category": row["category"], "date_text": row.get("date") or ""}


@functools.lru_cache(maxsize=1)
def _cec_split_keys() -> dict[str, str]:
    import hard_negatives

    return {r["id"]: cec_key(r["category"], hard_negatives.lead_place(r["title"], r["content"]), r["id"])
            for r in cec_reports()}


def split_key(article_id: str) -> str:
    """The split key of a real article, wherever a set uses it: its story (splits.story_key), and for
    a cec_news report its kind of emergency and place (splits.cec_key), the key its use as a hard
    negative has, so that one report never serves as a tune set's seed and a test set's negative."""
    return _cec_split_keys()[article_id] if article_id.startswith("cec-") else story_key(article_id)


def embedded_texts(records, settings) -> list[str]:
    """What the indexer embeds for each record: clean title + body cut to embedding.max_chars."""
    from indexer.features import embedding_text, text_features

    return [embedding_text(f.clean_title, f.clean_body, settings.embedding.max_chars)
            for f in (text_features(r["title"], r["content"], settings) for r in records)]

# ---- synthetic reposts of real articles ---------------------------------------------------------
_TITLE_TAGS = ["【快讯】", "【转载】", "【关注】", "突发！", "重磅：", "〔热点〕", "【独家】", "最新！"]
_SITE_SUFFIX = ["_新浪新闻", " - 网易新闻", "|凤凰网", "_腾讯新闻", "_手机搜狐网"]
_BOILER_HEAD = ["原标题：{title}", "来源：{site}", "本文转载自{site}"]
_BOILER_TAIL = ["责任编辑：{name}", "编辑：{name}", "审核：{name}", "点击阅读全文", "分享到微信朋友圈", "版权所有，未经授权不得转载", "来源：{site}"]
_SITES = ["人民网", "新华网", "澎湃新闻", "中国新闻网", "央视新闻", "环球网", "界面新闻", "每日经济新闻"]
_NAMES = ["张伟", "王芳", "李娜", "刘洋", "陈静", "杨帆"]
_SYNONYMS = [("表示", "称"), ("目前", "当前"), ("进行", "开展"), ("已经", "已"), ("但是", "但"), ("因为", "由于"), ("随后", "之后"), ("立即", "马上")]


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n+", text) if p.strip()]


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[。！？!?])", text) if s.strip()]


def repost_variants(article: dict, rng: random.Random, when: datetime) -> list[dict]:
    """Reposts the way users meet them: verbatim, retitled, boilerplate and HTML around the body,
    trimmed, lightly rewritten, and combinations."""
    title, body = article["title"], article["content"]
    site, name = rng.choice(_SITES), rng.choice(_NAMES)
    paras = _paragraphs(body)
    sents = _sentences(body.replace("\n", ""))
    variants = []

    def emit(kind, t, c):
        variants.append({"title": t, "content": c, "kind": kind})

    emit("verbatim", title, body)
    emit("retitled", rng.choice(_TITLE_TAGS) + title + rng.choice(["", rng.choice(_SITE_SUFFIX)]), body)
    head = rng.choice(_BOILER_HEAD).format(title=title, site=site)
    tail = "\n".join(t.format(name=name, site=site) for t in rng.sample(_BOILER_TAIL, 3))
    emit("boilerplate_html", title, f"<div class='article'><p>{head}</p>" + "".join(f"<p>{p}</p>" for p in paras) + f"<p>{tail}</p><script>track()</script></div>")
    if len(sents) >= 4:
        keep = max(2, int(len(sents) * rng.uniform(0.6, 0.85)))
        emit("trimmed", title, "".join(sents[:keep]))
    if len(sents) >= 6:
        drop = set(rng.sample(range(1, len(sents) - 1), k=max(1, len(sents) // 6)))
        rewritten = "".join(s for i, s in enumerate(sents) if i not in drop)
        for a, b in _SYNONYMS:
            if rng.random() < 0.5:
                rewritten = rewritten.replace(a, b)
        emit("rewritten", rng.choice(_TITLE_TAGS) + title, rewritten)
    full_width = body.replace(",", "，").replace(":", "：").replace("(", "（").replace(")", "）")
    emit("mixed", rng.choice(_TITLE_TAGS) + title, f"来源：{site}\n" + "\n".join(_paragraphs(full_width)[: max(1, len(paras) - 1)]) + f"\n责任编辑：{name}")
    for i, v in enumerate(variants):
        v["publish_time"] = (when + timedelta(hours=rng.uniform(0.5, 72))).isoformat()
    return variants


def distinct_seeds(limit: int, min_chars: int = 200, seed: int = 7, part: str | None = None,
                   sources=("inews", "cec"), exclude=frozenset()) -> list[dict]:
    """Real articles with no exact or near copy among themselves (checked by character 5-gram
    containment), so each one can stand for its own story. ``part``: only articles whose story
    falls in that split part (``split_key``); ``exclude``: ids never to pick."""
    rng = random.Random(seed)
    loaders = {"inews": inews_articles, "cec": cec_articles}
    pool = [a for source in sources for a in loaders[source]()
            if len(a["content"]) >= min_chars and a["title"].strip() and a["id"] not in exclude
            and (part is None or part_of(split_key(a["id"])) == check_part(part))]
    rng.shuffle(pool)
    kept, sizes, titles, bodies = [], [], set(), set()
    postings: dict[str, list[int]] = {}  # 5-gram -> kept articles holding it
    for a in pool:
        compact = re.sub(r"\W+", "", a["content"])[:1500]
        key = hashlib.md5(compact.encode()).hexdigest()
        if key in bodies or a["title"] in titles:
            continue
        g = {compact[i : i + 5] for i in range(0, max(1, len(compact) - 4))}
        shared: dict[int, int] = {}
        for gram in g:
            for j in postings.get(gram, ()):
                shared[j] = shared.get(j, 0) + 1
        if any(count / min(len(g), sizes[j]) > 0.3 for j, count in shared.items()):
            continue
        for gram in g:
            postings.setdefault(gram, []).append(len(kept))
        kept.append(a)
        sizes.append(len(g))
        titles.add(a["title"])
        bodies.add(key)
        if len(kept) >= limit:
            break
    return kept


# ---- templated reports (different news that read alike) -------------------------------------------
_COMPANIES = ["贵州茅台", "五粮液", "宁德时代", "比亚迪", "招商银行", "中国平安", "隆基绿能", "海天味业", "伊利股份", "万科A", "格力电器", "美的集团"]
_CITIES = ["北京", "上海", "广州", "深圳", "杭州", "南京", "武汉", "成都", "重庆", "西安", "长沙", "郑州"]
_PRODUCTS = ["猪肉", "鸡蛋", "大白菜", "西红柿", "黄瓜", "土豆", "苹果", "香蕉", "大米", "食用油"]
_COLOURS = ["蓝色", "黄色", "橙色", "红色"]
_CURRENCIES = ["美元", "欧元", "日元", "英镑", "港元", "澳元"]


def templated_reports(rng: random.Random, per_family: int, day: datetime) -> list[dict]:
    out = []

    def add(family, title, content):
        out.append({"title": title, "content": content, "family": family,
                    "publish_time": (day + timedelta(minutes=rng.randint(0, 1440))).isoformat()})

    for _ in range(per_family):
        c, up = rng.choice(_COMPANIES), rng.random() < 0.5
        pct, price = round(rng.uniform(0.3, 9.9), 2), round(rng.uniform(5, 2000), 2)
        d = "上涨" if up else "下跌"
        add("stock", f"{c}今日{d}{pct}%，收报{price}元",
            f"{day:%m月%d日}，A股三大指数震荡整理。{c}今日{d}{pct}%，收报{price}元，成交额{round(rng.uniform(1, 90), 1)}亿元，换手率{round(rng.uniform(0.1, 5), 2)}%。"
            f"从资金流向看，主力资金净{'流入' if up else '流出'}{round(rng.uniform(0.1, 9), 2)}亿元。分析人士认为，短期股价仍将以震荡为主，投资者需注意风险。")
        city, colour, mm = rng.choice(_CITIES), rng.choice(_COLOURS), rng.randint(30, 250)
        add("weather", f"{city}市气象台发布暴雨{colour}预警信号",
            f"{city}市气象台{day:%d}日{rng.randint(6, 22)}时{rng.choice(['00', '30'])}分发布暴雨{colour}预警信号：预计未来{rng.choice([3, 6, 12])}小时内，"
            f"{city}市大部分地区将出现强降雨，累计雨量可达{mm}毫米以上，并伴有雷电和短时大风。请市民注意防范，尽量减少外出。")
        p, price, pct = rng.choice(_PRODUCTS), round(rng.uniform(1, 40), 2), round(rng.uniform(0.5, 15), 1)
        add("price", f"本周{p}批发价格{'上涨' if up else '下降'}{pct}%",
            f"据农业农村部监测，本周全国农产品批发市场{p}平均价格为每公斤{price}元，环比{'上涨' if up else '下降'}{pct}%，同比{'上涨' if rng.random() < 0.5 else '下降'}{round(rng.uniform(0.5, 20), 1)}%。"
            f"业内人士表示，近期{p}供应总体充足，价格波动主要受天气和运输等因素影响。")
        issue = f"2024{rng.randint(10, 150):03d}"
        reds = " ".join(f"{n:02d}" for n in sorted(rng.sample(range(1, 34), 6)))
        add("lottery", f"双色球第{issue}期开奖结果公布",
            f"中国福利彩票双色球第{issue}期开奖结果出炉，红球号码为{reds}，蓝球号码为{rng.randint(1, 16):02d}。本期一等奖中出{rng.randint(1, 20)}注，"
            f"单注奖金{rng.randint(500, 1000)}万元；二等奖中出{rng.randint(50, 300)}注，单注奖金{rng.randint(10, 40)}万元。奖池滚存{round(rng.uniform(10, 30), 2)}亿元。")
        cur, pts = rng.choice(_CURRENCIES), rng.randint(5, 300)
        add("fx", f"人民币对{cur}汇率中间价{'上调' if up else '下调'}{pts}个基点",
            f"中国外汇交易中心公布，{day:%m月%d日}银行间外汇市场人民币汇率中间价为1{cur}对人民币{round(rng.uniform(0.04, 9.5), 4)}元，较前一交易日{'上调' if up else '下调'}{pts}个基点。"
            f"市场人士认为，近期人民币汇率在合理均衡水平上保持基本稳定。")
        flight, mins = f"{rng.choice(['CA', 'MU', 'CZ', 'HU'])}{rng.randint(1000, 9999)}", rng.randint(30, 300)
        src, dst = rng.sample(_CITIES, 2)
        add("flight", f"{flight}航班延误{mins}分钟",
            f"受{rng.choice(['天气', '流量控制', '机械故障'])}影响，原定{day:%d}日{rng.randint(6, 22)}时从{src}飞往{dst}的{flight}航班延误{mins}分钟。航空公司已为旅客提供餐食和改签服务，请旅客留意机场广播。")
    return out


def repost_set(n_seeds: int = 300, seed: int = 11, per_family: int = 15, part: str | None = None):
    """Seeds + their reposts + templated reports, each record with a truth label. ``part``: seeds
    and templated reports of that split part only (the seeds are drawn from it, so a part's set
    has ``n_seeds`` seeds too); None: the whole set as it was before the split."""
    rng = random.Random(seed)
    t0 = datetime(2024, 3, 1, 8, tzinfo=CST)
    records, truth = [], {}
    for i, a in enumerate(distinct_seeds(n_seeds, part=part)):
        when = t0 + timedelta(hours=rng.uniform(0, 24 * 30))
        base = {"id": a["id"], "title": a["title"], "content": a["content"], "publish_time": when.isoformat(), "kind": "original"}
        group = [base] + [dict(v, id=f"{a['id']}~{k}") for k, v in enumerate(repost_variants(a, rng, when))]
        for r in group:
            truth[r["id"]] = a["id"]
        records.extend(group)
    for j, t in enumerate(templated_reports(rng, per_family, t0 + timedelta(days=5))):
        rid = f"tpl-{t['family']}-{j}"
        if part is not None and part_of(story_key(rid)) != part:
            continue
        records.append(dict(t, id=rid, kind="template"))
        truth[rid] = rid
    rng.shuffle(records)
    return records, truth
