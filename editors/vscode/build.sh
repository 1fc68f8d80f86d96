#!/usr/bin/env bash
# Builds the VS Code extension into editors/vscode/loopfix.vsix (npm ci, type check, esbuild
# bundle, vsce package). With --e2e, also installs what tests/test_vscode.py drives it with:
# Debian's chromium (apt), and Node 24 with code-server under .cache/editors/tools (npm).
#
# What cannot be installed here (no npm, no root for apt, no registry) is written to
# .cache/editors/skip-reason.txt, printed, and the end-to-end tests skip with it; the script
# then exits 0. A failure to compile or package the extension itself exits non-zero.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="$ROOT/.cache/editors"
TOOLS="$CACHE/tools"
REASON="$CACHE/skip-reason.txt"
NODE_VERSION=24.21.0
CODE_SERVER_VERSION=4.139.1
APT_PACKAGES=(chromium libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev pkg-config build-essential)
E2E=0
[[ "${1:-}" == "--e2e" ]] && E2E=1

mkdir -p "$CACHE"
rm -f "$REASON"
started=$SECONDS

skip() {
    echo "editors: $*" | tee -a "$REASON" >&2
}

step() {
    echo "editors: $* (at ${SECONDS}s)"
}

# -- the extension --------------------------------------------------------------------------
if ! command -v npm >/dev/null; then
    skip "npm is not installed: the VS Code extension is not built"
    exit 0
fi
cd "$HERE"
stamp="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [[ "$(cat node_modules/.loopfix-lock 2>/dev/null)" != "$stamp" ]]; then
    step "npm ci"
    if ! npm ci --no-audit --no-fund --loglevel=error; then
        skip "npm ci failed in editors/vscode (is the npm registry reachable?)"
        exit 0
    fi
    echo "$stamp" > node_modules/.loopfix-lock
fi
step "packaging the extension"
npm run --silent package || exit 1

[[ $E2E == 1 ]] || exit 0

# -- apt: chromium, and the headers code-server's native modules build against -------------
not_installed() {
    local package
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
            echo "$package"
    done
}
mapfile -t missing < <(not_installed "${APT_PACKAGES[@]}")
if ((${#missing[@]})); then
    sudo=()
    if [[ "$(id -u)" != 0 ]]; then
        if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
            sudo=(sudo -n)
        fi
    fi
    if [[ "$(id -u)" != 0 && ${#sudo[@]} == 0 ]]; then
        skip "apt needs root (no password-less sudo) to install: ${missing[*]}"
    elif ! command -v apt-get >/dev/null; then
        skip "no apt-get to install: ${missing[*]}"
    else
        step "apt-get install ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        if ! { "${sudo[@]}" apt-get update -qq &&
            "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null; }; then
            skip "apt-get install ${missing[*]} failed"
        fi
    fi
fi
command -v chromium >/dev/null || skip "chromium is not installed"

# -- Node 24 and code-server, from the npm registry ----------------------------------------
code_server="$TOOLS/node_modules/.bin/code-server"
export CODE_SERVER_CONFIG="$CACHE/code-server.yaml"  # not ~/.config/code-server
export PATH="$TOOLS/node_modules/.bin:$PATH"
if ! "$code_server" --version 2>/dev/null | grep -q "^$CODE_SERVER_VERSION "; then
    mapfile -t headers < <(not_installed "${APT_PACKAGES[@]:1}")
    if ((${#headers[@]})); then
        skip "code-server is not installed: its native modules need ${headers[*]}"
        exit 0
    fi
    mkdir -p "$TOOLS"
    cd "$TOOLS"
    echo '{"name": "loopfix-editor-tools", "private": true}' > package.json
    rm -f package-lock.json
    step "npm install node@$NODE_VERSION"
    if ! npm install --no-audit --no-fund --loglevel=error "node@$NODE_VERSION"; then
        skip "npm install node@$NODE_VERSION failed"
        exit 0
    fi
    step "npm install code-server@$CODE_SERVER_VERSION (node $(node --version))"
    # npm 11 holds install scripts back until they are approved: approve, then rebuild
    if ! { npm install --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION" &&
        { npm install-scripts approve argon2 code-server >/dev/null 2>&1 || true; } &&
        npm rebuild --loglevel=error; }; then
        skip "npm install code-server@$CODE_SERVER_VERSION failed"
        exit 0
    fi
    if ! "$code_server" --version 2>/dev/null | grep -q "^$CODE_SERVER_VERSION "; then
        skip "code-server $CODE_SERVER_VERSION does not start: $("$code_server" --version 2>&1 | tail -1)"
        exit 0
    fi
fi

if ! "$ROOT/.venv/bin/python" -c "import playwright.sync_api" 2>/dev/null; then
    skip "playwright is not installed in .venv (the dev extra has it)"
fi
step "ready: $("$code_server" --version | head -1), $(chromium --version 2>/dev/null), in $((SECONDS - started))s"
