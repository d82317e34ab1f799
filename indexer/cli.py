"""``newsdedup`` command line. The only module that writes to stdout."""

from __future__ import annotations

import json
import logging
import os
import platform
import sys
import time
from collections import Counter, deque
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

import click

from .cli_options import CliError, common_options, config_options, existing_store, settings_from_options
from .daemon.lease import WriterLease
from .errors import NewsdedupError, WriterBusy
from .settings import Settings, describe

log = logging.getLogger("newsdedup")

EXIT_REJECTS = 3  # the run finished, but some input records were rejected (see the rejects file)


def _open_indexer(settings: Settings):
    from .pipeline import Indexer

    try:
        return Indexer.open(settings)
    except NewsdedupError as exc:
        raise CliError(str(exc)) from None


def _open_comparer(settings: Settings):
    from .comparer import PairComparer

    try:
        return PairComparer.open(settings)
    except NewsdedupError as exc:
        raise CliError(str(exc)) from None


@click.group()
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
@click.version_option(package_name="newsdedup")
def main(verbose: int) -> None:
    """Group crawled news into duplicate clusters: exact, near-duplicate and semantic."""
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)


@main.command()
@click.argument("path")
@common_options
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv", "tsv"]), help="Input format (default: by file extension, else JSONL).")
@click.option("--rejects", type=click.Path(dir_okay=False), default="newsdedup-rejects.jsonl", show_default=True, help="Where rejected records are appended.")
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: when stderr is a terminal).")
def ingest(path: str, store: str | None, config: str | None, sets: tuple[str, ...], fmt: str | None, rejects: str, progress: bool | None) -> None:
    """Index PATH (JSONL or CSV; - for stdin) into the store and print a summary.

    Exit status: 0 all records accepted, 3 some records rejected (written to --rejects), 1 failure."""
    from tqdm import tqdm

    from .pipeline import BatchSummary, Decision
    from .readers import Rejected, read_records

    settings = settings_from_options(config, store, sets)
    if path != "-" and not Path(path).is_file():
        raise click.BadParameter(f"no such file: {path}", param_hint="PATH")
    summary = BatchSummary()
    rejected = 0
    started = time.perf_counter()
    reject_file = None

    def reject(where: str, reason: str, raw: Any) -> None:
        nonlocal reject_file, rejected
        rejected += 1
        log.warning("rejected %s: %s", where, reason)
        if reject_file is None:
            reject_file = open(rejects, "a", encoding="utf-8")
        entry = {"where": where, "reason": reason, "record": raw, "at": datetime.now(timezone.utc).isoformat()}
        line = json.dumps(entry, ensure_ascii=False)
        if not line.isascii():
            try:
                line.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate in the record: keep it, as a JSON escape
                line = json.dumps(entry)
        reject_file.write(line + "\n")

    # One writer at a time: a daemon (or another ingest) deciding into the same store meanwhile
    # could make two copies canonical of clusters of their own.
    try:
        writer = WriterLease(settings)
        writer.acquire()
    except NewsdedupError as exc:
        raise CliError(str(exc)) from None
    try:
        with _open_indexer(settings) as indexer, \
                tqdm(desc="ingest", unit=" articles", disable=(not progress) if progress is not None else None, file=sys.stderr) as bar:
            # Records read and not yet decided, oldest first: the indexer's outcomes come in input order.
            in_flight: deque[tuple[Any, str]] = deque()

            def accepted() -> Iterator[tuple[Any, str]]:
                for item in read_records(path, fmt):
                    if isinstance(item, Rejected):
                        reject(item.where, item.reason, item.raw)
                        continue
                    in_flight.append((item.data, item.where))
                    yield item.data, item.where

            done_through = None  # where the last record with an outcome came from
            try:
                for outcome in indexer.index_stream(accepted()):
                    record, done_through = in_flight.popleft()
                    if outcome.decision is Decision.REJECTED:
                        reject(done_through, outcome.error or "rejected", record)
                    else:
                        summary.add(outcome)
                    bar.update(1)
                    if not writer.valid():  # a timed lease that could not be renewed (the store down)
                        raise WriterBusy("the writer lease ran out: another writer may take over the store")
            except NewsdedupError as exc:
                place = f"at {in_flight[0][1]}" if in_flight else f"after {done_through}" if done_through else "before the first record"
                raise CliError(f"indexing stopped {place} (everything before it is stored): {exc}") from None
            finally:
                if reject_file is not None:
                    reject_file.close()
    finally:
        writer.release()
    elapsed = time.perf_counter() - started
    _print_summary(summary.counts, rejected, elapsed, rejects)
    if rejected:
        sys.exit(EXIT_REJECTS)


def _print_summary(counts: Counter, rejected: int, elapsed: float, rejects: str) -> None:
    processed = counts["new"] + counts["duplicate"] + counts["already_indexed"]
    rate = processed / elapsed if elapsed > 0 else 0.0
    click.echo(f"new: {counts['new']}")
    reasons = ", ".join(f"{r} {counts[f'duplicate/{r}']}" for r in ("exact", "near", "semantic") if counts[f"duplicate/{r}"])
    click.echo(f"duplicates: {counts['duplicate']}" + (f" ({reasons})" if reasons else ""))
    if counts["merged"]:
        click.echo(f"clusters merged: {counts['merged']} (a later article bridged clusters that arrived apart)")
    click.echo(f"already indexed: {counts['already_indexed']}" + (" (re-ingest: nothing added)" if processed and counts["already_indexed"] == processed else ""))
    click.echo(f"rejected: {rejected}" + (f" (see {rejects})" if rejected else ""))
    click.echo(f"time: {elapsed:.1f}s, {rate:.1f} articles/s")


@main.command()
@common_options
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Output file (default: stdout).")
def export(store: str | None, config: str | None, sets: tuple[str, ...], output: str | None) -> None:
    """Write every article with its cluster assignment as JSON Lines."""
    settings = existing_store(settings_from_options(config, store, sets))
    with _open_indexer(settings) as indexer, click.open_file(output or "-", "w", encoding="utf-8") as out:
        for article in indexer.store.iter_articles():
            out.write(json.dumps(article.export_record(), ensure_ascii=False) + "\n")


def _pair_side(value: Any) -> Any:
    return {"title": value} if isinstance(value, str) else value


@main.command()
@click.argument("pairs", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@config_options
def compare(pairs: str, config: str | None, sets: tuple[str, ...]) -> None:
    """For each line {"a": article, "b": article} print whether they are duplicates and why.
    Lines in the {"source": text, "target": text} shape compare two headlines."""
    from .errors import InvalidArticle
    from .readers import Rejected, read_records

    comparer = _open_comparer(settings_from_options(config, None, sets))
    failed = 0
    for item in read_records(pairs, "jsonl"):
        if isinstance(item, Rejected):
            failed += 1
            click.echo(json.dumps({"where": item.where, "error": item.reason}, ensure_ascii=False))
            continue
        data = item.data
        try:
            if not isinstance(data, dict):
                raise InvalidArticle("pair must be a JSON object", item.where)
            a, b = (data.get("a"), data.get("b")) if "a" in data else (data.get("source"), data.get("target"))
            evidence, verdict = comparer.compare(_pair_side(a), _pair_side(b))
        except InvalidArticle as exc:
            failed += 1
            click.echo(json.dumps({"where": item.where, "error": str(exc)}, ensure_ascii=False))
            continue
        click.echo(json.dumps({
            "duplicate": verdict is not None,
            "reason": verdict.reason.value if verdict else None,
            "score": verdict.score if verdict else None,
            "scores": {"hamming": evidence.hamming, "containment": round(evidence.containment, 4),
                       "cosine": None if evidence.cosine is None else round(evidence.cosine, 4),
                       "title_sim": round(evidence.title_sim, 4),
                       "event_score": None if evidence.event_score is None else round(evidence.event_score, 4),
                       "title_numbers_conflict": evidence.title_numbers_conflict, "template": evidence.template},
        }, ensure_ascii=False))
    if failed:
        sys.exit(EXIT_REJECTS)


@main.command()
@click.argument("article_id")
@common_options
def explain(article_id: str, store: str | None, config: str | None, sets: tuple[str, ...]) -> None:
    """Why ARTICLE_ID is, or is not, a duplicate: the evidence against its match, its cluster's
    canonical article and its nearest candidates."""
    settings = existing_store(settings_from_options(config, store, sets))
    with _open_indexer(settings) as indexer:
        try:
            report = indexer.explain(article_id)
        except KeyError:
            raise CliError(f"no article with id {article_id!r} in {settings.store.path}") from None
    click.echo(json.dumps(report, ensure_ascii=False, indent=2, default=str))


@main.command()
@common_options
@click.option("--top", default=10, show_default=True, help="How many clusters.")
@click.option("--members/--no-members", default=False, help="List each cluster's members.")
def clusters(store: str | None, config: str | None, sets: tuple[str, ...], top: int, members: bool) -> None:
    """The largest duplicate clusters."""
    settings = existing_store(settings_from_options(config, store, sets))
    with _open_indexer(settings) as indexer:
        stats = indexer.store.stats()
        click.echo(f"{stats.articles} articles in {stats.clusters} clusters; {stats.duplicates} duplicates {stats.by_reason}")
        for cluster_id, size in indexer.store.top_clusters(top):
            group = indexer.store.cluster_members(cluster_id)
            canonical = next((a for a in group if a.id == cluster_id), group[0] if group else None)
            click.echo(f"{size:6d}  {cluster_id}  {canonical.title if canonical else ''}")
            if members:
                for a in group:
                    if a.id != cluster_id:
                        click.echo(f"        - {a.id} [{a.dup_reason} {a.score}] {a.title}")


@main.command("eval")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--truth", "truth_key", required=True, help="Record field holding the true cluster label (e.g. event_id).")
@config_options
@click.option("--show", default=5, show_default=True, help="How many false merges and misses to list.")
def evaluate(path: str, truth_key: str, config: str | None, sets: tuple[str, ...], show: int) -> None:
    """Ingest PATH into a temporary embedded store and score its clusters, as they stand once every
    record is in, against the label in --truth: pairwise and B-cubed precision/recall/F1, each
    layer's link precision, and the worst false merges and misses.

    Exit status: 0 every record scored, 3 some records rejected (named on stderr, not scored),
    1 failure, or nothing scored at all."""
    import tempfile

    from .evaluation import bcubed_prf, by_layer, pairwise_prf, worst_errors
    from .pipeline import Decision
    from .readers import Record, read_records

    rejected: list[tuple[str, str]] = []  # (the record's id, else where it came from; why)
    labelled = []
    for item in read_records(path):
        if not isinstance(item, Record) or not isinstance(item.data, dict):
            rejected.append((item.where, getattr(item, "reason", "not a JSON object")))
        elif item.data.get(truth_key) is not None:
            labelled.append(item)
    if not labelled:
        raise CliError(f"no record of {path} has the field {truth_key!r}" + (f" ({len(rejected)} lines rejected)" if rejected else ""))
    with tempfile.TemporaryDirectory() as tmp:
        settings = settings_from_options(config, tmp, sets)
        with _open_indexer(settings) as indexer:
            outcomes = indexer.index_many([item.data for item in labelled], [item.where for item in labelled])
            # The clusters once every record is in: a later article may merge the cluster an earlier
            # one joined on arrival (order independence), which only the store's final state shows.
            final = {a.id: a.cluster_id for a in indexer.store.iter_articles()}
    rejected += [(o.article_id or o.where or "?", o.error or "rejected") for o in outcomes if o.decision is Decision.REJECTED]
    if rejected:
        click.echo(f"rejected {len(rejected)} records, not scored: " + "; ".join(f"{w}: {why}" for w, why in rejected[:5])
                   + ("; ..." if len(rejected) > 5 else ""), err=True)
    scored = [(o, item) for o, item in zip(outcomes, labelled) if o.decision is not Decision.REJECTED and o.article_id in final]
    truth = {o.article_id: item.data[truth_key] for o, item in scored}
    if not truth:
        raise CliError(f"nothing of {path} was scored: all {len(labelled)} labelled records were rejected")
    predicted = {i: final[i] for i in truth}
    titles = {o.article_id: str(item.data.get("title", ""))[:60] for o, item in scored}
    click.echo(f"{len(predicted)} articles, {len(set(truth.values()))} true groups, {len(set(predicted.values()))} clusters")
    click.echo(f"pairwise  {pairwise_prf(predicted, truth).row()}")
    b = bcubed_prf(predicted, truth)
    click.echo(f"B-cubed   P={b.precision:.4f} R={b.recall:.4f} F1={b.f1:.4f}")
    for reason, m in by_layer([o for o, _ in scored], truth).items():
        click.echo(f"layer {reason:9s} links {m.tp + m.fp:6d}  precision {m.precision:.4f}")
    merges, misses = worst_errors(predicted, truth, show)
    for cid, ids in merges:
        click.echo(f"false merge in cluster {cid}: " + " | ".join(f"{truth[i]}: {titles[i]}" for i in ids[:6]))
    for label, ids in misses:
        click.echo(f"missed: {label!r} split over {len({predicted[i] for i in ids})} clusters: " + " | ".join(titles[i] for i in ids[:6]))
    if rejected:
        sys.exit(EXIT_REJECTS)


@main.command()
@click.argument("pairs", type=click.Path(exists=True, dir_okay=False))
@click.option("--label", "label_key", required=True, help="Field with the 0/1 duplicate label (e.g. labelB).")
@config_options
@click.option("--plot", "plot_path", default="tune-pr.png", show_default=True, help="Precision-recall plot (PNG).")
@click.option("--min-precision", default=0.95, show_default=True, help="Recommend the best F1 at or above this precision.")
@click.option("--limit", default=0, help="Use only the first N pairs (0: all).")
@click.option("--fit", "fit_path", type=click.Path(dir_okay=False), default=None,
              help="Also fit the semantic pair model on these pairs and write it here (use it with --set decision.semantic_model=PATH).")
def tune(pairs: str, label_key: str, config: str | None, sets: tuple[str, ...], plot_path: str, min_precision: float, limit: int,
         fit_path: str | None) -> None:
    """Sweep each layer's threshold on labelled pairs ({"a","b",LABEL} or {"source","target",LABEL};
    LABEL 0/1, true/false): P/R/F1 table, a precision-recall PNG and the recommended settings.
    With --fit, refit the learned semantic decision on them (5-fold cross-validated P/R/F1 and
    calibration are printed; pairs sharing an article id stay in one fold).

    Exit status: 0 every line used, 3 some lines were not JSON objects (each named on stderr,
    skipped, counted in the summary), 1 failure (a pair without a 0/1 label is one)."""
    from .readers import Record, read_records
    from .tuning import pair_from_line, pair_groups, plot, settings_snippet, sweep

    settings = settings_from_options(config, None, sets)
    data: list = []
    rejected = 0
    for item in read_records(pairs, "jsonl"):
        if not isinstance(item, Record):  # as ingest does: name the line, go on, count it
            rejected += 1
            click.echo(f"rejected {item.where}: {item.reason}", err=True)
            continue
        try:
            data.append(pair_from_line(item.data, label_key))
        except ValueError as exc:
            raise CliError(f"{item.where}: {exc}") from None
        if limit and len(data) >= limit:
            break
    skipped = f", {rejected} lines rejected" if rejected else ""
    if not data:
        raise CliError(f"no labelled pairs in {pairs}{skipped}")
    try:
        evidence = _open_comparer(settings).evidence_for_pairs([(a, b) for a, b, _ in data])
    except NewsdedupError as exc:  # a side that is not an article
        raise CliError(str(exc)) from None
    labels = [y for _, _, y in data]
    sweeps = sweep(evidence, labels, min_precision)
    click.echo(f"{len(data)} pairs, {sum(labels)} labelled duplicate{skipped}")
    for s in sweeps:
        click.echo(f"\n{s.layer} / {s.score} ({s.setting})")
        click.echo("  threshold  precision  recall      F1")
        step = max(1, len(s.rows) // 12)
        for row in s.rows[::step]:
            click.echo(f"  {row.threshold:9.4f}  {row.precision:9.4f}  {row.recall:6.4f}  {row.f1:6.4f}")
        if s.best:
            click.echo(f"  best at precision >= {min_precision}: {s.best.threshold:.4f} (P {s.best.precision:.4f}, R {s.best.recall:.4f}, F1 {s.best.f1:.4f})")
    made = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    caption = f"newsdedup tune {Path(pairs).name} --label {label_key}  ({made}, {platform.machine()}, {os.cpu_count()} CPUs)"
    plot(sweeps, plot_path, f"{Path(pairs).name}: {len(data)} pairs", caption)
    click.echo(f"\nprecision-recall plot: {plot_path}")
    click.echo("recommended settings (each layer alone; check them together with `newsdedup eval`):")
    click.echo(settings_snippet(sweeps, settings.simhash.bands) or "(no threshold reaches the precision floor)")
    if fit_path:
        groups = pair_groups([(a, b) for a, b, _ in data], labels)
        _fit_pair_model(evidence, labels, groups, fit_path, min_precision, pairs, settings)
    if rejected:
        sys.exit(EXIT_REJECTS)


def _fit_pair_model(evidence, labels, groups: list[str], path: str, min_precision: float, source: str, settings: Settings) -> None:
    import numpy as np

    from .compare.model import features, fit_model, refused_by_guards

    if len(set(labels)) < 2:
        raise CliError("--fit needs pairs of both labels")
    x = np.vstack([features(ev) for ev in evidence])
    model, report = fit_model(x, np.asarray(labels), groups, min_precision=min_precision,
                              min_precision_headlines=min_precision, about={"fitted_on": f"{Path(source).name}: {len(labels)} pairs"},
                              refused=refused_by_guards(evidence, settings.decision))
    click.echo(f"\nsemantic pair model, 5-fold cross-validated (threshold per regime at precision >= {min_precision}):")
    for name in ("article_pairs", "headline_pairs"):
        if name in report:
            r = report[name]
            click.echo(f"  {name}: {r['pairs']} pairs, threshold {r['threshold']:.3f}: P {r['precision']:.4f} R {r['recall']:.4f} F1 {r['f1']:.4f}")
    click.echo("  calibration (out-of-fold): " + "; ".join(f"{b['bin']} predicted {b['predicted']} observed {b['observed']} ({b['pairs']})" for b in report["calibration"]))
    model.save(path)
    click.echo(f"wrote {path}: use it with --set decision.semantic_model={path}")


@main.command("config")
@common_options
def show_config(store: str | None, config: str | None, sets: tuple[str, ...]) -> None:
    """Print the effective settings (after file, environment and flags) as TOML."""
    settings = settings_from_options(config, store, sets)
    docs = {key: doc for key, _, doc in describe()}
    for section, values in settings.as_dict().items():
        click.echo(f"[{section}]")
        for key, value in values.items():
            rendered = json.dumps(value, ensure_ascii=False) if not isinstance(value, bool) else str(value).lower()
            doc = docs.get(f"{section}.{key}")
            click.echo(f"{key} = {rendered}" + (f"  # {doc}" if doc else ""))
        click.echo("")


# Commands defined beside what they drive. Their modules import optional packages (elasticsearch)
# only when a command needs one, and the command then names the extra to install; so every
# command is always listed, and an import error here is a bug that stops the CLI, naming the module.
# `crawl` comes from the crawlers package by entry point (indexer.plugins): indexer never imports it.
from .daemon.cli import dead_letters, labels, serve, ui  # noqa: E402
from .es_cli import es, kibana  # noqa: E402
from .plugins import commands as _plugin_commands  # noqa: E402

for _command in (es, kibana, serve, ui, labels, dead_letters, *_plugin_commands()):
    main.add_command(_command)  # by its own name (dead_letters is `dead-letters`)
