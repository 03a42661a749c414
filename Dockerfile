# The render service as one image: `svc server` in the role chosen at start (api, worker or all),
# on Debian bookworm with the browser, encoder and fonts from Debian. Build from the repository:
#
#   docker build -t svc .
#   docker run --rm svc server --role all --host 0.0.0.0        # one process, SQLite in /var/lib/svc
#
# Kubernetes runs it as `server --role api` and `server --role worker` (deploy/kubernetes/,
# docs/deploy.md). Where no registry is reachable (CI here), deploy/container/stand-in-base.sh
# makes a local node:22-bookworm-slim from Debian and npm packages and the build runs with
# `podman build --pull=never`; on a machine behind a TLS-inspecting proxy pass the CA bundle as
# a build secret path through NODE_EXTRA_CA_CERTS (never copied into a layer).
#
# The template's image (templates/preview-render/Dockerfile) starts with the same steps, word for
# word, up to `COPY --from=modules`, so a layer cache builds them once for both: keep them the same.
# Layers go from least to most often changed (system packages, the lock file's modules, sources).

# --- production node_modules, with the one native module the service loads (better-sqlite3, the
# embedded role's database) built here, so the image carries no compiler.
FROM node:22-bookworm-slim AS modules
ARG NODE_EXTRA_CA_CERTS
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /srv/svc
COPY package.json package-lock.json ./
# The headers that ship with the base's Node: node-gyp needs no download. keytar (the desktop
# keychain, optional) fails to build without libsecret and is left out, as npm does for optional
# packages. The npm copies of FFmpeg, ffprobe and Chromium are removed: the image uses Debian's,
# which get Debian's security updates (SVC_FFMPEG_PATH etc. below).
RUN npm_config_nodedir=/usr/local npm ci --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/@ffmpeg-installer/linux-x64 node_modules/@ffprobe-installer/linux-x64 \
      node_modules/@sparticuz/chromium/bin node_modules/keytar \
 && npm cache clean --force
COPY bin ./bin
COPY src ./src
# The CLI's bundle (bin/svc.js builds it on first run); built here since the root is read-only
# at run time.
RUN node bin/svc.js --version

# --- the image.
FROM node:22-bookworm-slim
# chromium-headless-shell: the BeginFrame-capable headless build the engine captures with;
# ffmpeg: encoding and probing; fonts so text renders without any font in the composition; tini as
# PID 1, so a killed render's browser processes are reaped and SIGTERM reaches svc.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      chromium-headless-shell ffmpeg fonts-dejavu-core fonts-liberation ca-certificates tini \
 && apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin
WORKDIR /srv/svc
COPY --from=modules /srv/svc /srv/svc
# The data dir (scratch for a worker; SQLite and files for the embedded role) and /tmp (HOME, the
# browser's profile) are the only places written; Kubernetes mounts emptyDir volumes there under
# a read-only root.
RUN mkdir -p /var/lib/svc && chown 1000:1000 /var/lib/svc \
 && ln -s /srv/svc/bin/svc.js /usr/local/bin/svc
ENV NODE_ENV=production \
    HOME=/tmp \
    SVC_CHROMIUM_PATH=/usr/lib/chromium/chromium-headless-shell \
    SVC_FFMPEG_PATH=/usr/bin/ffmpeg \
    SVC_FFPROBE_PATH=/usr/bin/ffprobe
# The base image's `node` user, by number so Kubernetes' runAsNonRoot can check it.
USER 1000:1000
EXPOSE 7733
# /healthz answers on every role's listener.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.SVC_PORT || 7733) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/srv/svc/bin/svc.js"]
CMD ["server", "--role", "all", "--host", "0.0.0.0", "--data-dir", "/var/lib/svc"]
