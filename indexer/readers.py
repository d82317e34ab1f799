"""Input files: JSON Lines or CSV records, each tagged with where it came from (``file:line``).

Reading never stops at a bad record: a line that is not valid UTF-8, not JSON, or not an object
comes out as a ``Rejected`` item naming the place and the reason, and reading goes on. Its ``raw``
is the whole line (a CSV row: its fields joined again), undecodable bytes as lone surrogates
(U+DC80-U+DCFF, Python's ``surrogateescape``), which the rejects file keeps as JSON escapes: a
JSON line can be rebuilt byte for byte.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import logging
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Iterator

csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # bodies of several MB are legitimate

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Record:
    where: str
    data: Any


@dataclass(frozen=True)
class Rejected:
    where: str
    reason: str
    raw: str


def detect_format(name: str) -> str:
    lower = name.lower().removesuffix(".gz")
    if lower.endswith(".csv"):
        return "csv"
    if lower.endswith(".tsv"):
        return "tsv"
    return "jsonl"


def _decode(raw: bytes) -> tuple[str | None, str | None]:
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return None, f"invalid UTF-8 at byte {exc.start} (re-encode the file as UTF-8)"


def read_jsonl(stream: BinaryIO, name: str) -> Iterator[Record | Rejected]:
    for lineno, raw in enumerate(stream, 1):
        if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        where = f"{name}:{lineno}"
        text, error = _decode(raw)
        if error:
            yield Rejected(where, error, raw.decode("utf-8", "surrogateescape"))
            continue
        if not text.strip():
            continue
        try:
            yield Record(where, json.loads(text))
        except json.JSONDecodeError as exc:
            yield Rejected(where, f"malformed JSON: {exc.msg} at column {exc.colno}", text)
        except ValueError as exc:  # an integer of more than 4,300 digits
            yield Rejected(where, f"malformed JSON: {exc}", text)
        except RecursionError:
            yield Rejected(where, "malformed JSON: nested too deeply", text)


def read_csv(stream: BinaryIO, name: str, delimiter: str = ",") -> Iterator[Record | Rejected]:
    # surrogateescape keeps undecodable bytes addressable per row instead of failing the file.
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="surrogateescape", newline="")
    reader = csv.reader(text, delimiter=delimiter)
    try:
        header = next(reader)
    except StopIteration:
        return
    header = [h.strip() for h in header]
    width = len(header)
    # A name given twice would keep only its last column's value, so which one is meant is the
    # user's to say: every row goes to the rejects with the reason, none is read half right.
    repeated = _repeated_names(header)
    unnamed = [i for i, h in enumerate(header) if not h]
    warned_unnamed = False
    while True:
        where = f"{name}:{reader.line_num + 1}"  # the line the row starts on
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield Rejected(where, f"malformed CSV: {exc}", "")
            continue
        if not any(cell.strip() for cell in row):
            continue
        joined = delimiter.join(row)
        if any("\udc80" <= ch <= "\udcff" for ch in joined):
            yield Rejected(where, "invalid UTF-8 (re-encode the file as UTF-8)", joined)
            continue
        if len(row) != width:
            yield Rejected(where, f"malformed CSV: {len(row)} fields, header has {width}", joined)
            continue
        if repeated:
            yield Rejected(where, f"CSV header {repeated}: rename one and read the file again", joined)
            continue
        if not warned_unnamed and any(row[i].strip() for i in unnamed):
            # most often a writer's row-number column (pandas' index); said once, not per row
            log.warning("%s: column %s has no name in the header; its values are not read", name,
                        ", ".join(str(i + 1) for i in unnamed))
            warned_unnamed = True
        if delimiter == "\t" and any("\t" in cell for cell in row):
            # TSV writers (Python's csv, pandas) quote a field with a quote or a line break in it,
            # but a tab inside a field is a quote opened and never closed ("快讯 北京暴雨): the
            # rows after it were read into this one
            yield Rejected(where, "malformed TSV: a field holds a tab (a quote opened and not closed?)", joined)
            continue
        yield Record(where, {k: v for k, v in zip(header, row) if k})


def _repeated_names(header: list[str]) -> str | None:
    """``repeats 'title' (columns 2 and 5)`` for the first name given twice, else None."""
    first: dict[str, int] = {}
    for i, name in enumerate(header):
        if name and name in first:
            return f"repeats {name!r} (columns {first[name] + 1} and {i + 1})"
        first.setdefault(name, i)
    return None


def read_records(path: str, fmt: str | None = None) -> Iterator[Record | Rejected]:
    """Records of a file, or of standard input for ``-``."""
    name = "<stdin>" if path == "-" else path
    fmt = fmt or detect_format(name)
    stream: BinaryIO = sys.stdin.buffer if path == "-" else (
        gzip.open(Path(path), "rb") if name.lower().endswith(".gz") else open(Path(path), "rb"))
    read = 0
    try:
        if fmt == "jsonl":
            items = read_jsonl(stream, name)
        elif fmt in ("csv", "tsv"):
            items = read_csv(stream, name, "," if fmt == "csv" else "\t")
        else:
            raise ValueError(f"unknown input format {fmt!r} (jsonl, csv, tsv)")
        for item in items:
            read += 1
            yield item
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:  # a truncated or corrupt .gz: what came before stands
        yield Rejected(name, f"compressed file unreadable after {read} records: {exc or type(exc).__name__}", "")
    finally:
        if path != "-":
            stream.close()
