# The KubeCell hook server image.
#
#   docker build -t <registry>/kubecell-hooks:0.1.0 .
#
# TypeScript runs through tsx (docs/design/decisions.md, D1), so the image holds the sources
# of hooks/ (tests excluded by .dockerignore) and the production dependencies, tsx among them;
# nothing is compiled ahead. The command is the one manifests/hook-server/deployment.yaml runs
# (test/install/dockerfile.test.ts checks that they agree and that everything it imports is
# copied).

# The Node.js release the tests run on: .node-version, which .ci/run installs for CI
# (test/install/dockerfile.test.ts checks that the two agree; D24).
ARG NODE_VERSION=24.22.3

# --- production dependencies only (npm ci --omit=dev), from the lockfile
FROM node:${NODE_VERSION}-trixie-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# --- runtime: the same Node, a non-root user, no package manager
FROM node:${NODE_VERSION}-trixie-slim
# npm, npx, corepack and yarn are not needed to run the server: removed, so nothing in the
# container can install or run packages with them.
RUN rm -rf /usr/local/lib/node_modules \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
      /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-v*
ENV NODE_ENV=production \
    TSX_DISABLE_CACHE=1
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
# package.json: "type": "module" makes Node and tsx load hooks/*.ts as ES modules.
# tsconfig.json: the compiler options tsx applies.
COPY package.json tsconfig.json ./
COPY hooks/ ./hooks/
USER 65532:65532
EXPOSE 8080 9443
ENTRYPOINT ["node", "--import", "tsx", "hooks/main.ts"]
