# The image of a Lifeboat Fargate task (ARM64): functions/<TASK>/main.ts bundled with esbuild (code
# split, so a job loads only the SDK clients it uses: a file job never parses EC2's), run
# on Node.js 22 as an unprivileged user. TASK is the task's folder under functions/: hook-runner,
# or data-mover (block mode needs no file access; a file-mode task that must read or restore every
# owner's files runs it as root through its task definition's `user`; its job comes in
# $LIFEBOAT_DATA_MOVER_JOB, docs/data-mover.md). Built from the repository root:
#   docker build -f functions/common/fargate-task.Dockerfile --build-arg TASK=data-mover .
# The data mover's set-times helper (Go, standard library only): file-mode restores set times to the
# nanosecond with it, which Node cannot (functions/data-mover/file-times.ts); it sits beside main.mjs.
FROM public.ecr.aws/docker/library/golang:1.26-alpine AS helpers
COPY functions/data-mover/set-times /src/set-times
RUN cd /src/set-times && CGO_ENABLED=0 GOTOOLCHAIN=local go build -trimpath -ldflags=-s -o /out/set-times .

FROM public.ecr.aws/docker/library/node:22-alpine AS build
ARG TASK
WORKDIR /src
COPY package.json package-lock.json ./
# Runtime dependencies only, and the bundler; no install scripts run.
RUN npm ci --omit=dev --ignore-scripts && npm install --no-save --ignore-scripts esbuild@0.28
COPY tsconfig.json ./
COPY shared ./shared
COPY functions ./functions
RUN test -n "$TASK" && npx esbuild "functions/$TASK/main.ts" --bundle --platform=node --target=node22 --format=esm \
      --sourcemap --splitting --outdir=/out --entry-names=[name] --chunk-names=[name]-[hash] --out-extension:.js=.mjs \
      --banner:js="import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);"

FROM public.ecr.aws/docker/library/node:22-alpine
WORKDIR /app
COPY --from=build /out/ ./
COPY --from=helpers /out/set-times ./
USER node
# ECS StopTask sends SIGTERM: node is PID 1 here and handles it (a data mover job ends Cancelled, exit 3).
ENTRYPOINT ["node", "--enable-source-maps", "main.mjs"]
