"""Build indexer/data/phrase_fold.txt: Taiwan and mainland wordings of one word folded to one form.

    python bench/build_phrase_fold.py

Taiwan sites repost mainland news converted with Taiwan wording (OpenCC s2twp): 信息 becomes 資訊,
软件 軟體, 肯尼亚 肯亞. Folding characters (cleaning.fold_script) turns 資訊 into 资讯, still another word
than 信息, so the copy's shingles, fingerprint and names no longer meet its original's. Converting
the copy's wording back (OpenCC tw2sp) fixes that copy but breaks another: a mainland article put in
traditional characters only (s2t, as Hong Kong sites do) writes 資訊 for its own 资讯, and tw2sp turns
that into 信息. So both sides are folded: every text, simplified or not, has each word of a pair
replaced by one form, and the two wordings of a word meet whichever way a copy was made.

The pairs are OpenCC's own (TWPhrases and HKPhrases: mainland -> Taiwan or Hong Kong; the Rev
dictionaries the other way; Apache-2.0), read from the installed opencc package's dictionaries with
its opencc_dict tool and written in simplified characters. The words pairs join are one class, and
every word of a class maps to one form of it (``fold_pairs``). Rebuild when opencc changes its
dictionaries; a changed table changes clean text, so raise cleaning.CLEANING_VERSION with it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import opencc

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datasets  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "indexer" / "data" / "phrase_fold.txt"
CONFIG = OUT.with_suffix(".json")  # the OpenCC config cleaning.py loads: it reads OUT
DICTS = ("TWPhrasesRev", "TWPhrases", "HKPhrasesRev", "HKPhrases")  # Taiwan and Hong Kong wordings


def opencc_pairs(name: str) -> list[tuple[str, list[str]]]:
    """(key, [values]) of one of the installed opencc package's dictionaries."""
    clib = Path(opencc.__file__).parent / "clib"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"{name}.txt"
        env = dict(os.environ, LD_LIBRARY_PATH=str(clib / "lib64"))
        subprocess.run([str(clib / "bin" / "opencc_dict"), "-i", str(clib / "share" / "opencc" / f"{name}.ocd2"),
                        "-o", str(out), "-f", "ocd2", "-t", "text"], check=True, env=env)
        rows = [line.rstrip("\n").split("\t") for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(key, values.split(" ")) for key, values in rows]


def fold_pairs(counts: Counter) -> dict[str, str]:
    """Each word (simplified characters) -> the one form of its class: the words OpenCC's pairs join,
    directly or through a chain (接口 -> 介面 and 介面 -> 界面 make 接口, 介面 and 界面 one class), so a
    word folds alike whichever wording a copy used. The form is the class's word most frequent in
    mainland news (``counts``; at a tie a mainland wording), so simplified text changes least; the
    form maps to itself, which
    keeps a longer form whole where a shorter word of its class begins it (土库曼斯坦, 土库曼)."""
    simplified = opencc.OpenCC("tw2s")  # characters only: the words are what this table changes
    parent: dict[str, str] = {}

    def root(word: str) -> str:
        while parent.setdefault(word, word) != word:
            parent[word] = parent[parent[word]]
            word = parent[word]
        return word

    mainland: set[str] = set()  # the words written on the mainland side of a pair
    for name in DICTS:
        reverse = name.endswith("Rev")  # TWPhrasesRev: Taiwan -> mainland; TWPhrases: mainland -> Taiwan
        for key, values in opencc_pairs(name):
            for value in values:
                key_s, value_s = simplified.convert(key).lower(), simplified.convert(value).lower()  # clean text is lower case
                mainland.add(value_s if reverse else key_s)
                a, b = root(key_s), root(value_s)
                parent[a] = b
    classes: dict[str, list[str]] = {}
    for word in list(parent):
        classes.setdefault(root(word), []).append(word)
    folded = {}
    for words in classes.values():
        form = min(words, key=lambda w: (-counts[w], w not in mainland, len(w), w))
        folded.update({word: form for word in words})
    return folded


def mainland_counts(words: set[str]) -> Counter:
    """How often each of ``words`` occurs in the mainland news beside the repository (ccf2019_inews)."""
    finder = re.compile("|".join(sorted(map(re.escape, words), key=len, reverse=True)))
    counts: Counter = Counter()
    for article in datasets.inews_articles():
        counts.update(finder.findall((article["title"] + "\n" + article["content"]).lower()))
    return counts


def settled(folded: dict[str, str], rounds: int = 5) -> dict[str, str]:
    """The table with each form folded by the table itself until nothing changes: a form can hold
    another word of it (执行长 folds to 首席执行官, which holds 执行), and text is folded in one pass,
    so a form left unfolded would differ from the same words written out in the original. A word
    whose form never settles (档名 -> 文件名 -> 文档名, which holds 档名 again) is left out."""
    config = json.loads(CONFIG.read_text(encoding="utf-8"))
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "phrase_fold.txt").write_text("".join(f"{w}\t{f}\n" for w, f in sorted(folded.items())), encoding="utf-8")
            (Path(tmp) / "phrase_fold.json").write_text(json.dumps(config), encoding="utf-8")
            fold = opencc.OpenCC(str(Path(tmp) / "phrase_fold.json"))
            again = {word: fold.convert(form) for word, form in folded.items()}
        if again == folded:
            return folded
        unsettled = {word for word in again if folded.get(word) != again[word]}
        folded = again
    return {word: form for word, form in folded.items() if word not in unsettled}


def main() -> None:
    words = set(fold_pairs(Counter()))
    folded = settled(fold_pairs(mainland_counts(words)))
    OUT.write_text("".join(f"{word}\t{folded[word]}\n" for word in sorted(folded)), encoding="utf-8")
    print(f"{len(folded)} words -> {OUT}")


if __name__ == "__main__":
    main()
