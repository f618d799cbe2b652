# syntax=docker/dockerfile:1.7
# Asterism joinservice image: issues join tickets over aTLS (gRPC :9090, metrics :9092).
# Build from the repository root:
#   docker build -f deploy/docker/joinservice.Dockerfile -t <registry>/asterism/joinservice:<tag> .
# Stage 1 installs the workspace and bundles apps/joinservice/src/main.ts with esbuild
# (deploy/src/bundle.ts) into ESM (main.mjs and its chunks/); stage 2 is a small Node runtime with only that bundle.
# The joinservice chart runs it as uid 0 without any capabilities (it must read root-owned 0600
# files in the host's /etc/kubernetes/pki); the image default user is unprivileged.
ARG NODE_VERSION=20
ARG RUNTIME_IMAGE=node:20-alpine

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
COPY . .
RUN npm ci --ignore-scripts --no-audit --no-fund
RUN npx tsx deploy/src/bundle-cli.ts joinservice && test -s dist/joinservice/main.mjs

FROM ${RUNTIME_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Root-owned and read-only: the process cannot modify its own code (readOnlyRootFilesystem in the charts).
COPY --from=build --chown=0:0 --chmod=0555 /src/dist/joinservice/ /app/
USER 65532:65532
EXPOSE 9090 9092
ENTRYPOINT ["node", "--enable-source-maps", "/app/main.mjs"]
