#!/usr/bin/env bash
# Installs code-server 4.99.4 (VS Code 1.99.3, runs on Node 20) from the npm registry for the VS Code
# tests (test/helpers/code-server.ts), plus the Debian packages they need (ripgrep, chromium, build tools,
# libkrb5-dev). code-server's own postinstall downloads ripgrep from GitHub, which is not reachable here,
# so this follows the offline recipe instead (shared notes, testing-offline §1b): install without
# scripts, rebuild the native modules locally, and point @vscode/ripgrep at Debian's /usr/bin/rg.
#
#   SWARM_CODE_SERVER_DIR   install location (default: ~/.cache/swarm-lab/code-server-4.99.4)
#
# Idempotent: a marker file is written last; when it exists the script only checks the Debian packages.
# About a minute on 2 cores; ~310 MB.
set -euo pipefail

VERSION=4.99.4
DIR="${SWARM_CODE_SERVER_DIR:-$HOME/.cache/swarm-lab/code-server-$VERSION}"
MARKER="$DIR/.swarm-lab-installed"
t0=$SECONDS
step() { echo "[install-code-server] +$((SECONDS - t0))s $*"; }

# --- Debian packages (only the missing ones; apt-get update only when the plain install fails) -------
need=()
[ -x /usr/bin/rg ] || need+=(ripgrep)
[ -x /usr/bin/chromium ] || need+=(chromium fonts-liberation)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need+=(libkrb5-dev)
command -v make >/dev/null 2>&1 || need+=(make)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
command -v git >/dev/null 2>&1 || need+=(git)
if [ ${#need[@]} -gt 0 ]; then
  step "apt-get install ${need[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y --no-install-recommends "${need[@]}" \
    || { $sudo apt-get update && $sudo apt-get install -y --no-install-recommends "${need[@]}"; }
fi

if [ -f "$MARKER" ]; then
  step "code-server $VERSION already installed in $DIR"
  exit 0
fi

# --- code-server ------------------------------------------------------------------------------------
mkdir -p "$(dirname "$DIR")"
exec 9>"$DIR.lock"
flock 9 # another run may be installing right now: wait for it, then re-check
if [ -f "$MARKER" ]; then step "installed by a concurrent run"; exit 0; fi

# Native modules build against Node's own headers; never let node-gyp download them.
if [ -z "${npm_config_nodedir:-}" ]; then
  prefix="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
  [ -f "$prefix/include/node/node.h" ] && export npm_config_nodedir="$prefix"
fi
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

STAGE="$DIR.partial"
rm -rf "$STAGE" "$DIR"
mkdir -p "$STAGE"
cd "$STAGE"
printf '{ "name": "swarm-lab-code-server", "private": true }\n' > package.json

step "npm i code-server@$VERSION --ignore-scripts"
npm i "code-server@$VERSION" --ignore-scripts --no-fund --no-audit --loglevel=error
step "npm rebuild argon2"
npm rebuild argon2 --loglevel=error

cd node_modules/code-server/lib/vscode
step "lib/vscode: npm install --omit=dev --ignore-scripts"
npm install --omit=dev --ignore-scripts --no-fund --no-audit --loglevel=error
mapfile -t natives < <(find node_modules -maxdepth 3 -name binding.gyp | xargs -n1 dirname | sed 's|^node_modules/||' | grep -v windows | sort)
step "lib/vscode: npm rebuild ${natives[*]}"
# node-pty's post-install step runs `npx node-gyp configure -f compile_commands_json`, which npm cancels
# (yes=false) after pty.node is built; so the exit code is not trusted, the built files are checked below.
rebuild_log="$STAGE/npm-rebuild.log"
npm rebuild "${natives[@]}" --loglevel=error >"$rebuild_log" 2>&1 || step "(npm rebuild exited $?, as expected for node-pty's npx step; checking the built modules)"
for m in "${natives[@]}"; do
  case "$m" in @parcel/watcher) continue ;; esac # uses the prebuilt @parcel/watcher-linux-x64-glibc
  if ! find "node_modules/$m" -path '*/build/Release/*.node' | grep -q .; then
    tail -n 60 "$rebuild_log" >&2
    echo "[install-code-server] native module $m was not built (full log: $rebuild_log)" >&2
    exit 1
  fi
done

step "ripgrep, asar and helper symlinks"
mkdir -p node_modules/@vscode/ripgrep/bin
ln -sf /usr/bin/rg node_modules/@vscode/ripgrep/bin/rg
ln -sfn node_modules node_modules.asar
(cd bin/remote-cli && ln -sf code-linux.sh code-server)
(cd bin/helpers && ln -sf browser-linux.sh browser.sh)
step "lib/vscode/extensions: npm install --omit=dev --ignore-scripts"
(cd extensions && npm install --omit=dev --ignore-scripts --no-fund --no-audit --loglevel=error)

# Smoke check, kept out of $HOME (any code-server call writes ~/.config/code-server otherwise).
cd "$STAGE"
scratch="$(mktemp -d /tmp/csi-XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
out="$(XDG_CONFIG_HOME="$scratch/c" XDG_DATA_HOME="$scratch/d" TMPDIR="$scratch" \
  node_modules/.bin/code-server --config "$scratch/cfg.yaml" --version 2>&1)" || true
got="$(grep -m1 "^$VERSION " <<<"$out" || true)"
if [ -z "$got" ]; then echo "[install-code-server] unexpected --version output: $out" >&2; exit 1; fi
step "code-server --version: $got"

cd /
mv "$STAGE" "$DIR"
echo "code-server $VERSION $(date -u +%FT%TZ)" > "$MARKER"
step "done: $DIR ($(du -sh "$DIR" | cut -f1))"
