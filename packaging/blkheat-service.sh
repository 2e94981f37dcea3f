#!/bin/sh
# /usr/lib/blkheat/blkheat-service serve|fleet: what blkheat.service and blkheat-fleet.service
# run. Turns the settings of /etc/default/blkheat (or blkheat-fleet), which the units read with
# EnvironmentFile=, into flags: systemd cannot turn "BLKHEAT_DISKS=vda sdb" into
# "--disk vda --disk sdb", nor leave a flag out when its setting is empty. A setting left empty
# passes no flag, so the agent's own default applies (blkheat serve --help), except the two
# below. The package ships no file in /etc (the settings are examples under
# /usr/share/doc/blkheat/examples/default/), so with no /etc/default file at all the service
# must still run as packaged: those two defaults live here, where a setting of the admin's
# file replaces them, rather than in a file that dpkg -r would have to leave behind.
set -eu

# The directory the unit may write (ReadWritePaths=/var/lib/blkheat) and postinst makes: named
# here so that it and the unit agree even if the agent's own default ever changes.
BLKHEAT_DATA_DIR="${BLKHEAT_DATA_DIR:-/var/lib/blkheat}"
# blkheat fleet has no default Prometheus (--prometheus is required): a local one.
BLKHEAT_FLEET_PROMETHEUS="${BLKHEAT_FLEET_PROMETHEUS:-http://127.0.0.1:9090}"

command="${1:-}"
set --
case "$command" in
  serve)
    [ -z "${BLKHEAT_HOST:-}" ] || set -- "$@" --host "$BLKHEAT_HOST"
    [ -z "${BLKHEAT_PORT:-}" ] || set -- "$@" --port "$BLKHEAT_PORT"
    [ -z "${BLKHEAT_TOKEN_FILE:-}" ] || set -- "$@" --token-file "$BLKHEAT_TOKEN_FILE"
    set -- "$@" --data-dir "$BLKHEAT_DATA_DIR"
    [ -z "${BLKHEAT_HISTORY:-}" ] || set -- "$@" --history "$BLKHEAT_HISTORY"
    [ -z "${BLKHEAT_MAX_HISTORY_SIZE:-}" ] || set -- "$@" --max-history-size "$BLKHEAT_MAX_HISTORY_SIZE"
    [ -z "${BLKHEAT_MAX_SAMPLE_SIZE:-}" ] || set -- "$@" --max-sample-size "$BLKHEAT_MAX_SAMPLE_SIZE"
    for disk in ${BLKHEAT_DISKS:-}; do
      set -- "$@" --disk "$disk"
    done
    extra="${BLKHEAT_OPTS:-}"
    ;;
  fleet)
    set -- "$@" --prometheus "$BLKHEAT_FLEET_PROMETHEUS"
    [ -z "${BLKHEAT_FLEET_HOST:-}" ] || set -- "$@" --host "$BLKHEAT_FLEET_HOST"
    [ -z "${BLKHEAT_FLEET_PORT:-}" ] || set -- "$@" --port "$BLKHEAT_FLEET_PORT"
    [ -z "${BLKHEAT_FLEET_TOKEN_FILE:-}" ] || set -- "$@" --token-file "$BLKHEAT_FLEET_TOKEN_FILE"
    extra="${BLKHEAT_FLEET_OPTS:-}"
    ;;
  *)
    echo "usage: $0 serve|fleet (run by blkheat.service and blkheat-fleet.service)" >&2
    exit 2
    ;;
esac

# The *_OPTS settings are whole flags, split on spaces as systemd splits $VAR
# ("--instance db-1 --schema 3"); none of the agent's flag values holds a space.
# shellcheck disable=SC2086
exec "${BLKHEAT_BIN:-/usr/bin/blkheat}" "$command" "$@" $extra
