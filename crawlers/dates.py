"""Publish times on crawled pages: read by the indexer's one date parser (indexer/dates.py), so every
time a crawler reads is one that ingest and the daemon accept too. ``parse_date`` returns None for
text that holds no date."""

from indexer.dates import CST, find_time as parse_date

__all__ = ["CST", "parse_date"]
