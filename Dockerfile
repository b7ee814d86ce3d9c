# One image for every Matte process: the API (npm start), a worker (bin/matte worker) and the CPU
# inference server (bin/matte inference-server). deploy/compose.yaml runs them.
# The studio is built with the dev dependencies (Vite, Preact) in a first stage, and the cut-out's C passes
# (native/, binding.gyp) with a compiler there; the image keeps their files only.
FROM node:20-bookworm-slim AS studio
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
RUN npm install -g npm@11
COPY package.json package-lock.json ./
COPY packages ./packages
RUN npm ci --ignore-scripts --include-workspace-root
COPY scripts/build-studio.mjs scripts/build-cli.mjs ./scripts/
COPY studio ./studio
RUN npm run prepare
COPY binding.gyp ./
COPY native ./native
RUN npm run install

FROM node:20-bookworm-slim
WORKDIR /app
RUN npm install -g npm@11
COPY package.json package-lock.json ./
COPY packages ./packages
COPY scripts/build-studio.mjs scripts/build-cli.mjs ./scripts/
# The project's own install script finds no compiler here (nor binding.gyp yet) and says so: its C passes
# were built in the first stage and are copied in below.
RUN npm ci --omit=dev --include-workspace-root
COPY . .
COPY --from=studio /app/studio/dist ./studio/dist
COPY --from=studio /app/build/Release/matte_native.node ./build/Release/matte_native.node
# bin/matte's JavaScript, built once here rather than at the container's first start.
RUN node scripts/build-cli.mjs
ENV PORT=8080 HOST=0.0.0.0 DATA_DIR=/data
EXPOSE 8080 9464
CMD ["npm", "start"]
