# syntax=docker/dockerfile:1
#
# One image for every eventrelay process; the container command picks the process:
#
#   docker run eventrelay:local node services/ingest/dist/index.js             (the default CMD)
#   docker run eventrelay:local node services/router/dist/index.js
#   docker run eventrelay:local node services/webhook-delivery/dist/index.js
#   docker run eventrelay:local node services/audiences/dist/index.js
#   docker run eventrelay:local node services/admin/dist/index.js
#
# Layout of the final image (WORKDIR /app): services/<name>/dist, packages/{config,runtime,stores,console}/dist,
# every package.json, and a production-only pnpm node_modules tree (root node_modules/.pnpm plus
# the per-package symlinks), so `node services/<name>/dist/index.js` resolves exactly as it does in
# a checkout after `pnpm install && pnpm build`.
#
# Stages:
#   base       node:22.20.0-bookworm-slim (Node 22 LTS, an exact tag: a rebuild gets the same Node)
#              + pnpm 12.21.0 (npm i -g; corepack is not used: the corepack that
#              bundled corepack cannot be relied on to verify the signatures of current pnpm releases)
#   build      full install (dev deps: typescript, @types/node, vite) and `tsc -b` of the five services,
#              then `vite build` of the web console (packages/console/dist, served by admin at /console/)
#   prod-deps  `pnpm install --prod --frozen-lockfile` from the manifests and the lockfile only
#   runtime    the same node image without pnpm: prod node_modules + compiled dist, non-root (uid 1000)
#
# Build:  docker build -t eventrelay:local .

ARG NODE_IMAGE=node:22.20.0-bookworm-slim
ARG PNPM_VERSION=12.21.0

# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS base
ARG PNPM_VERSION
ENV CI=true
RUN npm install -g "pnpm@${PNPM_VERSION}" && pnpm --version
WORKDIR /app
# The workspace manifests and the lockfile: enough for pnpm to install (and to check that the
# lockfile matches every manifest, --frozen-lockfile) without the sources, so the install layers
# stay cached while only code changes.
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml ./
COPY packages/config/package.json packages/config/
COPY packages/runtime/package.json packages/runtime/
COPY packages/stores/package.json packages/stores/
COPY packages/console/package.json packages/console/
# The harness and the bench are dev tooling, not shipped: their manifests only let the frozen install
# check the lockfile.
COPY packages/testkit/package.json packages/testkit/
COPY bench/package.json bench/
COPY services/ingest/package.json services/ingest/
COPY services/router/package.json services/router/
COPY services/webhook-delivery/package.json services/webhook-delivery/
COPY services/audiences/package.json services/audiences/
COPY services/admin/package.json services/admin/

# ---------------------------------------------------------------------------------------------
FROM base AS build
RUN --mount=type=cache,id=eventrelay-pnpm-store,target=/pnpm/store \
    pnpm install --frozen-lockfile --store-dir /pnpm/store
COPY tsconfig.base.json ./
COPY packages/config packages/config
COPY packages/runtime packages/runtime
COPY packages/stores packages/stores
COPY services services
# What `pnpm build` (tsc -b at the root) does for the shipped code: the root tsconfig also
# references test/ and bench/ (type-check only, dev tooling) which are not part of the image, so
# the five services are built directly; tsc -b follows their references to packages/config,
# packages/runtime and packages/stores. Declaration files and build info are not needed at run time.
RUN pnpm exec tsc -b services/ingest services/router services/webhook-delivery services/audiences services/admin \
 && find packages/*/dist services/*/dist \( -name '*.d.ts' -o -name '*.d.ts.map' -o -name '*.tsbuildinfo' \) -delete
# The web console the admin service serves at /console/: vite bundles it (Preact, uPlot) into
# static files, so the image ships packages/console/dist and none of its libraries.
COPY packages/console packages/console
RUN pnpm --dir packages/console build

# ---------------------------------------------------------------------------------------------
FROM base AS prod-deps
# dependencies only, no devDependencies (the root package.json has nothing else, so this is the
# union of what the workspace packages need at run time: bullmq, ioredis, pino, prom-client, ajv,
# express, undici and what they pull in); install scripts follow allowBuilds in
# pnpm-workspace.yaml (msgpackr-extract uses its prebuilt binary; bullmq falls back to JS without it).
RUN --mount=type=cache,id=eventrelay-pnpm-store,target=/pnpm/store \
    pnpm install --prod --frozen-lockfile --store-dir /pnpm/store

# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
# A 32 MB young generation (V8's default is 16 MB): the services allocate many short-lived objects
# per batch of calls, and twice the room lets most of them die before a scavenge. Measured by
# pnpm bench:pipeline: 10% less CPU per delivered call, about 25 MB more RSS per process.
# scripts/run-local.mjs and the benches start the services with the same flag.
ENV NODE_OPTIONS=--max-semi-space-size=32
WORKDIR /app
# Owned by root and not writable by the process (the pods run with a read-only root file system);
# pnpm's symlinks are relative, so the tree works unchanged at /app.
COPY --from=prod-deps /app ./
COPY --from=build /app/packages/config/dist packages/config/dist
COPY --from=build /app/packages/runtime/dist packages/runtime/dist
COPY --from=build /app/packages/stores/dist packages/stores/dist
COPY --from=build /app/services/ingest/dist services/ingest/dist
COPY --from=build /app/services/router/dist services/router/dist
COPY --from=build /app/services/webhook-delivery/dist services/webhook-delivery/dist
COPY --from=build /app/services/audiences/dist services/audiences/dist
COPY --from=build /app/services/admin/dist services/admin/dist
COPY --from=build /app/packages/console/dist packages/console/dist
# The "node" user of the official image, by number: Kubernetes can only verify runAsNonRoot
# against a numeric user.
USER 1000:1000
# ingest 8080, admin 8081, ops servers of router 9101, webhook-delivery 9102, audiences 9103
EXPOSE 8080 8081 9101 9102 9103
# Each process shuts down gracefully on SIGTERM; node runs as PID 1 and handles it itself.
STOPSIGNAL SIGTERM
CMD ["node", "services/ingest/dist/index.js"]
