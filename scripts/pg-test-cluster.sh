#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests, listening only on a socket in its own folder.
#   scripts/pg-test-cluster.sh start DIR   makes DIR, starts the cluster, prints its libpq conninfo
#   scripts/pg-test-cluster.sh stop DIR    stops it and removes DIR
# As root (as tests run here) the server runs as the `postgres` user, which initdb requires.
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] || { echo "no PostgreSQL server installed (apt-get install postgresql)" >&2; exit 1; }
command=$1 dir=$2
as_server() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
case $command in
start)
  mkdir -p "$dir"
  chmod 755 "$dir"
  if [ "$(id -u)" -eq 0 ]; then chown postgres "$dir"; fi
  as_server "$bin/initdb" -D "$dir/data" -A trust -U sluice --no-sync -E UTF8 >"$dir/initdb.log"
  # One role must give its password (scram-sha-256): how the tests see a refused login.
  hba="$dir/data/pg_hba.conf"
  as_server sh -c "{ echo 'local all sluice_pw scram-sha-256'; cat '$hba'; } > '$hba.new' && mv '$hba.new' '$hba'"
  # The server must not keep the caller's other descriptors open (a test runner waits on one of
  # them to learn that this script ended): closed in the subshell that starts it.
  (
    for fd in /proc/$BASHPID/fd/*; do
      n=${fd##*/}
      if [ "$n" -gt 2 ] && [ "$n" -lt 255 ]; then eval "exec $n>&-" 2>/dev/null || true; fi
    done
    as_server "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -o "-k $dir -c listen_addresses='' -c fsync=off" \
      start >/dev/null
  )
  # Roles of the fault tests: sluice_pw logs in with its password only; sluice_ro may not create.
  "$bin/psql" -q -h "$dir" -U sluice -d postgres -v ON_ERROR_STOP=1 \
    -c "CREATE ROLE sluice_pw LOGIN PASSWORD 'right-password'" -c "CREATE ROLE sluice_ro LOGIN" >/dev/null
  echo "host=$dir user=sluice dbname=postgres"
  ;;
stop)
  as_server "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$dir"
  ;;
*) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
