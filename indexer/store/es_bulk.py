"""Bulk writes that never drop an accepted article silently.

New articles (``bulk_create``) are sent with ``op_type=create`` and ``_id`` = article id, so a
retried or concurrent write of the same article answers 409 and leaves the first write in place
(first write wins, as in the embedded store). Cluster changes are partial updates
(``bulk_update``). Per item:

* 2xx: done;
* 409 conflict on a create: already stored, done (the caller reads back what is there);
* 429 / 5xx / no status (the whole request failed): retried, with jittered exponential backoff
  (``indexer.retry``), up to ``max_retries`` rounds; connection errors raised mid-stream retry
  every unacknowledged item;
* any other status (a mapping error, a bad vector): permanent, not retried.

What is still failed at the end is written to a dead-letter JSONL file and reported to the caller,
which raises ``BulkWriteError`` naming every article.

These rounds are the only retries of a bulk write: its requests go through a copy of the client
with the transport's own retries off (``max_retries=0``). Otherwise each round's request would be
re-sent up to ``es.max_retries`` times more by the transport, at once and without backoff, and one
article could be sent ``(max_retries + 1) ** 2`` times. So an article is sent at most
``max_retries + 1`` times.
"""

from __future__ import annotations

import json
import logging
import os
import random
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping

from ..retry import backoff_delay

log = logging.getLogger(__name__)

# Longest wait between two rounds: ``es.retry_backoff`` doubles per round up to here.
MAX_BACKOFF_SECONDS = 30.0


@dataclass
class BulkOutcome:
    written: list[str] = field(default_factory=list)  # acknowledged: created, or updated
    existing: list[str] = field(default_factory=list)  # 409 on a create: some earlier write is kept
    failed: dict[str, str] = field(default_factory=dict)  # id -> last reason
    statuses: dict[str, int | None] = field(default_factory=dict)  # id -> last status of a failed one
    rounds: int = 0


def _reason(op: Mapping[str, Any]) -> str:
    error = op.get("error")
    if isinstance(error, Mapping):
        text = f"{error.get('type', 'error')}: {error.get('reason', '')}"
        cause = error.get("caused_by")
        if isinstance(cause, Mapping) and cause.get("reason"):
            text += f" (caused by {cause.get('type')}: {cause['reason']})"
        return text
    return str(error) if error is not None else f"status {op.get('status')}"


def is_retryable(status: Any) -> bool:
    """429, 5xx or no answer (None): the one rule for StoreUnavailable (try again) over StoreError."""
    return status is None or status == 429 or (isinstance(status, int) and status >= 500)


def bulk_create(client, index: str, docs: Mapping[str, dict], **rounds: Any) -> BulkOutcome:
    """Create ``docs`` (id -> source) in ``index``; ``rounds``: as ``bulk_rounds``."""
    actions = {aid: {"_op_type": "create", "_index": index, "_id": aid, "_source": doc} for aid, doc in docs.items()}
    return bulk_rounds(client, actions, what=f"bulk request to {index}", kept_on_conflict=True, **rounds)


def bulk_update(client, updates: Mapping[str, tuple[str, dict]], **rounds: Any) -> BulkOutcome:
    """Partial updates (id -> (index, fields)); ``rounds``: as ``bulk_rounds``. A 404 (the
    article is gone) or 409 (it kept changing) is a failure, not retried."""
    actions = {aid: {"_op_type": "update", "_index": index, "_id": aid, "doc": doc, "retry_on_conflict": 3}
               for aid, (index, doc) in updates.items()}
    return bulk_rounds(client, actions, what="bulk update", kept_on_conflict=False, **rounds)


def bulk_rounds(
    client,
    actions: Mapping[str, dict],
    *,
    what: str,
    kept_on_conflict: bool,
    chunk_docs: int,
    chunk_bytes: int,
    max_retries: int,
    backoff: float,
    refresh: str = "false",
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
) -> BulkOutcome:
    """Send ``actions`` (id -> bulk action) with ``streaming_bulk`` in up to ``max_retries + 1``
    rounds, each resending what failed retryably; see the module docstring."""
    import elastic_transport
    from elasticsearch import helpers

    client = client.options(max_retries=0)  # the rounds below are the one retry layer
    outcome = BulkOutcome()
    pending = dict(actions)
    permanent: dict[str, str] = {}
    for attempt in range(max_retries + 1):
        outcome.rounds = attempt + 1
        retry: dict[str, str] = {}
        seen: set[str] = set()
        try:
            for ok, item in helpers.streaming_bulk(
                client, pending.values(), chunk_size=chunk_docs, max_chunk_bytes=chunk_bytes, raise_on_error=False,
                raise_on_exception=False, max_retries=0, refresh=refresh,
            ):
                op = next(iter(item.values()))
                aid, status = str(op.get("_id")), op.get("status")
                seen.add(aid)
                if ok:
                    outcome.written.append(aid)
                    continue
                outcome.statuses[aid] = status
                if status == 409 and kept_on_conflict:
                    outcome.existing.append(aid)
                    del outcome.statuses[aid]
                elif is_retryable(status):
                    retry[aid] = _reason(op)
                else:
                    permanent[aid] = _reason(op)
        except elastic_transport.TransportError as exc:
            reason = f"{type(exc).__name__}: {exc.message}"
            log.warning("%s failed (%s); %d articles unacknowledged", what, reason, len(pending) - len(seen))
        else:
            # a conforming server answers every action; an answer cut short (a proxy, a bug) must
            # not pass the unanswered ones for written
            reason = "no answer for it in the bulk response"
            if len(seen) < len(pending):
                log.warning("%s: %d articles had no answer in the bulk response", what, len(pending) - len(seen))
        retry.update({aid: reason for aid in pending if aid not in seen})
        outcome.statuses.update({aid: None for aid in pending if aid not in seen})
        pending = {aid: pending[aid] for aid in retry}
        if not pending:
            break
        if attempt < max_retries:
            delay = backoff_delay(attempt, backoff, MAX_BACKOFF_SECONDS, rng)
            log.warning("%s: retrying %d articles in %.2fs (round %d of %d): %s", what, len(pending), delay, attempt + 2,
                        max_retries + 1, next(iter(retry.values())))
            sleep(delay)
        else:
            permanent.update(retry)
    outcome.failed = permanent
    outcome.statuses = {aid: outcome.statuses.get(aid) for aid in permanent}
    return outcome


def dead_letter(folder: str | os.PathLike, docs: Mapping[str, dict], failed: Mapping[str, str]) -> Path:
    """Append the failed documents with their reasons to a new JSONL file; its path."""
    directory = Path(folder)
    directory.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    path = directory / f"es-deadletter-{stamp}-{os.getpid()}.jsonl"
    with open(path, "a", encoding="utf-8") as fh:
        for aid, reason in failed.items():
            record = {"_id": aid, "_error": reason, "_source": docs.get(aid)}
            fh.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    return path
