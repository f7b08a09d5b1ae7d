#!/usr/bin/env bash
# Installs what the cross builds and the emulated tests need, idempotently: what is there
# already is checked (dpkg -s, rustup target list, the cache dir) and skipped, so a second
# run takes about a second. Debian/Ubuntu hosts (apt-get; sudo when not root).
#
#   scripts/cross-setup.sh arm64   aarch64 cross gcc and libc, qemu-user, the rustup target,
#                                  arm64 Node 20/22/24 (npm registry, .cache/node<major>-arm64/)
#                                  and rolldown's arm64 binding for Vitest (.cache/arm64-modules/)
#   scripts/cross-setup.sh musl    the rustup targets, zig 0.14.1 and cargo-zigbuild from PyPI in
#                                  .cache/zig/ (what the release workflow links musl with), musl-gcc
#                                  and Debian's musl loader (scripts/musl.mjs loads the x64 addon)
#   scripts/cross-setup.sh win32   Debian's wine and mingw gcc, the x86_64-pc-windows-gnu target
#                                  (scripts/win32.mjs sets up the prefix, node.exe and the rest)
#   scripts/cross-setup.sh darwin  the rustup targets x86_64-apple-darwin and aarch64-apple-darwin,
#                                  zig 0.14.1 and cargo-zigbuild as for musl (zig ships the macOS
#                                  libc headers and libSystem stubs: no Apple SDK is needed)
set -euo pipefail
cd "$(dirname "$0")/.."

apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  echo "cross-setup: apt-get install ${missing[*]}" >&2
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

rust_target() {
  rustup target list --installed | grep -qx "$1" || rustup target add "$1"
}

# zig 0.14.1 (what the release workflow links musl with) and cargo-zigbuild, from PyPI.
zig_venv() {
  if ! .cache/zig/bin/python -m ziglang version 2>/dev/null | grep -qx 0.14.1 || [ ! -x .cache/zig/bin/cargo-zigbuild ]; then
    echo "cross-setup: zig 0.14.1 and cargo-zigbuild into .cache/zig" >&2
    rm -rf .cache/zig
    python3 -m venv .cache/zig
    .cache/zig/bin/pip install -q --disable-pip-version-check ziglang==0.14.1 cargo-zigbuild
  fi
}

case "${1:-}" in
  arm64)
    apt_install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
    rust_target aarch64-unknown-linux-gnu
    node scripts/node-bin.mjs --arch arm64 ${ARM64_NODE:-20 22 24} >/dev/null
    # Vitest's bundler (rolldown) loads a native binding for the Node it runs on; the arm64 one
    # is found through NODE_PATH (scripts/arm64.mjs), at the version npm ci installed.
    version="$(node -p "require('./node_modules/rolldown/package.json').version")"
    dir=.cache/arm64-modules/node_modules/@rolldown/binding-linux-arm64-gnu
    if [ "$(node -p "try { require('./$dir/package.json').version } catch { '' }")" != "$version" ]; then
      echo "cross-setup: fetching @rolldown/binding-linux-arm64-gnu@$version" >&2
      rm -rf "$dir" && mkdir -p "$dir"
      tmp="$(mktemp -d)"
      npm pack "@rolldown/binding-linux-arm64-gnu@$version" --silent --pack-destination "$tmp" >/dev/null
      tar xzf "$tmp"/*.tgz -C "$dir" --strip-components=1
      rm -rf "$tmp"
    fi
    ;;
  musl)
    apt_install musl-tools musl
    rust_target x86_64-unknown-linux-musl
    rust_target aarch64-unknown-linux-musl
    zig_venv
    ;;
  win32)
    apt_install wine wine64 gcc-mingw-w64-x86-64
    rust_target x86_64-pc-windows-gnu
    ;;
  darwin)
    rust_target x86_64-apple-darwin
    rust_target aarch64-apple-darwin
    zig_venv
    ;;
  *)
    echo "usage: $0 arm64|musl|win32|darwin" >&2
    exit 2
    ;;
esac
