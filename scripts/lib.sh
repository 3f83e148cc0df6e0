# Shared by up.sh and test.sh: make a fresh machine able to build and run eventrelay.
# shellcheck shell=bash

PNPM_VERSION=12

log() { printf '\033[1m[eventrelay]\033[0m %s\n' "$*" >&2; }

ensure_node() {
  if ! command -v node >/dev/null 2>&1; then
    log "Node.js 20.19 or newer is required: install it (e.g. 'apt-get install -y nodejs npm' on Debian 13, or from nodejs.org) and run this again."
    exit 1
  fi
  local major minor
  IFS=. read -r major minor _ <<<"$(node -p 'process.versions.node')"
  if (( major < 20 || (major == 20 && minor < 19) )); then
    log "Node.js $(node -v) is too old: eventrelay needs 20.19 or newer."
    exit 1
  fi
}

ensure_pnpm() {
  local tools="$PWD/.eventrelay/tools"
  [[ -x "$tools/node_modules/.bin/pnpm" ]] && export PATH="$tools/node_modules/.bin:$PATH"
  if command -v pnpm >/dev/null 2>&1; then return; fi
  # Globally where npm may write there (root, or a user prefix); else inside the checkout.
  if [[ -w "$(npm prefix -g 2>/dev/null)" ]]; then
    log "pnpm not found: installing pnpm@${PNPM_VERSION} globally with npm"
    npm install -g "pnpm@${PNPM_VERSION}" >/dev/null 2>&1 && return
  fi
  log "pnpm not found: installing pnpm@${PNPM_VERSION} into .eventrelay/tools"
  npm install --prefix "$tools" "pnpm@${PNPM_VERSION}" >/dev/null 2>&1 || {
    log "could not install pnpm; run 'npm install -g pnpm@${PNPM_VERSION}' yourself and try again"
    exit 1
  }
  export PATH="$tools/node_modules/.bin:$PATH"
}

install_deps() {
  log "installing dependencies (pnpm install --frozen-lockfile)"
  pnpm install --frozen-lockfile --reporter=silent
}

# host and port of REDIS_URL (default redis://127.0.0.1:6379)
redis_host_port() {
  local url="${REDIS_URL:-redis://127.0.0.1:6379}"
  local rest="${url#*://}"
  rest="${rest##*@}"
  rest="${rest%%/*}"
  local host="${rest%%:*}" port="6379"
  [[ "$rest" == *:* ]] && port="${rest##*:}"
  [[ -z "$host" ]] && host=127.0.0.1
  printf '%s %s\n' "$host" "$port"
}

redis_answers() {
  local host port reply
  read -r host port <<<"$(redis_host_port)"
  # bash's /dev/tcp: no redis-cli needed. An auth-protected server answers -NOAUTH, which still means "up".
  reply=$( (exec 3<>"/dev/tcp/${host}/${port}" && printf 'PING\r\n' >&3 && IFS= read -r -t 2 line <&3 && printf '%s' "$line") 2>/dev/null || true)
  [[ "$reply" == +PONG* || "$reply" == -NOAUTH* || "$reply" == -ERR*auth* ]]
}

# Starts a local redis-server when nothing answers at REDIS_URL. Sets STARTED_REDIS_PID when it did.
ensure_redis() {
  STARTED_REDIS_PID=""
  if redis_answers; then return; fi
  local host port
  read -r host port <<<"$(redis_host_port)"
  if [[ "$host" != "127.0.0.1" && "$host" != "localhost" ]]; then
    log "nothing answers at REDIS_URL=${REDIS_URL}; start that Redis or point REDIS_URL at one that runs"
    exit 1
  fi
  if ! command -v redis-server >/dev/null 2>&1; then
    log "no Redis answers on ${host}:${port} and redis-server is not installed."
    log "Install it:  sudo apt-get install -y redis-server   (macOS: brew install redis)"
    log "or point REDIS_URL at a running Redis 6.2+, e.g.  REDIS_URL=redis://my-redis:6379 $0"
    exit 1
  fi
  mkdir -p .eventrelay/redis
  log "no Redis on ${host}:${port}: starting redis-server (data in .eventrelay/redis, AOF on)"
  # noeviction: an evicted key would be a lost job; the bound keeps a flood from taking the machine.
  redis-server --port "$port" --bind 127.0.0.1 --dir "$PWD/.eventrelay/redis" --appendonly yes --save '' \
    --maxmemory "${REDIS_MAXMEMORY:-768mb}" --maxmemory-policy noeviction \
    --logfile "$PWD/.eventrelay/redis/redis.log" --daemonize yes --pidfile "$PWD/.eventrelay/redis/redis.pid"
  for _ in $(seq 1 50); do
    if redis_answers; then
      STARTED_REDIS_PID=$(cat .eventrelay/redis/redis.pid 2>/dev/null || true)
      return
    fi
    sleep 0.1
  done
  log "redis-server did not come up; see .eventrelay/redis/redis.log"
  exit 1
}

# Go for packages/analytics-go: installed from Debian's packages when missing and we may (root with
# apt-get); otherwise the tests that need it fail and say how to get it.
# The ops tests run Prometheus's promtool on the alert rules and a real Prometheus against the
# running processes (Debian's package brings both).
ensure_prometheus() {
  command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 && return 0
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    log "prometheus/promtool not found: installing prometheus (apt-get)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null; } || log "could not install prometheus"
  else
    log "prometheus/promtool not found: install them (sudo apt-get install -y prometheus) for the ops tests"
  fi
}

ensure_go() {
  compgen -G "packages/*/go.mod" >/dev/null || return 0
  command -v go >/dev/null 2>&1 && return 0
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    log "go not found: installing golang-go (apt-get)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq golang-go >/dev/null; } || log "could not install golang-go"
  else
    log "go not found: install it (sudo apt-get install -y golang-go, or https://go.dev/dl/) for the Go client's tests"
  fi
}
