"""The cluster change log of the Elasticsearch store: one small index of merges and splits.

The log lives in the concrete index ``<es.index>_changes``. The article index template matches
``<es.index>-0*``, so the log never takes the article mapping; it has its own strict mapping
(``CHANGES_MAPPING``). One document per change, with a state:

* ``pending``   asked for, nothing applied yet (a merge recorded before the articles whose
                decision made it are written);
* ``applying``  resolved to the clusters it changes (``into``, ``source``, a split's
                ``new_canonical``); the member updates may be partly done;
* ``applied``   every member update is done: this is the log ``cluster_changes`` answers from;
* ``skipped``   resolved to nothing to do (both ends already in one cluster, or an end unknown).

A store re-applies ``pending`` and ``applying`` changes when it opens and after a failed apply,
oldest first. Member updates are idempotent partial updates, so doing a change twice is harmless;
an ``applying`` change is redone from its recorded resolution, since re-resolving it after a
partial apply would read the clusters it already changed. State moves out of ``pending`` are
guarded by the entry's sequence number (``if_seq_no``): when another store opening meanwhile
finished the change first, the late one follows what was recorded instead of overwriting an
``applied`` with the ``skipped`` its own, now stale, resolution would give.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any, Iterator, Sequence

from ..errors import StoreError
from .base import INDEXER, ClusterChange
from .es_config import translate

log = logging.getLogger(__name__)

CHANGES_SUFFIX = "_changes"
PENDING, APPLYING, APPLIED, SKIPPED = "pending", "applying", "applied", "skipped"
UNFINISHED = (PENDING, APPLYING)
PAGE = 1000
LOG_SORT = [{"seq": "asc"}, {"change_id": "asc"}]

_KEYWORD = {"type": "keyword"}
CHANGES_MAPPING: dict[str, Any] = {
    "dynamic": "strict",
    "_meta": {"managed_by": "newsdedup", "description": "merges and splits of duplicate clusters"},
    "properties": {
        "change_id": _KEYWORD,
        "seq": {"type": "long"},  # write order, the store's ingest_seq clock
        "state": _KEYWORD,
        "kind": _KEYWORD,
        "asked_into": _KEYWORD,  # the ends as the caller named them
        "asked_source": _KEYWORD,
        "into": _KEYWORD,  # the clusters they resolved to
        "source": _KEYWORD,
        "new_canonical": _KEYWORD,  # a split of a canonical: the member that leads the rest
        "article_id": _KEYWORD,
        "reason": {"type": "keyword", "index": False, "doc_values": False},  # free text, only read back
        "by": _KEYWORD,
        "at": {"type": "date"},
    },
}


def _version(answer: dict[str, Any]) -> dict[str, int] | None:
    if answer.get("_seq_no") is None or answer.get("_primary_term") is None:
        return None
    return {"if_seq_no": answer["_seq_no"], "if_primary_term": answer["_primary_term"]}


def changes_index(alias: str) -> str:
    """The log's index for the article alias ``alias``."""
    return f"{alias}{CHANGES_SUFFIX}"


def create_log_index(client, index: str, *, replicas: int) -> bool:
    """Make the log index ``index`` with ``CHANGES_MAPPING``; False when it was there already.
    The one place the log index is made: by ``es init`` (``es_schema.init``) and by a store that
    opens with ``es.auto_create``."""
    from elasticsearch import BadRequestError

    try:
        client.indices.create(
            index=index, mappings=CHANGES_MAPPING,
            # the article indices' replica rule (es_mappings/component_settings.json)
            settings={"number_of_shards": 1, "auto_expand_replicas": f"0-{replicas}"},
        )
    except BadRequestError as exc:  # already there, or a concurrent opener made it first
        if exc.error != "resource_already_exists_exception":
            raise
        return False
    log.info("created the cluster change log index %s", index)
    return True


@dataclass
class LoggedChange:
    """One document of the log: the change as asked, its state and (once resolved) its ends."""

    change_id: str
    seq: int
    state: str
    change: ClusterChange
    into: str | None = None
    source: str | None = None
    new_canonical: str | None = None
    version: dict[str, int] | None = None  # if_seq_no / if_primary_term of the stored entry, when known

    def to_doc(self) -> dict[str, Any]:
        c = self.change
        return {
            "change_id": self.change_id, "seq": self.seq, "state": self.state, "kind": c.kind,
            "asked_into": c.into, "asked_source": c.source, "into": self.into, "source": self.source,
            "new_canonical": self.new_canonical, "article_id": c.article_id, "reason": c.reason, "by": c.by,
            "at": c.at.isoformat() if c.at else None,
        }

    @classmethod
    def from_hit(cls, hit: dict[str, Any]) -> "LoggedChange":
        """From a search hit or a GET answer (with its sequence number when it carries one)."""
        src = hit["_source"]
        at = src.get("at")
        change = ClusterChange(
            kind=src["kind"], into=src.get("asked_into") or "", source=src.get("asked_source") or "",
            article_id=src.get("article_id"), reason=src.get("reason") or "", by=src.get("by") or "",
            at=datetime.fromisoformat(at) if at else None,
        )
        return cls(src["change_id"], int(src["seq"]), src["state"], change, src.get("into"), src.get("source"),
                   src.get("new_canonical"), _version(hit))

    def as_applied(self) -> ClusterChange:
        """The change with the clusters it actually joined or split, as the log reports it."""
        c = self.change
        return ClusterChange(c.kind, self.into or c.into, self.source or c.source, c.article_id, c.reason, c.by, c.at,
                             self.new_canonical if c.kind == "split" else None)


class ChangeLog:
    """The log index of one store. Every call names its operation in errors (``translate``)."""

    def __init__(self, client, alias: str, target: str, *, replicas: int):
        self.client = client
        self.index = changes_index(alias)
        self.target = target
        self.replicas = replicas

    def open(self, *, create: bool) -> bool:
        """Whether the log index exists; with ``create``, make it when it is missing."""
        with translate(f"opening the cluster change log {self.index}", self.target):
            if self.client.indices.exists(index=self.index):
                return True
            if not create:
                return False
            create_log_index(self.client, self.index, replicas=self.replicas)
        return True

    def record(self, changes: Sequence[ClusterChange], seqs: Sequence[int], *, state: str = PENDING,
               plans: Sequence[dict[str, str | None]] | None = None) -> list[LoggedChange]:
        """Store ``changes`` (with their write-order numbers) in ``state``; every one or an error."""
        now = datetime.now(timezone.utc)
        entries = []
        for i, (change, seq) in enumerate(zip(changes, seqs)):
            if change.at is None:
                change = replace(change, at=now)
            entries.append(LoggedChange(uuid.uuid4().hex, seq, state, change, **(plans[i] if plans else {})))
        operations: list[dict] = []
        for e in entries:
            operations += [{"create": {"_index": self.index, "_id": e.change_id}}, e.to_doc()]
        with translate(f"recording {len(entries)} cluster changes in {self.index}", self.target):
            resp = self.client.bulk(operations=operations)
        if resp.get("errors"):
            failed = [item["create"] for item in resp["items"] if item["create"].get("error")]
            error = failed[0]["error"]
            reason = error.get("reason", error) if isinstance(error, dict) else error
            raise StoreError(f"recording cluster changes in {self.index} failed for {len(failed)} of {len(entries)} "
                             f"(first: {failed[0].get('_id')}: {reason}); those recorded are applied on the next write or open")
        for entry, item in zip(entries, resp["items"]):
            entry.version = _version(item["create"])
        return entries

    def mark(self, entry: LoggedChange, state: str, **resolved: str | None) -> None:
        """Move ``entry`` to ``state``, recording the ends it resolved to. Guarded by the entry's
        sequence number (when known), the move fails when another store changed the entry since
        it was read: then ``entry`` holds what is stored now."""
        from elasticsearch import ConflictError

        with translate(f"marking cluster change {entry.change_id} {state}", self.target):
            try:
                resp = self.client.update(index=self.index, id=entry.change_id, doc={"state": state, **resolved}, **(entry.version or {}))
            except ConflictError:
                stored = LoggedChange.from_hit(self.client.get(index=self.index, id=entry.change_id))
                entry.__dict__.update(stored.__dict__)
                log.info("cluster change %s was moved to %s by another store", entry.change_id, entry.state)
                return
        for key, value in resolved.items():
            setattr(entry, key, value)
        entry.state = state
        entry.version = _version(resp)

    def mark_applied(self, entries: Sequence[LoggedChange]) -> None:
        """Mark ``entries`` applied, unguarded: their moves are done, whoever else did them too."""
        if not entries:
            return
        operations: list[dict] = []
        for e in entries:
            operations += [{"update": {"_index": self.index, "_id": e.change_id}}, {"doc": {"state": APPLIED}}]
        with translate(f"marking {len(entries)} cluster changes applied", self.target):
            resp = self.client.bulk(operations=operations)
        failed = [item["update"] for item in resp["items"] if item["update"].get("error")]
        if failed:
            raise StoreError(f"marking cluster changes applied in {self.index} failed for {len(failed)} of "
                             f"{len(entries)} (first: {failed[0].get('_id')}: {failed[0]['error']}); they are "
                             "finished again on the next write or open")
        for e in entries:
            e.state = APPLIED

    def _scan(self, query: dict, what: str) -> Iterator[LoggedChange]:
        with translate(what, self.target):
            self.client.indices.refresh(index=self.index)  # the log is small; its reads are rare
            after = None
            while True:
                extra = {"search_after": after} if after is not None else {}
                hits = self.client.search(index=self.index, query=query, sort=LOG_SORT, size=PAGE,
                                          track_total_hits=False, seq_no_primary_term=True, **extra)["hits"]["hits"]
                yield from (LoggedChange.from_hit(h) for h in hits)
                if len(hits) < PAGE:
                    return
                after = hits[-1]["sort"]

    def unfinished(self) -> list[LoggedChange]:
        """Changes recorded but not finished, oldest first."""
        return list(self._scan({"terms": {"state": list(UNFINISHED)}}, f"reading unfinished changes in {self.index}"))

    def applied(self, cluster_id: str | None = None, corrections_only: bool = False) -> list[ClusterChange]:
        """Applied changes, oldest first; with ``cluster_id``, those that joined or split it, or
        made it the lead of what a split left; with ``corrections_only``, those a person made."""
        filters: list[dict] = [{"term": {"state": APPLIED}}]
        if cluster_id is not None:
            ends = [{"term": {field: cluster_id}} for field in ("into", "source", "new_canonical")]
            filters.append({"bool": {"should": ends, "minimum_should_match": 1}})
        query: dict = {"bool": {"filter": filters}}
        if corrections_only:
            query["bool"]["must_not"] = [{"term": {"by": INDEXER}}]
        return [e.as_applied() for e in self._scan(query, f"reading the cluster change log {self.index}")]
