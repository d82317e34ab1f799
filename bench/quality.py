"""Quality of newsdedup on the evaluation data beside the repository (../shared/data).

Every labelled set is split into a tune part and a test part (bench/splits.py: by a hash of the
story, event or pair, so nothing straddles the parts). Fit thresholds and models on --part tune;
the figures printed by default, and the ones to quote, are --part test.

    python bench/quality.py heldout       # v2 reposts of real articles + digests + hard negatives
    python bench/quality.py burst         # 100 real stories x 20 articles, shuffled, two days
    python bench/quality.py chain         # 100 real stories, each reposted in a chain of 10 copies of copies
    python bench/quality.py traditional   # 60 verbatim copies in traditional characters + 500 others
    python bench/quality.py reposts       # first generator's reposts + templated reports
    python bench/quality.py ecom          # ecom2022 dev: clusters vs event_id
    python bench/quality.py sohu          # sohu2021 short-short B train pairs via the compare rules
    python bench/quality.py rumours       # WSDM 2019 fake-news headline pairs: claims vs refutations
    python bench/quality.py inews         # natural duplicates inside ccf2019_inews (unlabelled)
    python bench/quality.py all
    python bench/quality.py layers --plot docs/bench/layers.png   # each layer alone and combined
    python bench/quality.py burst --part tune --build-seed 208 --orders 1   # a tune set from another seed
    python bench/quality.py burst --part tune --build-seeds 261-290         # one order of each: which to read

Clustering sets are ingested in --orders shuffled arrival orders (an incremental clusterer's result
depends on the order); each figure is the mean with its range (min-max) over the orders. -v reads
the errors of the first order (--read-order K: of order K): the evidence of each wrong link and of
each missed member against its story's main cluster, through Indexer.compare.

Each run ingests into a temporary embedded store with the default settings (or --set KEY=VALUE).
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datasets  # noqa: E402

from indexer.evaluation import binary_prf, over_runs, pairwise_prf, spread  # noqa: E402
from indexer.pipeline import Indexer  # noqa: E402
from indexer.settings import load_settings  # noqa: E402


def _settings(sets, store):
    overrides = dict(s.split("=", 1) for s in sets)
    overrides["store.path"] = store
    return load_settings(overrides=overrides, environ={})


def _ingest(records, sets, inspect=None):
    """Ingest into a fresh temporary store; ``inspect(indexer, outcomes)`` runs before it closes.

    Each outcome's cluster is the one its article is in once every record is ingested: an outcome
    names the cluster its article joined then, and a later article may merge that cluster into
    another (order independence), which only the store's final state shows."""
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        with Indexer.open(_settings(sets, tmp)) as ix:
            outcomes = ix.index_many(records)
            elapsed = time.perf_counter() - started
            final = {a.id: a.cluster_id for a in ix.store.iter_articles()}
            for o in outcomes:
                if o.article_id in final:
                    o.cluster_id = final[o.article_id]
            if inspect is not None:
                inspect(ix, outcomes)
    return outcomes, elapsed


def _build_seed(args) -> dict:
    """A held-out set rebuilt from another seed (other real articles of the same part, other edits
    and times), or the set's own seed: more tune sets to read errors on without touching test."""
    return {"seed": args.build_seed} if args.build_seed else {}


def _part(args):
    return None if args.part == "all" else args.part


def _built_part(args):
    """The part a held-out set is built from: it draws its real articles from one part only."""
    if args.part == "all":
        raise SystemExit(f"{args.which}: the held-out sets are built per part; use --part test or --part tune")
    return args.part


# ---- shuffled arrival orders ---------------------------------------------------------------------
def _clusters(pred):
    members = defaultdict(list)
    for aid, cid in pred.items():
        members[cid].append(aid)
    return members


def _alone_merged(pred, truth, kind, alone_kinds):
    """Articles of the given kinds (templated reports, digests, hard negatives) sharing a cluster
    with an article of another story."""
    stories = defaultdict(set)
    for i, c in pred.items():
        stories[c].add(truth.get(i))
    return Counter(kind[i] for i, c in pred.items() if kind.get(i) in alone_kinds and len(stories[c]) > 1)


def _missed_by_kind(pred, truth, kind):
    """Members not in their story's main cluster (the one holding most of the story), by kind."""
    groups = defaultdict(list)
    for i, story in truth.items():
        if i in pred:
            groups[story].append(i)
    missed = Counter()
    for ids in groups.values():
        main, _ = Counter(pred[i] for i in ids).most_common(1)[0]
        missed.update(kind.get(i, "?") for i in ids if pred[i] != main)
    return missed


def evaluate_orders(name, records, truth, args, orders, kind=None, alone_kinds=frozenset(), hard_pairs=()):
    """Ingest ``records`` in ``orders`` shuffled orders; print per-order and summary figures."""
    kind = kind or {}
    preds = []
    runs, clusters, alone, hard, missed, seconds = [], [], [], [], Counter(), []
    stories = len(set(truth.values()))
    print(f"{name}: {len(records)} articles, {stories} true stories; {orders} shuffled arrival orders", flush=True)
    for order in range(1, orders + 1):
        shuffled = list(records)
        random.Random(order).shuffle(shuffled)
        inspect = None
        if args.verbose and order == args.read_order:
            by_id = {r["id"]: r for r in records}
            inspect = lambda ix, outcomes: read_errors(ix, outcomes, by_id, truth, kind, args.errors, order)  # noqa: E731
        outcomes, elapsed = _ingest(shuffled, args.set, inspect)
        pred = {o.article_id: o.cluster_id for o in outcomes if o.article_id and o.cluster_id}
        lost = [r["id"] for r in records if r["id"] not in pred]
        if lost:  # rejected or never answered: not in any cluster, so outside every pair count
            print(f"  order {order:2d}: {len(lost)} articles without a cluster (rejected or lost): {lost[:5]}")
        m = pairwise_prf(pred, truth)
        preds.append(pred)
        runs.append(m)
        clusters.append(len(set(pred.values())))
        alone.append(sum(_alone_merged(pred, truth, kind, alone_kinds).values()))
        hard.append(sum(pred.get(a) == pred.get(b) for a, b in hard_pairs))
        missed.update(_missed_by_kind(pred, truth, kind))
        seconds.append(elapsed)
        extra = f"  negatives merged {alone[-1]}" if alone_kinds else ""
        extra += f"  hard pairs merged {hard[-1]}/{len(hard_pairs)}" if hard_pairs else ""
        print(f"  order {order:2d}: pairwise {m.row()}  clusters {clusters[-1]}{extra}  ({elapsed:.1f}s)", flush=True)
    summary = over_runs(runs)
    print(f"  pairwise over {orders} orders, mean (min-max): P {summary['precision']}  R {summary['recall']}  F1 {summary['f1']}")
    c = spread(clusters)
    print(f"  clusters {c.mean:.1f} ({c.low:.0f}-{c.high:.0f}) for {stories} true stories")
    if alone_kinds:
        a = spread(alone)
        print(f"  articles of {sorted(alone_kinds)} in a cluster with another story: {a.mean:.1f} ({a.low:.0f}-{a.high:.0f}) "
              f"of {sum(k in alone_kinds for k in kind.values())}")
    if hard_pairs:
        h = spread(hard)
        print(f"  same-kind same-place different-event pairs in one cluster: {h.mean:.1f} ({h.low:.0f}-{h.high:.0f}) of {len(hard_pairs)}")
    if kind:
        totals = Counter(kind[i] for i in truth if i in kind)
        print("  members outside their story's main cluster, per order, by kind: "
              + ", ".join(f"{k} {missed[k] / orders:.1f}/{totals[k]}" for k in sorted(missed)) if missed else
              "  members outside their story's main cluster: none")
    print(f"  ingest {sum(seconds) / len(seconds):.1f}s per order ({len(records) / (sum(seconds) / len(seconds)):.0f} articles/s)")
    return summary, preds


# ---- reading errors --------------------------------------------------------------------------------
def _evidence_text(evidence) -> str:
    fields = dataclasses.asdict(evidence) if dataclasses.is_dataclass(evidence) else dict(vars(evidence))
    return ", ".join(f"{k}={round(v, 3) if isinstance(v, float) else v}" for k, v in fields.items())


def _show_pair(ix, a, b, label, kind):
    evidence, verdict = ix.compare(a, b)
    decided = f"{verdict.reason.value if hasattr(verdict.reason, 'value') else verdict.reason} {verdict.score:.3f}" if verdict else "no match"
    print(f"    [{label}] compare says: {decided}")
    print(f"      a {a['id']} ({kind.get(a['id'], '?')}) {a['title'][:50]!r}")
    print(f"      b {b['id']} ({kind.get(b['id'], '?')}) {b['title'][:50]!r}")
    print(f"      evidence: {_evidence_text(evidence)}")


def _bridge(ix, sides, by_id):
    """The pair across two groups of articles that the rules like best (accepted first, then by
    score or event score): the likeliest bridge of a merge that no single link shows."""
    best, best_key = None, None
    for a in sides[0]:
        for b in sides[1]:
            evidence, verdict = ix.compare(by_id[a], by_id[b])
            key = (verdict is not None, verdict.score if verdict else getattr(evidence, "event_score", 0) or 0)
            if best_key is None or key > best_key:
                best, best_key = (a, b), key
    return best


def read_errors(ix, outcomes, by_id, truth, kind, limit, order=1):
    """The evidence of the wrong links (an article marked a duplicate of another story's article)
    and of missed members (outside their story's main cluster, against that cluster's canonical)."""
    pred = {o.article_id: o.cluster_id for o in outcomes if o.article_id}
    wrong = [o for o in outcomes if o.dup_of and o.article_id in truth and o.dup_of in truth and truth[o.article_id] != truth[o.dup_of]]
    print(f"  -- wrong links in order {order}: {len(wrong)} (showing {min(limit, len(wrong))})")
    for o in wrong[:limit]:
        _show_pair(ix, by_id[o.article_id], by_id[o.dup_of], f"linked as {o.reason} {o.score}", kind)
    merged = [ids for ids in _clusters(pred).values() if len({truth[i] for i in ids if i in truth}) > 1]
    unlinked = [ids for ids in merged if not any(o.article_id in ids for o in wrong)]
    if unlinked:
        print(f"  -- clusters holding several stories without a wrong link (merged as clusters): {len(unlinked)}")
        for ids in sorted(unlinked, key=len, reverse=True)[:limit]:
            stories = Counter(truth[i] for i in ids if i in truth).most_common(2)
            print(f"    cluster of {len(ids)}: stories {dict(Counter(truth[i] for i in ids if i in truth))}")
            a, b = _bridge(ix, [[i for i in ids if truth.get(i) == story][:6] for story, _ in stories], by_id)
            _show_pair(ix, by_id[a], by_id[b], "strongest pair across its two largest stories", kind)
    groups = defaultdict(list)
    for i, story in truth.items():
        if i in pred:
            groups[story].append(i)
    misses = []
    for story, ids in groups.items():
        main, _ = Counter(pred[i] for i in ids).most_common(1)[0]
        misses += [(i, main) for i in ids if pred[i] != main]
    # One miss of each story first, then of each kind, so the list shows different stories and
    # the different ways a story gets split rather than one story's many members.
    seen, ordered = set(), []
    for group in (lambda i: truth[i], lambda i: kind.get(i)):
        for i, main in misses:
            if ("g", group(i)) not in seen and (i, main) not in ordered:
                seen.add(("g", group(i)))
                ordered.append((i, main))
        seen.clear()
    ordered += [m for m in misses if m not in ordered]
    print(f"  -- members outside their story's main cluster in order {order}: {len(misses)} (showing {min(limit, len(misses))})")
    for i, main in ordered[:limit]:
        if main in by_id:
            _show_pair(ix, by_id[i], by_id[main], "missed: member vs main cluster's canonical", kind)


# ---- the sets ------------------------------------------------------------------------------------
def heldout(args):
    """Second-generator reposts of real articles, digests, templated reports and same-kind
    different-event reports (bench/heldout_sets.py)."""
    import heldout_sets

    s = heldout_sets.reposts_set(_built_part(args), n_seeds=args.seeds or 120, **_build_seed(args))
    if args.hard_wrap:
        heldout_sets.hard_wrap(s, args.hard_wrap)
    _, preds = evaluate_orders(s.name, s.records, s.truth, args, args.orders or 3, s.kind,
                               heldout_sets.ALONE_KINDS | {"hard_negative"}, s.hard_pairs)
    return s, preds


def burst(args):
    import heldout_sets

    s = heldout_sets.burst_set(_built_part(args), **_build_seed(args))
    if args.hard_wrap:
        heldout_sets.hard_wrap(s, args.hard_wrap)
    _, preds = evaluate_orders(s.name, s.records, s.truth, args, args.orders or 3, s.kind)
    return s, preds


def chain(args):
    """Reposts of reposts (bench/heldout_sets.py chain_set): furniture piles up, edits compound."""
    import heldout_sets

    s = heldout_sets.chain_set(_built_part(args), **_build_seed(args))
    _, preds = evaluate_orders(s.name, s.records, s.truth, args, args.orders or 3, s.kind)
    return s, preds


def traditional(args):
    import heldout_sets

    s = heldout_sets.traditional_set(_built_part(args), config=args.opencc, **_build_seed(args))
    copies = [i for i, k in s.kind.items() if k == "traditional"]
    _, preds = evaluate_orders(s.name, s.records, s.truth, args, args.orders or 5, s.kind)
    joined = spread([sum(c in p and p[c] == p.get(s.truth[c]) for c in copies) for p in preds])
    sizes = [Counter(p.values()) for p in preds]
    wrong = spread([sum(c in p and p[c] != p.get(s.truth[c]) and n[p[c]] > 1 for c in copies) for p, n in zip(preds, sizes)])
    print(f"  traditional copies in their original's cluster: {joined.mean:.1f} ({joined.low:.0f}-{joined.high:.0f}) of {len(copies)}; "
          f"in another story's cluster: {wrong.mean:.1f} ({wrong.low:.0f}-{wrong.high:.0f})")
    return s, preds


def sites(args):
    """Short real articles under several sites' related-reading lists and footers (bench/heldout_sets.py site_set)."""
    import heldout_sets

    s = heldout_sets.site_set(_built_part(args), **_build_seed(args))
    _, preds = evaluate_orders(s.name, s.records, s.truth, args, args.orders or 3, s.kind)
    return s, preds


def reposts(args):
    part = _part(args)
    records, truth = datasets.repost_set(args.seeds or 300, part=part)
    kind = {r["id"]: r["kind"] for r in records}
    evaluate_orders(f"reposts, first generator ({args.part})", records, truth, args, args.orders or 3, kind, frozenset({"template"}))


def ecom(args):
    """ecom2022 dev events of the chosen part, in shuffled arrival orders (the file groups each
    event's articles together, which flatters incremental clustering)."""
    pairs = list(datasets.ecom_articles(part=_part(args)))
    truth = {a["id"]: e for a, e in pairs}
    evaluate_orders(f"ecom2022 dev ({args.part}: {len(set(truth.values()))} events)", [a for a, _ in pairs], truth, args, args.orders or 10)


def sohu(args):
    from indexer.comparer import PairComparer

    comparer = PairComparer.open(_settings(args.set, "unused"))
    pairs = list(datasets.sohu_pairs(part=_part(args)))
    if args.limit:
        pairs = pairs[: args.limit]
    started = time.perf_counter()
    predicted = [comparer.compare({"title": a}, {"title": b})[1] is not None for a, b, _ in pairs]
    elapsed = time.perf_counter() - started
    m = binary_prf(predicted, [y for _, _, y in pairs])
    print(f"sohu2021 short-short B train ({args.part}): {len(pairs)} pairs, {elapsed:.1f}s")
    print(f"  {m.row()}")
    if args.verbose:
        wrong = [(a, b, y) for (a, b, y), p in zip(pairs, predicted) if p != y]
        for a, b, y in wrong[: args.errors]:
            evidence, _ = comparer.compare({"title": a}, {"title": b})
            print(f"    {'missed' if y else 'false match'}: {a[:40]!r} ~ {b[:40]!r}\n      evidence: {_evidence_text(evidence)}")


def rumours(args):
    """WSDM Cup 2019 fake-news headline pairs through the compare rules: a headline telling the same
    claim should match, a refutation of it (辟谣, 系谣言) should not, nor an unrelated one."""
    from indexer.comparer import PairComparer

    comparer = PairComparer.open(_settings(args.set, "unused"))
    pairs = list(datasets.wsdm_pairs(part=_part(args)))
    matched = [comparer.compare({"title": a}, {"title": b})[1] is not None for a, b, _ in pairs]
    print(f"wsdm2019 fake-news pairs ({args.part}): {len(pairs)} pairs of {len({a for a, _, _ in pairs})} claims")
    print(f"  same claim as positives: {binary_prf(matched, [y == 'agreed' for _, _, y in pairs]).row()}")
    for label in ("agreed", "disagreed", "unrelated"):
        of = [m for m, (_, _, y) in zip(matched, pairs) if y == label]
        print(f"  {label}: matched {sum(of)} of {len(of)}")
    if args.verbose:
        wrong = [(a, b, y) for (a, b, y), m in zip(pairs, matched) if m and y != "agreed"]
        for a, b, y in wrong[: args.errors]:
            evidence, _ = comparer.compare({"title": a}, {"title": b})
            print(f"    {y} matched: {a[:40]!r} ~ {b[:40]!r}\n      evidence: {_evidence_text(evidence)}")


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
    """Each duplicate layer alone and combined (decision.layers) on the labelled sets, in file
    order. Runs without the semantic layer also switch the embedding model off, and that changes
    what they find, not only their cost: without vectors the only stored candidates are
    exact-key hits and SimHash band hits within simhash.max_distance (3 bits; articles of the
    same ingest batch that share a band key are compared whatever their distance). A trimmed or
    partly rewritten repost whose fingerprint is further from an already stored original is
    never compared, although the near rule (containment) would accept it; with the model on,
    it reaches the near rule as a kNN neighbour. So the rows without the semantic layer measure
    their rules on band candidates only, and understate what those rules accept with the model."""
    part = _part(args)
    repost_records, repost_truth = datasets.repost_set(args.seeds or 300, part=part)
    ecom_pairs = list(datasets.ecom_articles(part=part))
    ecom_truth = {a["id"]: e for a, e in ecom_pairs}
    sohu_pairs = list(datasets.sohu_pairs(part=part))[: args.limit or 2000]
    rows = []
    for layer_set in LAYER_SETS:
        sets = [*args.set, f"decision.layers={layer_set}"]
        if "semantic" not in layer_set:
            sets.append("embedding.model=none")
        outcomes, _ = _ingest(repost_records, sets)
        reposts_m = pairwise_prf({o.article_id: o.cluster_id for o in outcomes}, repost_truth)
        outcomes, _ = _ingest([a for a, _ in ecom_pairs], sets)
        ecom_m = pairwise_prf({o.article_id: o.cluster_id for o in outcomes}, ecom_truth)
        from indexer.comparer import PairComparer

        comparer = PairComparer.open(_settings(sets, "unused"))
        predicted = [comparer.compare({"title": a}, {"title": b})[1] is not None for a, b, _ in sohu_pairs]
        sohu_m = binary_prf(predicted, [y for _, _, y in sohu_pairs])
        rows.append((layer_set, reposts_m, ecom_m, sohu_m))
        print(f"  {layer_set:22s} reposts {reposts_m.row()} | ecom {ecom_m.row()} | sohu {sohu_m.row()}", flush=True)
    print(f"layers alone and combined, {args.part} part (reposts: {len(repost_records)} articles; ecom2022 dev: {len(ecom_pairs)} "
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
        ax.set(ylabel="F1", ylim=(0, 1.05), title=f"Quality of each layer alone and combined ({args.part} part)")
        ax.legend(fontsize=8)
        plots.save(fig, args.plot, f"python bench/quality.py layers --part {args.part} --seeds {args.seeds or 300}")


ALL = ["heldout", "burst", "chain", "traditional", "sites", "reposts", "ecom", "sohu", "rumours", "inews"]
BUILT = ["heldout", "burst", "chain", "traditional", "sites"]


def sweep(args) -> None:
    """--build-seeds A-B: the set rebuilt from each tune seed in turn (one order each unless
    --orders says more), then the seeds where some order was not exactly its stories: the fresh
    tune sets to read with -v --build-seed K, never the test part."""
    if args.which not in BUILT or args.part != "tune":
        raise SystemExit(f"--build-seeds sweeps {', '.join(BUILT)} with --part tune")
    first, _, last = args.build_seeds.partition("-")
    seeds = range(int(first), int(last or first) + 1)
    args.orders = args.orders or 1
    flagged = []
    for seed in seeds:
        args.build_seed = seed
        s, preds = globals()[args.which](args)
        stories = len(set(s.truth.values()))
        runs = [(len(set(p.values())), pairwise_prf(p, s.truth)) for p in preds]
        if any(n != stories or m.precision < 1 or m.recall < 1 for n, m in runs):
            flagged.append((seed, stories, runs))
    print(f"{args.which} tune seeds {seeds.start}-{seeds.stop - 1}: {len(flagged)} of {len(seeds)} not exactly their stories"
          f" in some order of {args.orders}")
    for seed, stories, runs in flagged:
        print(f"  seed {seed}: " + "; ".join(f"{n} clusters for {stories}, P {m.precision:.4f} R {m.recall:.4f}" for n, m in runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("which", choices=[*ALL, "layers", "all"])
    parser.add_argument("--part", choices=["test", "tune", "all"], default="test",
                        help="split part of the labelled sets (default test; 'all' = the unsplit set, where it exists)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--seeds", type=int, default=0, help="real seed articles (reposts: 300, heldout: 120)")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--build-seed", type=int, default=0,
                        help="heldout, burst, traditional: build the set from this seed instead of its own")
    parser.add_argument("--build-seeds", default="", metavar="A-B",
                        help="heldout, burst, traditional with --part tune: sweep the tune sets built from seeds A to B")
    parser.add_argument("--orders", type=int, default=0,
                        help="shuffled arrival orders (default: ecom 10, traditional 5, reposts/heldout/burst 3)")
    parser.add_argument("--opencc", default="s2t", help="traditional: OpenCC conversion (s2t, s2twp, s2hk)")
    parser.add_argument("--hard-wrap", type=float, default=0.0, metavar="SHARE",
                        help="heldout, burst: this share of the reposts hard-wrapped (an e-paper copy: every line cut at one width)")
    parser.add_argument("--shuffles", dest="orders", type=int, help="the old name of --orders")
    parser.add_argument("--plot", help="layers: write a PNG bar chart here")
    parser.add_argument("--errors", type=int, default=8, help="-v: errors shown of each sort")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("--read-order", type=int, default=1, metavar="K", help="-v reads the errors of this order (default the first)")
    args = parser.parse_args()
    if args.build_seeds:
        sweep(args)
        return
    for name in (ALL if args.which == "all" else [args.which]):
        globals()[name](args)


if __name__ == "__main__":
    main()
