"""Where crawled articles go: the indexer in-process, the ingest daemon over HTTP, or files.

Every sink takes a batch of records and answers one ``Delivery`` per record, so the runner can
count new/duplicate per source and mark URLs as seen only once their batch was accepted.
"""

from __future__ import annotations

import csv
import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence

import requests

from .errors import SinkError
from .fetch import RETRY_STATUSES, backoff_delay, parse_retry_after

log = logging.getLogger(__name__)

CSV_COLUMNS = ("url", "title", "content", "source", "publish_time")


@dataclass(frozen=True)
class Delivery:
    url: str
    status: str  # new | duplicate | already_indexed | rejected | accepted | written
    cluster_id: str | None = None
    error: str | None = None


class Sink(Protocol):
    def send(self, records: Sequence[Mapping[str, Any]]) -> list[Delivery]: ...

    def close(self) -> None: ...


class JsonlSink:
    """Appends one JSON object per line (UTF-8, not ASCII-escaped so the file stays readable)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "a", encoding="utf-8")

    def send(self, records: Sequence[Mapping[str, Any]]) -> list[Delivery]:
        for r in records:
            self._fh.write(json.dumps(dict(r), ensure_ascii=False) + "\n")
        self._fh.flush()
        return [Delivery(r.get("url", ""), "written") for r in records]

    def close(self) -> None:
        self._fh.close()


class CsvSink:
    """The seed's raw_news_articles.csv shape: url,title,content,source,publish_time. Appends;
    the header is written only to a new or empty file. UTF-8 with BOM so Excel shows Chinese."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        new = not self.path.exists() or self.path.stat().st_size == 0
        self._fh = open(self.path, "a", encoding="utf-8-sig" if new else "utf-8", newline="")
        self._writer = csv.DictWriter(self._fh, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        if new:
            self._writer.writeheader()

    def send(self, records: Sequence[Mapping[str, Any]]) -> list[Delivery]:
        for r in records:
            self._writer.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in CSV_COLUMNS})
        self._fh.flush()
        return [Delivery(r.get("url", ""), "written") for r in records]

    def close(self) -> None:
        self._fh.close()


def file_sink(path: str | os.PathLike) -> Sink:
    suffix = Path(path).suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return JsonlSink(path)
    if suffix == ".csv":
        return CsvSink(path)
    raise SinkError(f"--output must end in .jsonl, .ndjson or .csv, got {path}")


class IndexerSink:
    """Indexes in-process with ``indexer.pipeline.Indexer`` (imported lazily: the crawler's file
    outputs work without the indexer's heavier dependencies)."""

    def __init__(self, settings: Any):
        from indexer.daemon.lease import WriterLease
        from indexer.pipeline import Indexer

        # One writer per store, as for `newsdedup ingest`: not while a daemon writes into it.
        self._writer = WriterLease(settings)
        self._writer.acquire()
        try:
            self._indexer = Indexer.open(settings)
        except BaseException:
            self._writer.release()
            raise

    def send(self, records: Sequence[Mapping[str, Any]]) -> list[Delivery]:
        try:
            outcomes = self._indexer.index_many(list(records))
        except Exception as exc:  # the indexer's own errors (StoreError...) and anything unexpected
            raise SinkError(f"indexer failed: {exc}") from exc
        return [
            Delivery(r.get("url", ""), str(getattr(o.decision, "value", o.decision)).lower(), o.cluster_id, o.error)
            for r, o in zip(records, outcomes)
        ]

    def close(self) -> None:
        try:
            self._indexer.close()
        finally:
            self._writer.release()


class HttpPushSink:
    """POSTs a batch as NDJSON to the ingest daemon (``http://host:port/v1/articles``), expecting
    202 and a JSON body. A 422 whose body names each article's refusal (the daemon refused every
    one of a batch on its own) is those refusals, as a 202's results are. Connection errors, 5xx
    and 429 are retried with backoff (honouring Retry-After); anything else is a SinkError, since a
    4xx will not get better by retrying."""

    def __init__(
        self,
        url: str,
        token: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff_base: float = 1.0,
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.url = url
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self._sleep = sleep
        self._session = session or requests.Session()
        self._headers = {"Content-Type": "application/x-ndjson; charset=utf-8", "Accept": "application/json"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"

    def send(self, records: Sequence[Mapping[str, Any]]) -> list[Delivery]:
        if not records:
            return []
        body = "".join(json.dumps(dict(r), ensure_ascii=False) + "\n" for r in records).encode("utf-8")
        for attempt in range(self.max_retries + 1):
            retry_after = None
            try:
                resp = self._session.post(self.url, data=body, headers=self._headers, timeout=self.timeout)
            except requests.RequestException as exc:
                problem = f"cannot reach {self.url}: {exc}"
                cause: Exception | None = exc
            else:
                if resp.status_code in (200, 201, 202):
                    return _deliveries_from_response(records, resp)
                if resp.status_code == 422 and (refused := _per_item_decisions(records, _json_or_none(resp))) is not None:
                    return refused  # every article refused on its own (named in its result): no request error
                problem = f"{self.url} answered HTTP {resp.status_code}: {resp.text[:300]}"
                cause = None
                if resp.status_code not in RETRY_STATUSES:
                    raise SinkError(problem)
                retry_after = parse_retry_after(resp.headers.get("Retry-After"))
            if attempt == self.max_retries:
                raise SinkError(problem) from cause
            delay = backoff_delay(attempt, self.backoff_base, 60.0, retry_after)
            log.warning("push failed (%s); retrying in %.1fs", problem, delay)
            self._sleep(delay)
        raise AssertionError("unreachable")

    def close(self) -> None:
        self._session.close()


def _deliveries_from_response(records: Sequence[Mapping[str, Any]], resp: requests.Response) -> list[Delivery]:
    """Per-article decisions when the daemon returns them (``results``/``outcomes`` list with a
    ``decision`` each), else every article counts as ``accepted`` (queued for indexing)."""
    try:
        payload = resp.json()
    except ValueError as exc:
        raise SinkError(f"{resp.url} answered {resp.status_code} without a JSON body") from exc
    found = _per_item_decisions(records, payload)
    return found if found is not None else [Delivery(r.get("url", ""), "accepted") for r in records]


def _json_or_none(resp: requests.Response) -> Any:
    try:
        return resp.json()
    except ValueError:
        return None


def _per_item_decisions(records: Sequence[Mapping[str, Any]], payload: Any) -> list[Delivery] | None:
    """The answer's ``results``/``outcomes``, one with a ``decision`` per record, as deliveries;
    None when it has no such list."""
    items = payload.get("results") or payload.get("outcomes") if isinstance(payload, Mapping) else None
    if isinstance(items, list) and len(items) == len(records) and all(isinstance(i, Mapping) and "decision" in i for i in items):
        return [Delivery(r.get("url", ""), str(i["decision"]).lower(), i.get("cluster_id"), i.get("error")) for r, i in zip(records, items)]
    return None


class TeeSink:
    """Sends to several sinks; the first one's deliveries count (e.g. the indexer), the others
    (a JSONL archive) just get a copy."""

    def __init__(self, primary: Sink, *copies: Sink):
        self.primary = primary
        self.copies = copies

    def send(self, records: Sequence[Mapping[str, Any]]) -> list[Delivery]:
        deliveries = self.primary.send(records)
        for sink in self.copies:
            sink.send(records)
        return deliveries

    def close(self) -> None:
        for sink in (self.primary, *self.copies):
            sink.close()
