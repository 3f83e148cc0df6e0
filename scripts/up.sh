#!/usr/bin/env bash
# Installs everything and runs eventrelay locally: Redis (started when none answers), the example
# config with a demo source, and ingest. Prints a curl line that works as printed. Ctrl-C stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

ensure_node
ensure_pnpm
install_deps
log "building (tsc -b)"
pnpm --silent build
# run-local.mjs starts Redis too when none answers at REDIS_URL (through packages/testkit).
exec node scripts/run-local.mjs
