# Refract: multi-stage build; runs as a non-root user; the store and the proving keys are volumes.
FROM node:20-bookworm AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends g++ make python3 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
COPY native ./native
RUN npm install --no-audit --no-fund
COPY . .
RUN node bin/precompile.mjs && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production REFRACT_DB=/data REFRACT_KEYS_DIR=/keys
WORKDIR /app
RUN groupadd -r refract && useradd -r -g refract -d /app refract && mkdir -p /data /keys && chown refract:refract /data /keys
COPY --from=build --chown=refract:refract /app /app
USER refract
VOLUME ["/data", "/keys"]
EXPOSE 8784
ENTRYPOINT ["node", "bin/refract.mjs"]
CMD ["start"]
