#!/usr/bin/env bash
# The README's test command: every test of the workspace, including the real-data and model tests.
# Real data: $PGRAPHRAG_DATA (default ../shared/data). Models: scripts/fetch_models.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
export PGRAPHRAG_DATA="${PGRAPHRAG_DATA:-$(cd .. && pwd)/shared/data}"
exec cargo test --workspace --locked "$@"
