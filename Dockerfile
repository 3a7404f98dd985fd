# ibt-recon: TypeScript run directly by Node 24 (type stripping), no build step.
FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# Runtime dependencies only (the Temporal worker bundles workflows/ at start with webpack + swc,
# which come with @temporalio/worker).
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY bin ./bin
COPY cli ./cli
COPY config ./config
COPY domain ./domain
COPY provider ./provider
COPY ingest ./ingest
COPY reconcile ./reconcile
COPY db ./db
COPY migrations ./migrations
COPY observability ./observability
COPY workflows ./workflows
COPY activities ./activities
COPY workers ./workers
COPY workbench ./workbench
COPY sandbox ./sandbox
COPY tsconfig.json ./
USER node
# Same V8 young-generation size as the bin/recon.mjs shebang: keeps bulk loads under 300 MB RSS.
ENTRYPOINT ["node", "--max-semi-space-size=16", "bin/recon.mjs"]
CMD ["worker"]
