#!/usr/bin/env bash
# Installs everything and runs every test suite: type check, lint, generated-types drift, jest
# (unit + integration + e2e against a real Redis) and go test where a Go module exists.
# Ends with one line: "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

# Whatever stops the run early, its last line is still the totals line CI reads.
summary_printed=""
finish() {
  [[ -n "$summary_printed" ]] || echo "0 passed, 1 failed"
  [[ -n "${STARTED_REDIS_PID:-}" ]] && kill "$STARTED_REDIS_PID" 2>/dev/null
  true
}
trap finish EXIT

ensure_node
ensure_pnpm
install_deps || exit 1
ensure_redis
ensure_go
ensure_prometheus

mkdir -p .eventrelay
status=0
log "build (tsc -b, console)";   pnpm --silent build || status=1
log "lint (eslint)";              pnpm --silent lint || status=1
log "generated types up to date"; pnpm --silent check:types || status=1

log "jest"
rm -f .eventrelay/jest-results.json
pnpm exec jest --ci --json --outputFile=.eventrelay/jest-results.json || status=1
read -r jest_passed jest_failed < <(node -e '
  try { const r = require("./.eventrelay/jest-results.json"); console.log(r.numPassedTests, r.numFailedTests + r.numRuntimeErrorTestSuites); }
  catch { console.log(0, 1); }')

go_passed=0; go_failed=0
for mod in $(ls packages/*/go.mod 2>/dev/null); do
  dir=$(dirname "$mod")
  if ! command -v go >/dev/null 2>&1; then
    log "$dir is a Go module but go is not installed: apt-get install -y golang-go"
    go_failed=$((go_failed + 1)); status=1; continue
  fi
  log "go test ($dir)"
  (cd "$dir" && go vet ./... && go test -race -count=1 -json ./... > "$OLDPWD/.eventrelay/go-test.json") || status=1
  read -r p f < <(node -e '
    const lines = require("fs").readFileSync(".eventrelay/go-test.json", "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const tests = lines.filter((e) => e.Test);
    console.log(tests.filter((e) => e.Action === "pass").length, tests.filter((e) => e.Action === "fail").length);')
  go_passed=$((go_passed + p)); go_failed=$((go_failed + f))
done

passed=$((jest_passed + go_passed)); failed=$((jest_failed + go_failed))
if (( status != 0 && failed == 0 )); then failed=1; log "a check outside the test counts failed (type check, lint, types drift or go vet): see above"; fi
summary_printed=1
echo "${passed} passed, ${failed} failed"
(( status == 0 && failed == 0 ))
