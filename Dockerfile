# One image for every Matte process: the API (npm start), a worker (bin/matte worker) and the CPU
# inference server (bin/matte inference-server). deploy/compose.yaml runs them.
FROM node:20-bookworm-slim
WORKDIR /app
RUN npm install -g npm@11
COPY package.json package-lock.json ./
COPY packages ./packages
RUN npm ci --omit=dev --include-workspace-root
COPY . .
ENV PORT=8080 HOST=0.0.0.0 DATA_DIR=/data
EXPOSE 8080 9464
CMD ["npm", "start"]
