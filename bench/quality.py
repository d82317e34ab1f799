"""Quality of newsdedup on the evaluation data beside the repository (../shared/data).

    python bench/quality.py reposts   # synthetic reposts of real articles + templated reports
    python bench/quality.py ecom      # ecom2022 dev: clusters vs event_id
    python bench/quality.py sohu      # sohu2021 short-short B train pairs via the compare rules
    python bench/quality.py inews     # natural duplicates inside ccf2019_inews
    python bench/quality.py all
    python bench/quality.py layers --plot docs/bench/layers.png   # each layer alone and combined

Each run ingests into a temporary embedded store with the default settings (or --set KEY=VALUE).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datasets  # noqa: E402

from indexer.evaluation import bcubed_prf, binary_prf, pairwise_prf  # noqa: E402
from indexer.pipeline import Indexer  # noqa: E402
from indexer.settings import load_settings  # noqa: E402


def _settings(sets, store):
    overrides = dict(s.split("=", 1) for s in sets)
    overrides["store.path"] = store
    return load_settings(overrides=overrides, environ={})


def _ingest(records, sets):
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        with Indexer.open(_settings(sets, tmp)) as ix:
            outcomes = ix.index_many(records)
        elapsed = time.perf_counter() - started
    return outcomes, elapsed


def reposts(args):
    records, truth = datasets.repost_set(args.seeds)
    outcomes, elapsed = _ingest(records, args.set)
    pred = {o.article_id: o.cluster_id for o in outcomes}
    kind = {r["id"]: r["kind"] for r in records}
    m = pairwise_prf(pred, truth)
    print(f"reposts: {len(records)} articles ({args.seeds} real seed articles + reposts + {sum(k == 'template' for k in kind.values())} templated reports), {elapsed:.1f}s")
    print(f"  pairwise {m.row()}")
    print(f"  B-cubed  {bcubed_prf(pred, truth).row()}")
    members = defaultdict(list)
    for aid, cid in pred.items():
        members[cid].append(aid)
    tpl_merges = sum(1 for ids in members.values() if sum(kind[i] == "template" for i in ids) > 1 or
                     (any(kind[i] == "template" for i in ids) and len(ids) > 1))
    print(f"  clusters holding a templated report with anything else: {tpl_merges}")
    missed = Counter()
    for o in outcomes:
        if kind[o.article_id] not in ("original", "template") and pred[o.article_id] != pred.get(truth[o.article_id]):
            missed[kind[o.article_id]] += 1
    print(f"  reposts not in their original's cluster, by kind: {dict(missed)}")
    reasons = Counter(o.reason for o in outcomes if o.reason)
    print(f"  duplicate reasons: {dict(reasons)}")
    if args.verbose:
        by_id = {r["id"]: r for r in records}
        for cid, ids in members.items():
            labels = {truth[i] for i in ids}
            if len(labels) > 1:
                print("  FALSE MERGE:", [(i, by_id[i]["title"][:30]) for i in ids])


def ecom(args):
    """Articles in the file's order, then in --shuffles random arrival orders (the file groups
    each event's articles together, which flatters incremental clustering)."""
    import random

    pairs = list(datasets.ecom_articles())
    truth = {a["id"]: e for a, e in pairs}
    print(f"ecom2022 dev: {len(pairs)} articles, {len(set(truth.values()))} events")
    scores = []
    for order in range(args.shuffles + 1):
        records = [a for a, _ in pairs]
        if order:
            random.Random(order).shuffle(records)
        outcomes, elapsed = _ingest(records, args.set)
        pred = {o.article_id: o.cluster_id for o in outcomes}
        m = pairwise_prf(pred, truth)
        label = "file order" if not order else f"shuffle {order}"
        print(f"  {label:10s} pairwise {m.row()}  B-cubed F1={bcubed_prf(pred, truth).f1:.4f}  ({elapsed:.1f}s)")
        if order:
            scores.append(m.f1)
    if scores:
        print(f"  mean pairwise F1 over {len(scores)} shuffles: {sum(scores) / len(scores):.4f}")


def sohu(args):
    from indexer.features import Featurizer
    from indexer.features.embedding import create_embedder

    settings = _settings(args.set, "unused")
    ix = Indexer(settings, store=None, featurizer=Featurizer(settings, create_embedder(settings.embedding.model)))
    pairs = list(datasets.sohu_pairs())
    if args.limit:
        pairs = pairs[: args.limit]
    started = time.perf_counter()
    predicted = [ix.compare({"title": a}, {"title": b})[1] is not None for a, b, _ in pairs]
    elapsed = time.perf_counter() - started
    m = binary_prf(predicted, [y for _, _, y in pairs])
    print(f"sohu2021 short-short B train: {len(pairs)} pairs, {elapsed:.1f}s")
    print(f"  {m.row()}")


def inews(args):
    records = list(datasets.inews_articles())
    outcomes, elapsed = _ingest(records, args.set)
    reasons = Counter(o.reason for o in outcomes if o.reason)
    clusters = Counter(o.cluster_id for o in outcomes)
    print(f"ccf2019_inews: {len(records)} articles, {elapsed:.1f}s ({len(records) / elapsed:.1f} articles/s)")
    print(f"  clusters {len(clusters)}, duplicates {sum(reasons.values())} by reason {dict(reasons)}; largest {clusters.most_common(3)}")
    if args.verbose:
        by_id = {r["id"]: r for r in records}
        for o in outcomes:
            if o.reason in ("near", "semantic"):
                print(f"  {o.reason} {o.score}: {by_id[o.article_id]['title'][:40]!r} ~ {by_id[o.dup_of]['title'][:40]!r}")


LAYER_SETS = ["exact", "near", "semantic", "exact,near", "exact,near,semantic"]


def layers(args):
    """Each duplicate layer alone and combined (decision.layers) on the labelled sets. Runs without
    the semantic layer also switch the embedding model off, which changes nothing they decide."""
    repost_records, repost_truth = datasets.repost_set(args.seeds)
    ecom_pairs = list(datasets.ecom_articles())
    ecom_truth = {a["id"]: e for a, e in ecom_pairs}
    sohu_pairs = list(datasets.sohu_pairs())[: args.limit or 2000]
    rows = []
    for layer_set in LAYER_SETS:
        sets = [*args.set, f"decision.layers={layer_set}"]
        if "semantic" not in layer_set:
            sets.append("embedding.model=none")
        outcomes, _ = _ingest(repost_records, sets)
        reposts_m = pairwise_prf({o.article_id: o.cluster_id for o in outcomes}, repost_truth)
        outcomes, _ = _ingest([a for a, _ in ecom_pairs], sets)
        ecom_m = pairwise_prf({o.article_id: o.cluster_id for o in outcomes}, ecom_truth)
        from indexer.features import Featurizer
        from indexer.features.embedding import create_embedder

        settings = _settings(sets, "unused")
        ix = Indexer(settings, store=None, featurizer=Featurizer(settings, create_embedder(settings.embedding.model)))
        predicted = [ix.compare({"title": a}, {"title": b})[1] is not None for a, b, _ in sohu_pairs]
        sohu_m = binary_prf(predicted, [y for _, _, y in sohu_pairs])
        rows.append((layer_set, reposts_m, ecom_m, sohu_m))
        print(f"  {layer_set:22s} reposts {reposts_m.row()} | ecom {ecom_m.row()} | sohu {sohu_m.row()}", flush=True)
    print(f"layers alone and combined (reposts: {len(repost_records)} articles; ecom2022 dev: {len(ecom_pairs)} "
          f"articles in file order; sohu2021 B train: first {len(sohu_pairs)} pairs)")
    print(f"  {'layers':22s} | {'reposts P / R / F1':24s} | {'ecom P / R / F1':24s} | {'sohu P / R / F1':24s}")
    for layer_set, *ms in rows:
        print(f"  {layer_set:22s} | " + " | ".join(f"{m.precision:.3f} / {m.recall:.3f} / {m.f1:.3f}".ljust(24) for m in ms))
    if args.plot:
        import plots

        plt = plots.pyplot()
        fig, ax = plt.subplots(figsize=(9, 3.8))
        width = 0.27
        for j, name in enumerate(["reposts (pairwise)", "ecom2022 events (pairwise)", "sohu2021 short pairs"]):
            ax.bar([i + (j - 1) * width for i in range(len(rows))], [r[j + 1].f1 for r in rows], width, label=name)
        ax.set_xticks(range(len(rows)), [r[0].replace(",", "+") for r in rows])
        ax.set(ylabel="F1", ylim=(0, 1.05), title="Quality of each layer alone and combined")
        ax.legend(fontsize=8)
        plots.save(fig, args.plot, f"python bench/quality.py layers --seeds {args.seeds}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("which", choices=["reposts", "ecom", "sohu", "inews", "layers", "all"])
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--seeds", type=int, default=300)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--shuffles", type=int, default=3)
    parser.add_argument("--plot", help="layers: write a PNG bar chart here")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    for name in (["reposts", "ecom", "sohu", "inews"] if args.which == "all" else [args.which]):
        globals()[name](args)


if __name__ == "__main__":
    main()
