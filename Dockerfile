# The KubeCell hook server image.
#
#   docker build -t <registry>/kubecell-hooks:0.1.0 .
#
# TypeScript runs through tsx (docs/design/decisions.md, D1), so the image holds the sources
# of hooks/ (tests excluded by .dockerignore) and the production dependencies, tsx among them;
# nothing is compiled ahead. The command is the one manifests/hook-server/deployment.yaml runs
# (test/install/dockerfile.test.ts checks that they agree and that everything it imports is
# copied).

# --- production dependencies only (npm ci --omit=dev), from the lockfile
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# --- runtime: Node 20, a non-root user, no npm needed
FROM node:20-bookworm-slim
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
