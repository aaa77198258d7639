#!/usr/bin/env bash
# A loopback PostgreSQL cluster for the profile store (docs/store.md): one coordinator and two
# shard servers, plus the JetStream nodes of scripts/cluster_nats.sh when that script exists.
#   scripts/cluster.sh start    # initdb if needed, start the 3 servers, set up the databases
#   scripts/cluster.sh status   # which servers run (by recorded PID) and answer
#   scripts/cluster.sh stop     # stop the servers by their recorded PIDs
#   scripts/cluster.sh shard stop|start N   # one shard server (N = 0 or 1), for fault tests
# Data folders runs/cluster/pg-coord, pg-shard0, pg-shard1 ($PG_CLUSTER_DIR), ports BASE,
# BASE+1, BASE+2 ($PG_PORT_BASE, default 55432), listen_addresses='127.0.0.1', unix sockets in
# the cluster folder, trust authentication (loopback only: never expose these servers).
# The coordinator holds two databases: `pgraphrag_single` (the single-server layout) and
# `pgraphrag` (postgres_fdw servers pgraphrag_shard0/1 pointing at the shards' `pgraphrag`).
# `start` writes `export PGRAPHRAG_PG_URL=...` and `export PGRAPHRAG_PG_SHARDED_URL=...` into
# runs/cluster/env.sh (replacing older such lines; cluster_nats.sh adds its own line).
# As root the servers run as the system user `postgres` (created if missing; initdb refuses
# root). PostgreSQL 15 from Debian's postgresql-15 (`apt-get install postgresql-15`).
# CLUSTER_NATS=0 leaves the JetStream nodes alone.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
DIR="${PG_CLUSTER_DIR:-runs/cluster}"
BASE="${PG_PORT_BASE:-55432}"
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
NAMES=(coord shard0 shard1)

BIN=""
for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
  [ -x "$d/initdb" ] && { BIN="$d"; break; }
done
if [ -z "$BIN" ] && command -v initdb >/dev/null 2>&1; then
  BIN="$(dirname "$(command -v initdb)")"
fi
pg_bin() { # tool name -> path (the servers' own version)
  if [ -n "$BIN" ] && [ -x "$BIN/$1" ]; then echo "$BIN/$1"; else command -v "$1"; fi
}
need_postgres() {
  if [ -z "$BIN" ]; then
    echo "PostgreSQL not found (no initdb): install PostgreSQL 15 (apt-get install postgresql-15)" >&2
    exit 1
  fi
}

if [ "$(id -u)" = 0 ]; then
  RUNAS=postgres
  if ! id "$RUNAS" >/dev/null 2>&1; then
    useradd --system --home-dir "$DIR" --shell /usr/sbin/nologin "$RUNAS"
  fi
  as_pg() { (cd / && runuser -u "$RUNAS" -- "$@"); }
else
  RUNAS="$(id -un)"
  as_pg() { "$@"; }
fi

# The servers' own files (data, logs, sockets) go in the cluster folder, unless the server user
# cannot reach it (as root in a clone below a private folder such as /root): then in a private
# folder under /tmp named after the cluster folder. PIDs and env.sh stay in the cluster folder.
PGDIR="$DIR"
if [ "$(id -u)" = 0 ]; then
  chown "$RUNAS" "$DIR"
  if ! runuser -u "$RUNAS" -- test -w "$DIR" 2>/dev/null; then
    PGDIR="/tmp/pgraphrag-cluster-$(printf '%s' "$DIR" | sha256sum | cut -c1-12)"
    mkdir -p "$PGDIR"
    chown "$RUNAS" "$PGDIR"
    chmod 700 "$PGDIR"
  fi
fi

port_of() { # index -> port
  echo $((BASE + $1))
}

alive() { # pid file -> 0 when its process runs
  [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

psql_at() { # port db sql
  as_pg env PGOPTIONS='-c client_min_messages=warning' "$(pg_bin psql)" -h 127.0.0.1 -p "$1" \
    -U "$RUNAS" -d "$2" -v ON_ERROR_STOP=1 -q -X -c "$3" >/dev/null
}

start_one() { # index
  local i="$1" name="${NAMES[$1]}" port data pidfile
  port="$(port_of "$i")"
  data="$PGDIR/pg-$name"
  pidfile="$DIR/pg-$name.pid"
  if alive "$pidfile"; then
    echo "pg-$name already runs (pid $(cat "$pidfile"), port $port)" >&2
    return 0
  fi
  if [ ! -f "$data/PG_VERSION" ]; then
    mkdir -p "$data"
    [ "$(id -u)" = 0 ] && chown "$RUNAS" "$data" "$PGDIR"
    chmod 700 "$data"
    as_pg "$(pg_bin initdb)" -D "$data" -U "$RUNAS" --auth=trust -E UTF8 --locale=C.UTF-8 >"$DIR/pg-$name.initdb.log" 2>&1 ||
      { echo "initdb of pg-$name failed; see $DIR/pg-$name.initdb.log" >&2; exit 1; }
    cat >>"$data/postgresql.conf" <<EOF
# scripts/cluster.sh: loopback only, sockets in the cluster folder
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$PGDIR'
max_connections = 100
shared_buffers = 256MB
max_wal_size = 4GB
synchronous_commit = off
EOF
  fi
  [ "$(id -u)" = 0 ] && chown "$RUNAS" "$PGDIR"
  as_pg "$(pg_bin pg_ctl)" -D "$data" -l "$PGDIR/pg-$name.log" -w -t 60 start >/dev/null ||
    { echo "pg-$name did not start; see $PGDIR/pg-$name.log" >&2; tail -n 20 "$PGDIR/pg-$name.log" >&2; exit 1; }
  head -n 1 "$data/postmaster.pid" >"$pidfile"
  echo "pg-$name runs (pid $(cat "$pidfile"), port $port)" >&2
}

setup_databases() {
  local coord shard i
  coord="$(port_of 0)"
  for i in 0 1 2; do
    psql_at "$(port_of "$i")" postgres "SELECT 1" # answers
  done
  for i in 1 2; do
    shard="$(port_of "$i")"
    as_pg "$(pg_bin psql)" -h 127.0.0.1 -p "$shard" -U "$RUNAS" -d postgres -tAX \
      -c "SELECT 1 FROM pg_database WHERE datname = 'pgraphrag'" | grep -q 1 ||
      psql_at "$shard" postgres "CREATE DATABASE pgraphrag"
  done
  for db in pgraphrag pgraphrag_single; do
    as_pg "$(pg_bin psql)" -h 127.0.0.1 -p "$coord" -U "$RUNAS" -d postgres -tAX \
      -c "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1 ||
      psql_at "$coord" postgres "CREATE DATABASE $db"
  done
  psql_at "$coord" pgraphrag "CREATE EXTENSION IF NOT EXISTS postgres_fdw"
  for i in 0 1; do
    shard="$(port_of $((i + 1)))"
    psql_at "$coord" pgraphrag "DO \$\$ BEGIN
      IF NOT EXISTS (SELECT 1 FROM pg_foreign_server WHERE srvname = 'pgraphrag_shard$i') THEN
        CREATE SERVER pgraphrag_shard$i FOREIGN DATA WRAPPER postgres_fdw
          OPTIONS (host '127.0.0.1', port '$shard', dbname 'pgraphrag', batch_size '1000', fetch_size '10000');
        CREATE USER MAPPING FOR PUBLIC SERVER pgraphrag_shard$i OPTIONS (user '$RUNAS');
      END IF; END \$\$"
  done
}

write_env() {
  local env="$DIR/env.sh" coord
  coord="$(port_of 0)"
  touch "$env"
  grep -v '^export PGRAPHRAG_PG_' "$env" >"$env.tmp" || true
  {
    cat "$env.tmp"
    echo "export PGRAPHRAG_PG_URL=postgres://$RUNAS@127.0.0.1:$coord/pgraphrag_single"
    echo "export PGRAPHRAG_PG_SHARDED_URL=postgres://$RUNAS@127.0.0.1:$coord/pgraphrag"
  } >"$env"
  rm -f "$env.tmp"
  echo "wrote $env" >&2
}

stop_one() { # index
  local name="${NAMES[$1]}" pidfile pid n
  pidfile="$DIR/pg-$name.pid"
  if ! alive "$pidfile"; then
    rm -f "$pidfile"
    echo "pg-$name is not running" >&2
    return 0
  fi
  pid="$(cat "$pidfile")"
  kill -INT "$pid" # fast shutdown
  for n in $(seq 1 120); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "pg-$name (pid $pid) did not stop in 60 s; sending SIGQUIT" >&2
    kill -QUIT "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
  echo "pg-$name stopped (pid $pid)" >&2
}

status() {
  local i name pidfile ok=0
  for i in 0 1 2; do
    name="${NAMES[$i]}"
    pidfile="$DIR/pg-$name.pid"
    if alive "$pidfile" && "$(pg_bin pg_isready)" -q -h 127.0.0.1 -p "$(port_of "$i")"; then
      echo "pg-$name: running (pid $(cat "$pidfile"), port $(port_of "$i"))"
    else
      echo "pg-$name: not running"
      ok=3
    fi
  done
  return $ok
}

nats() { # start|stop|status, when the JetStream script exists (CLUSTER_NATS=0: PostgreSQL only)
  if [ "${CLUSTER_NATS:-1}" != 0 ] && [ -x "$ROOT/scripts/cluster_nats.sh" ]; then
    "$ROOT/scripts/cluster_nats.sh" "$1"
  fi
}

case "${1:-}" in
  start)
    need_postgres
    for i in 0 1 2; do start_one "$i"; done
    setup_databases
    write_env
    nats start
    ;;
  stop)
    nats stop || true
    for i in 2 1 0; do stop_one "$i"; done
    ;;
  status)
    rc=0
    status || rc=$?
    nats status || rc=$?
    exit "$rc"
    ;;
  shard)
    case "${2:-}:${3:-}" in
      stop:0 | stop:1) stop_one $((${3} + 1)) ;;
      start:0 | start:1)
        need_postgres
        start_one $((${3} + 1))
        ;;
      *)
        echo "usage: $0 shard stop|start 0|1" >&2
        exit 2
        ;;
    esac
    ;;
  *)
    echo "usage: $0 start|stop|status|shard stop|start N" >&2
    exit 2
    ;;
esac
