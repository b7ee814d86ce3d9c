# One image for every Matte process: the API (npm start), a worker (bin/matte worker) and the CPU
# inference server (bin/matte inference-server). deploy/compose.yaml runs them.
# The studio is built with the dev dependencies (Vite, Preact) in a first stage; the image keeps its files only.
FROM node:20-bookworm-slim AS studio
WORKDIR /app
RUN npm install -g npm@11
COPY package.json package-lock.json ./
COPY packages ./packages
RUN npm ci --ignore-scripts --include-workspace-root
COPY scripts/build-studio.mjs scripts/build-cli.mjs ./scripts/
COPY studio ./studio
RUN npm run prepare

FROM node:20-bookworm-slim
WORKDIR /app
RUN npm install -g npm@11
COPY package.json package-lock.json ./
COPY packages ./packages
COPY scripts/build-studio.mjs scripts/build-cli.mjs ./scripts/
RUN npm ci --omit=dev --include-workspace-root
COPY . .
COPY --from=studio /app/studio/dist ./studio/dist
# bin/matte's JavaScript, built once here rather than at the container's first start.
RUN node scripts/build-cli.mjs
ENV PORT=8080 HOST=0.0.0.0 DATA_DIR=/data
EXPOSE 8080 9464
CMD ["npm", "start"]
