#!/bin/sh
# First start: a data dir with the role and database from POSTGRES_USER / POSTGRES_DB /
# POSTGRES_PASSWORD, password (SCRAM) logins from any address. Then postgres in the foreground
# (exec, so SIGTERM from the orchestrator is a fast shutdown).
set -eu
: "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD (the password of POSTGRES_USER)}"
user="${POSTGRES_USER:-svc}"
db="${POSTGRES_DB:-svc}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile="$(mktemp)"
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb --username="$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C.UTF-8 "$PGDATA" >/dev/null
  rm -f "$pwfile"
  echo "host all all 0.0.0.0/0 scram-sha-256" >>"$PGDATA/pg_hba.conf"
  echo "host all all ::/0 scram-sha-256" >>"$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  [ "$db" = postgres ] || createdb --username="$user" --owner="$user" "$db"
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -c max_connections=200
