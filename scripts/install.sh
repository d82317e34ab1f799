#!/usr/bin/env bash
# Create .venv and install newsdedup with every extra (sentence-transformers, Elasticsearch, tests,
# the peers the benchmarks compare against).
# torch is installed first and pinned to the CPU build, so sentence-transformers does not pull a
# multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3.11}
rm -rf .venv
"$PYTHON" -m venv .venv
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q torch==2.13.0
.venv/bin/pip install -q -e '.[st,es,test,bench]'
