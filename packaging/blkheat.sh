#!/bin/sh
# /usr/bin/blkheat, installed by the blkheat package: the agent's CLI (record, serve, fleet,
# --version) run by the distribution's Node.js from /usr/lib/blkheat, the source tree's layout
# (so the agent finds its BPF objects and dashboard the way it does in a checkout).
# metrics.proto, which a checkout takes from golang-github-prometheus-client-model-dev (a build
# package), ships in /usr/lib/blkheat: /metrics offers native histograms on a host without it.
BLKHEAT_METRICS_PROTO="${BLKHEAT_METRICS_PROTO:-/usr/lib/blkheat/metrics.proto}"
export BLKHEAT_METRICS_PROTO
# libuv reads this when Node starts: with io_uring off, serve may give up root even on a Node.js
# that cannot ask its libuv (Debian's: CVE-2024-22017; the agent's service/drop-root.ts).
UV_USE_IO_URING="${UV_USE_IO_URING:-0}"
export UV_USE_IO_URING
exec /usr/bin/node /usr/lib/blkheat/apps/agent/bin/blkheat.js "$@"
