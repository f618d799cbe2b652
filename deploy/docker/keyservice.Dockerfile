# syntax=docker/dockerfile:1.7
# Asterism keyservice image: derives data keys from the master secret (plaintext gRPC :9000, metrics :9101).
# Build from the repository root:
#   docker build -f deploy/docker/keyservice.Dockerfile -t <registry>/asterism/keyservice:<tag> .
# Stage 1 installs the workspace and bundles apps/keyservice/src/main.ts with esbuild
# (deploy/src/bundle.ts) into ESM (main.mjs and its chunks/); stage 2 is a small Node runtime with only that bundle.
ARG NODE_VERSION=20
ARG RUNTIME_IMAGE=node:20-alpine

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
COPY . .
RUN npm ci --ignore-scripts --no-audit --no-fund
RUN npx tsx deploy/src/bundle-cli.ts keyservice && test -s dist/keyservice/main.mjs

FROM ${RUNTIME_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Root-owned and read-only: the process cannot modify its own code (readOnlyRootFilesystem in the charts).
COPY --from=build --chown=0:0 --chmod=0555 /src/dist/keyservice/ /app/
USER 65532:65532
EXPOSE 9000 9101
# Node flags: deploy/src/node-flags.ts (kept in step by dockerfiles.spec.ts).
ENTRYPOINT ["node", "--enable-source-maps", "--max-semi-space-size=1", "--max-old-space-size=48", "--single-threaded", "/app/main.mjs"]
