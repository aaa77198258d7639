# The one cargo feature set that the main job, the tests, clippy and the newcomer check all build with
# (sourced by scripts/main_job.sh, scripts/test.sh and .ci/run). One set means one build: the store's
# PostgreSQL client brings a proc-macro (async-trait) that turns on a feature of `syn`, and a build
# without it recompiles serde and everything above it (candle, tokenizers) a second time. The CLI's
# default features are this set, so a plain `cargo test --workspace` or `cargo clippy --workspace`
# builds the same; naming them here keeps the scripts right if the defaults change.
# shellcheck shell=bash
PGRAPHRAG_FEATURES="pgraphrag-cli/postgres,pgraphrag-cli/jetstream"
