"""Build indexer/data/title_char_idf.tsv: IDF of character 1-3-grams over news headlines.

    python bench/build_title_idf.py [--out FILE]

Fitted on the 20,000 THUCNews headlines beside the repository (thucnews_titles dev + test; the
source repository is MIT-licensed). Only the derived statistic ships, not the headlines: grams seen
in at least MIN_DF headlines with their smoothed IDF, ln((1 + N) / (1 + df)) + 1. The duplicate
thresholds are calibrated against this table: refit it and the thresholds must be re-measured.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import datasets  # noqa: E402

from indexer.cleaning import clean_title  # noqa: E402
from indexer.features.title_grams import char_grams  # noqa: E402

MIN_DF = 2
OUT = Path(__file__).resolve().parents[1] / "indexer" / "data" / "title_char_idf.tsv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"where to write the table (default {OUT})")
    out = parser.parse_args().out
    titles = []
    for name in ("dev.txt", "test.txt"):
        for line in (datasets.DATA / "thucnews_titles" / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                titles.append(line.rsplit("\t", 1)[0])
    df: Counter[str] = Counter()
    for t in titles:
        df.update(set(char_grams(clean_title(t))))
    n = len(titles)
    kept = sorted((g, c) for g, c in df.items() if c >= MIN_DF)
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(f"#documents\t{n}\n")
        for gram, count in kept:
            fh.write(f"{gram}\t{math.log((1 + n) / (1 + count)) + 1:.4f}\n")
    print(f"{len(kept)} grams from {n} headlines -> {out}")


if __name__ == "__main__":
    main()
