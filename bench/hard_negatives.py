"""Hard negatives: different stories that read alike.

- Templated reports of another design than ``datasets.templated_reports``: earthquake bulletins,
  match results, earnings notices, number-plate restrictions, air-quality reports, gold prices.
  One family's reports share nearly every word and differ in the figures, places and names that
  make them different news.
- Same kind, different event, from real news: cec_news reports of one category (fire, food
  poisoning, traffic accident, earthquake, terror attack). The corpus holds several reports of
  some incidents (not annotated), so ``distinct_events`` keeps at most one report of a category
  within ``min_days`` of another; two kept reports of one kind that name one place are the
  hardest negatives (issue 12, failure class 3).
"""

from __future__ import annotations

import logging
import random
import re
from datetime import date, datetime, timedelta
from typing import Iterable

# Province-level names: a report placed only in a province is not placed in a city.
PROVINCES = frozenset(
    "天津 河北 山西 辽宁 吉林 黑龙江 江苏 浙江 安徽 福建 江西 山东 河南 湖北 湖南 广东 海南 四川 贵州 云南 陕西 "
    "甘肃 青海 台湾 内蒙古 广西 西藏 宁夏 新疆 香港 澳门".split()
)
_GENERIC_PLACES = frozenset({"中国", "全国", "国内", "我国", "境内", "省", "市", "县", "区"})
_DATE = re.compile(r"(\d{4})\D{1,2}(\d{1,2})\D{1,2}(\d{1,2})")


def report_date(text: str) -> date | None:
    """The date of a cec_news ``date`` field (``2008年04月05日 09:12``, ``2007-7-26``), or None."""
    m = _DATE.search(text or "")
    if not m:
        return None
    try:
        return date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


def _place_name(word: str) -> str:
    return re.sub(r"(省|市|县|区|自治州|州)$", "", word) if len(word) > 2 else word


def lead_place(title: str, body: str) -> str | None:
    """The first place below province level named in the headline, else in the lead (jieba's
    ``ns`` tag), without its 市/县/区 suffix; None when there is none."""
    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)
    for text in (title, body[:150]):
        for word, flag in jieba.posseg.cut(text):
            if flag != "ns":
                continue
            name = _place_name(word)
            if name not in _GENERIC_PLACES and name not in PROVINCES:
                return name
    return None


def distinct_events(reports: Iterable[dict], min_days: int = 10) -> list[dict]:
    """Reports (dicts with ``category``, ``date`` as a ``date``, ``place``) of which no two of one
    category are dated within ``min_days`` of each other, nor undated: such pairs may be one
    incident told by two outlets. Reports sharing a category and place are kept first, so the
    hardest negatives survive. Deterministic: the input order breaks ties."""
    reports = [r for r in reports if r["date"] is not None]
    by_kind_place: dict[tuple, int] = {}
    for r in reports:
        by_kind_place[(r["category"], r["place"])] = by_kind_place.get((r["category"], r["place"]), 0) + 1
    order = sorted(range(len(reports)), key=lambda i: (-(by_kind_place[(reports[i]["category"], reports[i]["place"])] if reports[i]["place"] else 0), i))
    kept: list[dict] = []
    for i in order:
        r = reports[i]
        if any(k["category"] == r["category"] and abs((k["date"] - r["date"]).days) < min_days for k in kept):
            continue
        kept.append(r)
    return sorted(kept, key=lambda r: reports.index(r))


def same_place_pairs(reports: list[dict]) -> list[tuple[str, str]]:
    """Id pairs of reports of one category naming one place: different events, told alike."""
    out = []
    for i, a in enumerate(reports):
        for b in reports[i + 1 :]:
            if a["place"] and a["category"] == b["category"] and a["place"] == b["place"]:
                out.append((a["id"], b["id"]))
    return out


# ---- templated reports ----------------------------------------------------------------------
_QUAKE_PLACES = ["四川雅安市芦山县", "云南大理州漾濞县", "新疆喀什地区伽师县", "西藏日喀则市定日县", "甘肃甘南州夏河县",
                 "青海海西州德令哈市", "台湾花莲县海域", "河北唐山市古冶区", "四川宜宾市长宁县", "云南昭通市鲁甸县"]
_TEAMS = ["北京国安", "上海海港", "山东泰山", "成都蓉城", "浙江队", "武汉三镇", "天津津门虎", "长春亚泰", "河南队", "深圳新鹏城"]
_PLAYERS = ["张玉宁", "武磊", "韦世豪", "谢鹏飞", "王钰栋", "费南多", "克雷桑", "泽卡"]
_FIRMS = ["中国中铁", "海康威视", "三一重工", "恒瑞医药", "紫金矿业", "牧原股份", "长江电力", "京东方A", "中信证券", "药明康德"]
_CITIES = ["天津", "石家庄", "太原", "沈阳", "长春", "哈尔滨", "南昌", "济南", "福州", "合肥", "贵阳", "昆明", "兰州", "银川"]
_BRANDS = ["周大福", "老凤祥", "周生生", "六福珠宝", "菜百首饰", "中国黄金"]
_WEEKDAYS = "一二三四五六日"


def templated_reports_v2(rng: random.Random, per_family: int, start: datetime, days: int = 30) -> list[dict]:
    """``per_family`` reports of each family, published over ``days`` from ``start``. Each is
    its own story: {title, content, family, publish_time}."""
    out = []

    def add(family: str, when: datetime, title: str, content: str) -> None:
        out.append({"title": title, "content": content, "family": family, "publish_time": when.isoformat()})

    for _ in range(per_family):
        when = start + timedelta(minutes=rng.randint(0, days * 1440))
        place, mag = rng.choice(_QUAKE_PLACES), round(rng.uniform(3.0, 6.5), 1)
        lat, lon, depth = round(rng.uniform(22, 42), 2), round(rng.uniform(78, 122), 2), rng.randint(5, 30)
        add("quake", when, f"{place}发生{mag}级地震",
            f"中国地震台网正式测定：{when:%m月%d日}{rng.randint(0, 23)}时{rng.randint(0, 59)}分在{place}（北纬{lat}度，东经{lon}度）"
            f"发生{mag}级地震，震源深度{depth}千米。\n震中周边{rng.choice([5, 10, 20])}公里内平均海拔约{rng.randint(500, 4500)}米。"
            f"据当地应急管理部门消息，目前暂无人员伤亡报告。")

        when = start + timedelta(minutes=rng.randint(0, days * 1440))
        home, away = rng.sample(_TEAMS, 2)
        s1, s2, rnd = rng.randint(0, 4), rng.randint(0, 4), rng.randint(1, 30)
        verb = "战胜" if s1 > s2 else ("负于" if s1 < s2 else "战平")
        add("match", when, f"中超第{rnd}轮：{home}{s1}比{s2}{verb}{away}",
            f"{when:%m月%d日}晚，中超联赛第{rnd}轮一场焦点战在{home}主场进行。\n经过90分钟激烈角逐，{home}以{s1}比{s2}{verb}{away}。"
            f"{rng.choice(_PLAYERS)}第{rng.randint(10, 85)}分钟破门。赛后{home}积{rng.randint(10, 60)}分，暂列积分榜第{rng.randint(1, 16)}位。")

        when = start + timedelta(minutes=rng.randint(0, days * 1440))
        firm, rev, growth = rng.choice(_FIRMS), round(rng.uniform(20, 3000), 2), round(rng.uniform(-30, 60), 2)
        profit, pgrowth = round(rev * rng.uniform(0.02, 0.3), 2), round(rng.uniform(-50, 80), 2)
        add("earnings", when, f"{firm}：前三季度净利润同比{'增长' if pgrowth >= 0 else '下降'}{abs(pgrowth)}%",
            f"{firm}{when:%m月%d日}晚间发布三季报。公告显示，公司前三季度实现营业收入{rev}亿元，同比{'增长' if growth >= 0 else '下降'}{abs(growth)}%；"
            f"归属于上市公司股东的净利润{profit}亿元，同比{'增长' if pgrowth >= 0 else '下降'}{abs(pgrowth)}%。\n"
            f"基本每股收益{round(rng.uniform(0.05, 5), 3)}元。")

        when = start + timedelta(minutes=rng.randint(0, days * 1440))
        city, (a, b) = rng.choice(_CITIES), rng.choice([(1, 6), (2, 7), (3, 8), (4, 9), (5, 0)])
        add("plates", when, f"{city}明日机动车尾号限行{a}和{b}",
            f"{city}市公安交管部门提示：{(when + timedelta(days=1)):%m月%d日}（星期{_WEEKDAYS[(when + timedelta(days=1)).weekday()]}），"
            f"本市机动车尾号限行{a}和{b}，限行时间为7时至20时，范围为绕城高速以内道路。请广大驾驶人合理安排出行。")

        when = start + timedelta(minutes=rng.randint(0, days * 1440))
        city, aqi = rng.choice(_CITIES), rng.randint(20, 260)
        level = "优" if aqi <= 50 else "良" if aqi <= 100 else "轻度污染" if aqi <= 150 else "中度污染" if aqi <= 200 else "重度污染"
        add("air", when, f"{city}{when:%d}日空气质量{level}，AQI为{aqi}",
            f"{city}市生态环境局发布消息，{when:%m月%d日}全市空气质量指数（AQI）为{aqi}，空气质量{level}，"
            f"首要污染物为{rng.choice(['PM2.5', 'PM10', '臭氧', '二氧化氮'])}。{'建议儿童、老年人减少户外活动。' if aqi > 100 else '各类人群可正常活动。'}")

        when = start + timedelta(minutes=rng.randint(0, days * 1440))
        brand, other = rng.sample(_BRANDS, 2)
        price, delta = rng.randint(560, 780), rng.randint(1, 15)
        up = rng.random() < 0.5
        add("gold", when, f"{when:%m月%d日}金价{'上涨' if up else '下跌'}：{brand}足金报{price}元/克",
            f"{when:%m月%d日}，国内品牌金店黄金饰品价格{'上涨' if up else '下跌'}。其中，{brand}足金饰品报价{price}元/克，较前一日{'上涨' if up else '下跌'}{delta}元/克；"
            f"{other}足金饰品报价{price + rng.randint(-8, 8)}元/克。业内人士提醒，消费者购买金饰需理性。")
    return out
