"""Featurise throughput on the same 1,000-character Chinese articles, as ratios against the
blog recipe measured in the same run (this machine is shared and noisy: compare ratios).

    python bench/featurize.py [--docs 1000] [--repeat 3]

Contenders
  blog      jieba.lcut + per-token MD5 + Python loop over 64 bits (the seed recipe)
  simhash   the `simhash` 2.1.2 package (jieba tokens, its own MD5-based hashing)  [if installed]
  minhash   datasketch MinHash, 128 permutations over jieba tokens               [if installed]
  newsdedup          clean + rjieba tokens + IDF weights + numpy SimHash + bands + MD5 (the steps the
                     issue's definition of "featurise" names, with the indexer's own functions)
  newsdedup-all      every text feature the indexer computes (indexer.features.text_features:
                     the above plus shingle-ready text and headline character-gram TF-IDF)

  --script-folding adds, in the same run:
  no-folding         newsdedup-all with traditional-to-simplified folding switched off
  traditional        newsdedup-all on the articles converted to traditional characters (OpenCC s2t),
                     where folding always converts; and it counts the copies whose content key and
                     SimHash equal their original's
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datasets  # noqa: E402


def articles(n: int, chars: int = 1000) -> list[tuple[str, str]]:
    """Real news bodies from ccf2019_inews, cut or joined to exactly ``chars`` characters."""
    pool = [a for a in datasets.inews_articles() if len(a["content"]) >= 200]
    out = []
    i = 0
    while len(out) < n:
        a = pool[i % len(pool)]
        body = a["content"]
        while len(body) < chars:
            body += pool[(i + 7) % len(pool)]["content"]
        out.append((a["title"], body[:chars]))
        i += 1
    return out


def blog_recipe(title: str, body: str) -> int:
    import jieba

    v = [0] * 64
    for word in jieba.lcut(title + body):
        h = int(hashlib.md5(word.encode("utf-8")).hexdigest(), 16)
        for i in range(64):
            v[i] += 1 if (h >> i) & 1 else -1
    return sum(1 << i for i in range(64) if v[i] > 0)


def make_newsdedup():
    from indexer.cleaning import clean_body, clean_title
    from indexer.features.exact import content_key, md5_hex
    from indexer.features.simhash import band_keys, simhash
    from indexer.features.tokenize import weighted_tokens

    def run(title, body):
        ct, cb = clean_title(title), clean_body(body)
        fingerprint = simhash(weighted_tokens(ct, cb))
        return fingerprint, band_keys(fingerprint, 4), md5_hex(ct), md5_hex(cb), content_key(ct, cb)

    return run


def make_newsdedup_all():
    from indexer.features import text_features
    from indexer.settings import Settings

    settings = Settings()
    return lambda title, body: text_features(title, body, settings)


def make_without_folding(featurise):
    """``featurise`` with script folding switched off for the duration of each call."""
    from indexer import cleaning

    folding = cleaning.fold_script

    def run(title, body):
        cleaning.fold_script = _unchanged
        try:
            return featurise(title, body)
        finally:
            cleaning.fold_script = folding

    return run


def _unchanged(text: str) -> str:
    return text


def make_on_traditional(featurise, docs):
    """``featurise`` reading each article's traditional-character copy instead."""
    import opencc

    s2t = opencc.OpenCC("s2t")
    copies = {doc: (s2t.convert(doc[0]), s2t.convert(doc[1])) for doc in docs}
    same = sum(_same_keys(featurise(*doc), featurise(*copies[doc])) for doc in docs)
    print(f"traditional copies with the original's content key and SimHash: {same} of {len(docs)}")
    return lambda title, body: featurise(*copies[(title, body)])


def _same_keys(a, b) -> bool:
    return a.content_key == b.content_key and a.simhash == b.simhash


def make_simhash_pkg():
    import jieba
    from simhash import Simhash

    return lambda title, body: Simhash(jieba.lcut(title + body)).value


def make_minhash():
    import jieba
    from datasketch import MinHash

    def run(title, body):
        m = MinHash(num_perm=128)
        m.update_batch([w.encode("utf-8") for w in set(jieba.lcut(title + body))])
        return m

    return run


def rate(fn, docs, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        for title, body in docs:
            fn(title, body)
        runs.append(len(docs) / (time.perf_counter() - started))
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--plot", help="write a PNG bar chart of the ratios here")
    parser.add_argument("--script-folding", action="store_true",
                        help="also measure without traditional-to-simplified folding, and on traditional copies")
    args = parser.parse_args()
    docs = articles(args.docs)
    import jieba

    jieba.initialize()
    ours = make_newsdedup()
    ours(*docs[0])  # load IDF table and stopwords outside the timing
    everything = make_newsdedup_all()
    everything(*docs[0])
    contenders = {"blog": blog_recipe, "newsdedup": ours, "newsdedup-all": everything}
    if args.script_folding:
        contenders["no-folding"] = make_without_folding(everything)
        contenders["traditional"] = make_on_traditional(everything, docs)
    for name, factory in (("simhash", make_simhash_pkg), ("minhash", make_minhash)):
        try:
            contenders[name] = factory()
        except ImportError:
            print(f"{name}: not installed, skipped")
    # Interleave contenders in every repeat so background load hits them alike.
    rates = {name: [] for name in contenders}
    for _ in range(args.repeat):
        for name, fn in contenders.items():
            rates[name].append(rate(fn, docs, 1))
    base = statistics.median(rates["blog"])
    print(f"featurise {len(docs)} articles of 1,000 characters, median of {args.repeat} runs")
    for name, values in rates.items():
        r = statistics.median(values)
        print(f"  {name:13s} {r:9.1f} docs/s   {r / base:6.1f}x blog recipe")
    if args.plot:
        plot({name: [v / b for v, b in zip(values, rates["blog"])] for name, values in rates.items()}, args)


def plot(ratios: dict[str, list[float]], args) -> None:
    import plots

    plt = plots.pyplot()
    labels = {"blog": "blog recipe\n(jieba + MD5 loop)", "newsdedup": "newsdedup\nclean+tokenise+SimHash+MD5",
              "newsdedup-all": "newsdedup\nall text features", "no-folding": "all text features\nno script folding",
              "traditional": "all text features\non 繁體 copies", "simhash": "simhash 2.1.2", "minhash": "datasketch\nMinHash"}
    names = list(ratios)
    fig, ax = plt.subplots(figsize=(8, 3.6))
    medians = [statistics.median(ratios[n]) for n in names]
    colours = {"blog": "C7", "simhash": "C2", "minhash": "C2"}
    ax.bar(range(len(names)), medians, color=[colours.get(n, "C0") for n in names])
    for i, n in enumerate(names):
        ax.plot([i] * len(ratios[n]), ratios[n], "k.", ms=4)
        ax.text(i, medians[i], f"{medians[i]:.1f}x", ha="center", va="bottom", fontsize=8)
    ax.axhline(15, color="grey", ls=":", lw=0.8)
    ax.set_xticks(range(len(names)), [labels.get(n, n) for n in names], fontsize=7)
    ax.set(ylabel="throughput / blog recipe", title=f"Featurise {args.docs} articles of 1,000 characters (median of {args.repeat}, dots: runs)")
    plots.save(fig, args.plot, f"python bench/featurize.py --docs {args.docs} --repeat {args.repeat}")


if __name__ == "__main__":
    main()
