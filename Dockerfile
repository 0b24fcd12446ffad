# The worker and bridge image: compiled JavaScript and the workflow bundle (npm run build), the
# production npm packages, non-root. One image, two commands:
#   worker: node dist/workers/main.js (the default)    bridge: node dist/starter/main.js
# Configuration from the environment (README, Configuration).
FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN node scripts/build.mjs && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
# klm up --kubeconfig installs the CRDs from here.
COPY --from=build /src/deploy/crds ./deploy/crds
# The node image's unprivileged user (uid 1000).
USER node
ENTRYPOINT ["node"]
CMD ["dist/workers/main.js"]
