# syntax=docker/dockerfile:1.7
# Asterism attestation-monitor image: re-attests every node, quarantines failing ones (metrics :9206; docs/adr/0037).
# Build from the repository root:
#   docker build -f deploy/docker/attestation-monitor.Dockerfile -t <registry>/asterism/attestation-monitor:<tag> .
# Stage 1 installs the workspace and bundles apps/attestation-monitor/src/main.ts with esbuild
# (deploy/src/bundle.ts) into ESM (main.mjs and its chunks/); stage 2 is a small Node runtime with only that bundle.
ARG NODE_VERSION=20
ARG RUNTIME_IMAGE=node:20-alpine

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
COPY . .
RUN npm ci --ignore-scripts --no-audit --no-fund
RUN npx tsx deploy/src/bundle-cli.ts attestation-monitor && test -s dist/attestation-monitor/main.mjs

FROM ${RUNTIME_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Root-owned and read-only: the process cannot modify its own code (readOnlyRootFilesystem in the charts).
COPY --from=build --chown=0:0 --chmod=0555 /src/dist/attestation-monitor/ /app/
USER 65532:65532
EXPOSE 9206
# Node flags: deploy/src/node-flags.ts (kept in step by dockerfiles.spec.ts).
ENTRYPOINT ["node", "--enable-source-maps", "/app/main.mjs"]
