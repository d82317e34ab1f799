"""Write indexer/data/regional_phrases.txt: Taiwan and Hong Kong words and the mainland words they
stand for, as groups of synonyms in simplified characters.

A Taiwan site that converts mainland news with OpenCC's s2twp (or writes it in its own vocabulary)
turns 软件 into 軟體, 项目 into 專案 and 网络 into 網路. Folded to simplified characters these are
still other words (软体, 专案, 网路), which the templated-report guard would read as substituted
names. The list is made from OpenCC's own phrase dictionaries (TWPhrases and HKPhrases, Apache-2.0,
shipped in the ``opencc`` wheel as .ocd2 files), exported with the wheel's ``opencc_dict`` tool:

    python scripts/regional_phrases.py

Each line holds one group: its canonical word first (the shortest mainland word of the group), then
every other word of the group, tab-separated.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys
import tempfile

import opencc

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from indexer.cleaning import fold_script  # noqa: E402
from indexer.tuning import linked_groups  # noqa: E402

DICTIONARIES = ("TWPhrases", "HKPhrases")
OUT = pathlib.Path(__file__).resolve().parents[1] / "indexer" / "data" / "regional_phrases.txt"


def exported(name: str, workdir: pathlib.Path) -> list[tuple[str, list[str]]]:
    """One OpenCC phrase dictionary as (mainland phrase, [regional phrases]) rows."""
    clib = pathlib.Path(opencc.__file__).parent / "clib"
    out = workdir / f"{name}.txt"
    subprocess.run([str(clib / "bin" / "opencc_dict"), "-i", str(clib / "share" / "opencc" / f"{name}.ocd2"),
                    "-o", str(out), "-f", "ocd2", "-t", "text"], check=True)
    rows = []
    for line in out.read_text(encoding="utf-8").splitlines():
        key, values = line.split("\t")
        rows.append((key, values.split(" ")))
    return rows


def synonym_groups(rows: list[tuple[str, list[str]]]) -> list[list[str]]:
    """Union of each mainland word with its regional words, all folded to simplified characters."""
    mainland, links = set(), []
    for key, values in rows:
        m = fold_script(key)
        mainland.add(m)
        links += [(m, r) for r in map(fold_script, values) if r != m]
    groups: dict[str, list[str]] = {}
    for word, group in linked_groups(links).items():
        groups.setdefault(group, []).append(word)
    out = []
    for words in groups.values():
        canonical = min((w for w in words if w in mainland), key=lambda w: (len(w), w), default=min(words))
        out.append([canonical, *sorted(w for w in words if w != canonical)])
    return sorted(out)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rows = [row for name in DICTIONARIES for row in exported(name, pathlib.Path(tmp))]
    groups = synonym_groups(rows)
    OUT.write_text("".join("\t".join(g) + "\n" for g in groups), encoding="utf-8")
    print(f"{OUT}: {len(groups)} groups, {sum(map(len, groups))} words")


if __name__ == "__main__":
    main()
