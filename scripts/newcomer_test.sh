#!/usr/bin/env bash
# README command 1 the way a newcomer runs it: from a fresh clone of this checkout's HEAD in a temporary
# folder, with a HOME that holds nothing, no WordNet anywhere the metrics crate looks by default
# (WORDNET_DIR and NLTK_DATA point at empty folders; /usr/share/wordnet is whatever the machine has),
# on the smallest limit. Passes when the results table is printed with a METEOR column.
#   scripts/newcomer_test.sh            (LIMIT=1; CARGO_TARGET_DIR is honoured to reuse a build)
#   scripts/newcomer_test.sh --in-place (.ci/run: the checkout itself when it is pristine, that is
#                                        a fresh clone with nothing built, fetched or changed;
#                                        otherwise a fresh clone as above)
# .ci/run runs it before it installs anything for the other tests. In place, the workspace's crates
# it builds are the ones the test build then reuses (a clone elsewhere is another path, so cargo
# compiles every workspace crate a second time: about 3 minutes on 2 cores).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DATA="${PGRAPHRAG_DATA:-$(cd "$ROOT/.." && pwd)/shared/data}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
start=$(date +%s)
CHECKOUT="$WORK/pgraphrag"
if [ "${1:-}" = "--in-place" ] && [ -z "$(git -C "$ROOT" status --porcelain --ignored)" ]; then
  echo "newcomer_test: in the pristine checkout $ROOT"
  CHECKOUT="$ROOT"
else
  [ "${1:-}" = "--in-place" ] && echo "newcomer_test: $ROOT is not pristine (git status --ignored lists files): from a fresh clone"
  git clone -q "$ROOT" "$CHECKOUT"
fi
mkdir -p "$WORK/home" "$WORK/empty-wordnet" "$WORK/empty-nltk"
# Cargo and rustup live in the real HOME's .cargo/.rustup on this kind of machine: keep them reachable
# (a newcomer has a toolchain), and keep everything else out.
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
log="$WORK/main_job.log"
(
  cd "$CHECKOUT"
  env HOME="$WORK/home" WORDNET_DIR="$WORK/empty-wordnet" NLTK_DATA="$WORK/empty-nltk" \
    PGRAPHRAG_DATA="$DATA" LIMIT=1 scripts/main_job.sh
) 2>&1 | tee "$log"
grep -q '^| mode_k' "$log" || { echo "newcomer_test: no results table printed" >&2; exit 1; }
grep -qi 'meteor' "$log" || { echo "newcomer_test: the table has no METEOR column" >&2; exit 1; }
echo "newcomer_test: passed in $(( $(date +%s) - start )) s"
