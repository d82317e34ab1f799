"""Tests of the comparison core (indexer/compare)."""
