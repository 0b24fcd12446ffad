# The worker and bridge image: compiled JavaScript and the workflow bundle (npm run build), the
# production npm packages, non-root, for a read-only root filesystem. One image, two commands:
#   worker: node dist/workers/main.js (the default)    bridge: node dist/starter/main.js
# Configuration from the environment (docs/operator/configuration.md).
# Node 24, the active LTS, by its full version. Pin the digest too where a registry is at hand:
#   docker buildx imagetools inspect node:24.21.0-trixie-slim   (then FROM node:24.21.0-trixie-slim@sha256:…)
ARG NODE_IMAGE=node:24.21.0-trixie-slim
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# The commit the worker's build id names (.git is not copied): docker build --build-arg KLM_SOURCE_COMMIT=$(git rev-parse HEAD)
ARG KLM_SOURCE_COMMIT
RUN node scripts/build.mjs && npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
# V8 in Node 24 lets each isolate's young generation grow to two 32 MB semi-spaces (Node 20's: 16),
# and the worker has two isolates (its workflow thread's too): 4 MB took the bench's peak RSS of
# worker + bridge from 448 to 379 MB at 20 Kymas x 3 modules with no more CPU than the machine's
# noise (docs/operator/scaling.md). bench/image-env.ts starts the bench's processes with this
# environment too.
ENV NODE_OPTIONS=--max-semi-space-size=4
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
# klm up --kubeconfig installs the CRDs from here.
COPY --from=build /src/deploy/crds ./deploy/crds
# The node image's unprivileged user, by number so that runAsNonRoot can check it (uid 1000, as
# the Deployments' runAsUser). Nothing is written under /app or $HOME: the Deployments mount
# emptyDirs at /tmp and at /var/cache/klm (the worker's blob cache) on a read-only root, as
# test/integration/dist.test.ts runs the compiled processes.
USER 1000:1000
ENTRYPOINT ["node"]
# Worker and bridge in one process (`klm run`), for a fleet that fits one machine; the Deployments
# of deploy/kustomize run them apart (args: dist/workers/main.js, dist/starter/main.js) to scale out.
CMD ["dist/cli/klm.js", "run"]
