#!/bin/sh
# /usr/bin/blkheat, installed by the blkheat package: the agent's CLI (record, serve, fleet,
# --version) run by the distribution's Node.js from /usr/lib/blkheat, the source tree's layout
# (so the agent finds its BPF objects and dashboard the way it does in a checkout).
# metrics.proto, which a checkout takes from golang-github-prometheus-client-model-dev (a build
# package), ships in /usr/lib/blkheat: /metrics offers native histograms on a host without it.
BLKHEAT_METRICS_PROTO="${BLKHEAT_METRICS_PROTO:-/usr/lib/blkheat/metrics.proto}"
export BLKHEAT_METRICS_PROTO
exec /usr/bin/node /usr/lib/blkheat/apps/agent/bin/blkheat.js "$@"
