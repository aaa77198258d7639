# shellcheck shell=bash
# The pgraphrag binary the run scripts use (sourced; sets BIN): $PGRAPHRAG when set, else the
# newer of target/release/pgraphrag and target/debug/pgraphrag (an old release build can lack
# flags the scripts pass). Exits naming the build command when there is none.
#   usage: . scripts/pgraphrag_bin.sh; pgraphrag_bin ROOT NAME   (NAME prefixes the error)
pgraphrag_bin() {
  BIN="${PGRAPHRAG:-}"
  if [ -z "$BIN" ]; then
    for b in "$1/target/release/pgraphrag" "$1/target/debug/pgraphrag"; do
      [ -x "$b" ] && { [ -z "$BIN" ] || [ "$b" -nt "$BIN" ]; } && BIN="$b"
    done
  fi
  [ -n "$BIN" ] || { echo "$2: build pgraphrag first (cargo build --release --bin pgraphrag)" >&2; exit 1; }
}
