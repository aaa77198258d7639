#!/usr/bin/env bash
# Builds the release CLI and times `pgraphrag metrics` against the Python stack on 2,500 pairs
# (3 interleaved repetitions, medians; see scripts/bench_metrics.py for the options).
# `scripts/bench_metrics.sh --example` times the library example `score_pairs` instead.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p pgraphrag-metrics --example profile_parts --example score_pairs
if [[ " $* " != *" --example "* ]]; then
  cargo build --release -p pgraphrag-cli
fi
python3 scripts/bench_metrics.py "$@"
