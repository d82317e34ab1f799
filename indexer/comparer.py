"""Two articles compared by the ingest rules, with no store: ``newsdedup compare`` and ``tune``,
``Indexer.compare`` and the benchmarks that judge labelled pairs.

Only the pair itself counts here: no time window, no candidate search, no clusters. The sides,
evidence and verdict are the ones ingest computes for a candidate it has found.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .article import Article, article_from_record
from .compare.evidence import PairEvidence, compare_sides
from .compare.rules import Verdict, judge
from .compare.sides import Side
from .compare.verifier import verifier_for
from .features import Featurizer
from .features.embedding import create_embedder
from .settings import Settings

ArticleLike = Mapping | Article


class PairComparer:
    """Featurises articles (the embedding model once per call) and applies the rules to pairs."""

    def __init__(self, settings: Settings, featurizer: Featurizer):
        self.settings = settings
        self.featurizer = featurizer

    @classmethod
    def open(cls, settings: Settings) -> "PairComparer":
        """With the embedding model the settings name, on the device they name. A verifier whose
        package is missing fails here, not at the first borderline pair."""
        verifier_for(settings.decision.verifier)
        return cls(settings, Featurizer(settings, create_embedder(settings.embedding.model, settings.embedding.device)))

    def sides(self, articles: Sequence[ArticleLike], names: Sequence[str | None] | None = None) -> list[Side]:
        """One comparison side per article; a record that is not a valid article raises
        InvalidArticle naming it (``names[i]``, else its position)."""
        tz = self.settings.default_tz
        arts = [
            x if isinstance(x, Article) else article_from_record(x, names[i] if names else f"article {i + 1}", tz,
                                                                 self.settings.input.max_body_bytes)
            for i, x in enumerate(articles)
        ]
        texts = [self.featurizer.text(a) for a in arts]
        vectors = self.featurizer.embed(texts)
        return [Side.of(a.id, t, v, a.publish_time) for a, t, v in zip(arts, texts, vectors)]

    def evidence(self, a: Side, b: Side) -> PairEvidence:
        return compare_sides(a, b, self.settings)

    def verdict(self, evidence: PairEvidence) -> Verdict | None:
        """The rules' decision on the evidence: None when the pair is not a duplicate."""
        return judge(evidence, self.settings.decision, self.settings.simhash)

    def compare(self, a: ArticleLike, b: ArticleLike) -> tuple[PairEvidence, Verdict | None]:
        side_a, side_b = self.sides([a, b], ["a", "b"])
        evidence = self.evidence(side_a, side_b)
        return evidence, self.verdict(evidence)

    def evidence_for_pairs(self, pairs: Sequence[tuple[ArticleLike, ArticleLike]]) -> list[PairEvidence]:
        """Evidence of each pair, the embedding model run once over all their texts."""
        names = [f"pair {i + 1} {side}" for i in range(len(pairs)) for side in ("a", "b")]
        sides = self.sides([x for a, b in pairs for x in (a, b)], names)
        return [self.evidence(sides[2 * i], sides[2 * i + 1]) for i in range(len(pairs))]
