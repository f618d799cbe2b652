# syntax=docker/dockerfile:1.7
# Asterism verification-service image: serves the node's attestation for a caller's nonce
# (verify.API gRPC :9090, HTTP :8080; docs/protocol/verification.md).
# Build from the repository root:
#   docker build -f deploy/docker/verification-service.Dockerfile -t <registry>/asterism/verification-service:<tag> .
# Stage 1 installs the workspace and bundles apps/verification-service/src/main.ts (the node's
# verification service) with esbuild (deploy/src/bundle.ts) into ESM (main.mjs and its chunks/); stage 2 is a
# small Node runtime with only that bundle. The chart runs it as root, privileged only when the TPM
# is a device (docs/adr/0028); the image default user is unprivileged so that it never runs as
# root by accident.
ARG NODE_VERSION=20
ARG RUNTIME_IMAGE=node:20-alpine

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
COPY . .
RUN npm ci --ignore-scripts --no-audit --no-fund
RUN npx tsx deploy/src/bundle-cli.ts verification-service && test -s dist/verification-service/main.mjs

FROM ${RUNTIME_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Root-owned and read-only: the process cannot modify its own code (readOnlyRootFilesystem in the chart).
COPY --from=build --chown=0:0 --chmod=0555 /src/dist/verification-service/ /app/
USER 65532:65532
EXPOSE 9090 8080
# Node flags: deploy/src/node-flags.ts (kept in step by dockerfiles.spec.ts).
ENTRYPOINT ["node", "--enable-source-maps", "--max-semi-space-size=1", "--max-old-space-size=48", "--single-threaded", "/app/main.mjs"]
