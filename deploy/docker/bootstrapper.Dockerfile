# syntax=docker/dockerfile:1.7
# Asterism bootstrapper image: initialises or joins a node (InitServer gRPC :9000).
# Build from the repository root:
#   docker build -f deploy/docker/bootstrapper.Dockerfile -t <registry>/asterism/bootstrapper:<tag> .
# Stage 1 installs the workspace and bundles apps/bootstrapper/src/main.ts with esbuild
# (deploy/src/bundle.ts) into ESM (main.mjs and its chunks/); stage 2 is a small Node runtime with only that bundle.
# The bootstrapper manages the node itself (TPM, disks, kubeadm, host network); it runs from the
# node image as root (docker run --user 0 --privileged --network host ...). The image default
# user is unprivileged so that it never runs as root by accident.
ARG NODE_VERSION=20
ARG RUNTIME_IMAGE=node:20-alpine

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
COPY . .
RUN npm ci --ignore-scripts --no-audit --no-fund
RUN npx tsx deploy/src/bundle-cli.ts bootstrapper && test -s dist/bootstrapper/main.mjs

FROM ${RUNTIME_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Root-owned and read-only: the process cannot modify its own code (readOnlyRootFilesystem in the charts).
COPY --from=build --chown=0:0 --chmod=0555 /src/dist/bootstrapper/ /app/
USER 65532:65532
EXPOSE 9000
ENTRYPOINT ["node", "--enable-source-maps", "/app/main.mjs"]
