#!/bin/sh
# Installs Aileron's release binaries (aileron, aileron-sh, aileron-server).
#
#   curl -fsSL https://raw.githubusercontent.com/aileron-dev/aileron/main/install.sh | sh
#   sh install.sh --version 0.1.0 --dir /usr/local/bin
#
# It picks the archive for this system (Linux or macOS, x86-64 or
# aarch64/Apple silicon), downloads it and the release's
# SHA256SUMS, refuses an archive whose SHA-256 does not match, and copies
# the binaries to ~/.local/bin (or --dir, or $AILERON_INSTALL_DIR). Nothing
# else is changed: it says what to add to PATH when the directory is not on
# it.
#
# Options:
#   --version V   the release to install (0.1.0 or v0.1.0; default: the latest)
#   --dir DIR     where to put the binaries (default: $AILERON_INSTALL_DIR, else ~/.local/bin)
#   --target T    the build to install (default: this system's, e.g. x86_64-unknown-linux-gnu)
#   -h, --help    this text
#
# Environment:
#   AILERON_INSTALL_DIR   as --dir
#   AILERON_DOWNLOAD_URL  where the release's files are, instead of GitHub's
#                         release downloads: a URL (https://..., file:///...)
#                         or a local directory holding SHA256SUMS and the archives
set -eu

REPO="aileron-dev/aileron"
BINARIES="aileron aileron-sh aileron-server"

say() { printf '%s\n' "aileron-install: $*"; }
fail() {
    printf '%s\n' "aileron-install: error: $*" >&2
    exit 1
}

usage() {
    if [ -f "$0" ] && head -n 2 "$0" | grep -q "release binaries"; then
        sed -n '2,/^set -eu$/p' "$0" | sed -e '/^set -eu$/d' -e 's/^# \{0,1\}//'
    else
        echo "usage: install.sh [--version V] [--dir DIR] [--target T]"
        echo "environment: AILERON_INSTALL_DIR, AILERON_DOWNLOAD_URL"
    fi
}

version=""
dir="${AILERON_INSTALL_DIR:-}"
target=""
while [ $# -gt 0 ]; do
    case "$1" in
    --version) [ $# -ge 2 ] || fail "--version needs a value"; version="$2"; shift 2 ;;
    --version=*) version="${1#--version=}"; shift ;;
    --dir) [ $# -ge 2 ] || fail "--dir needs a value"; dir="$2"; shift 2 ;;
    --dir=*) dir="${1#--dir=}"; shift ;;
    --target) [ $# -ge 2 ] || fail "--target needs a value"; target="$2"; shift 2 ;;
    --target=*) target="${1#--target=}"; shift ;;
    -h | --help) usage; exit 0 ;;
    *) fail "unknown option: $1 (see --help)" ;;
    esac
done
version="${version#v}"
if [ -z "$dir" ]; then
    [ -n "${HOME:-}" ] || fail "HOME is not set: give --dir"
    dir="$HOME/.local/bin"
fi

# This system's build.
if [ -z "$target" ]; then
    os="$(uname -s)"
    arch="$(uname -m)"
    case "$arch" in
    x86_64 | amd64) arch="x86_64" ;;
    aarch64 | arm64) arch="aarch64" ;;
    *) fail "no release build for the $arch architecture; build from source: cargo install aileron-cli" ;;
    esac
    case "$os" in
    Linux) target="$arch-unknown-linux-gnu" ;;
    Darwin)
        # A shell under Rosetta 2 is told x86_64 on Apple silicon: the
        # native build is the one to install.
        if [ "$arch" = x86_64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null)" = 1 ]; then
            arch="aarch64"
        fi
        target="$arch-apple-darwin"
        ;;
    *) fail "no release build for $os; build from source: cargo install aileron-cli" ;;
    esac
fi

# Where the release's files are.
if [ -n "${AILERON_DOWNLOAD_URL:-}" ]; then
    base="${AILERON_DOWNLOAD_URL%/}"
elif [ -n "$version" ]; then
    base="https://github.com/$REPO/releases/download/v$version"
else
    base="https://github.com/$REPO/releases/latest/download"
fi

tmp="$(mktemp -d 2>/dev/null || mktemp -d -t aileron-install)"
trap 'rm -rf "$tmp"' EXIT INT TERM

# fetch URL FILE: a local directory or file:// URL is copied, anything
# else downloaded with curl or wget.
fetch() {
    case "$1" in
    file://*) cp "${1#file://}" "$2" 2>/dev/null || return 1 ;;
    /*) cp "$1" "$2" 2>/dev/null || return 1 ;;
    *)
        if command -v curl >/dev/null 2>&1; then
            curl --proto '=https,http' -fsSL -o "$2" "$1" || return 1
        elif command -v wget >/dev/null 2>&1; then
            wget -q -O "$2" "$1" || return 1
        else
            fail "neither curl nor wget is installed"
        fi
        ;;
    esac
}

sha256() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    elif command -v shasum >/dev/null 2>&1; then
        shasum -a 256 "$1" | cut -d' ' -f1
    elif command -v openssl >/dev/null 2>&1; then
        openssl dgst -sha256 "$1" | sed 's/^.*= *//'
    else
        fail "no sha256sum, shasum or openssl to check the download with"
    fi
}

fetch "$base/SHA256SUMS" "$tmp/SHA256SUMS" || fail "cannot download $base/SHA256SUMS${version:+ (is $version a release?)}"

# The archive for this target, and its expected sum.
if [ -n "$version" ]; then
    archive="aileron-$version-$target.tar.gz"
    line="$(grep " \*\{0,1\}$archive\$" "$tmp/SHA256SUMS" || true)"
else
    line="$(grep -- "-$target\.tar\.gz\$" "$tmp/SHA256SUMS" | head -n 1 || true)"
fi
[ -n "$line" ] || fail "the release has no build for $target${version:+ at version $version}; build from source: cargo install aileron-cli"
expected="$(printf '%s\n' "$line" | cut -d' ' -f1)"
archive="$(printf '%s\n' "$line" | sed 's/^[0-9a-fA-F]* [ *]*//')"
case "$archive" in
aileron-*-"$target".tar.gz) ;;
*) fail "unexpected file name in SHA256SUMS: $archive" ;;
esac
version="${archive#aileron-}"
version="${version%-"$target".tar.gz}"

say "downloading $archive"
fetch "$base/$archive" "$tmp/$archive" || fail "cannot download $base/$archive"
actual="$(sha256 "$tmp/$archive")"
if [ "$actual" != "$expected" ]; then
    fail "$archive does not match its SHA-256 in SHA256SUMS (expected $expected, got $actual): not installed"
fi

mkdir "$tmp/x"
(cd "$tmp/x" && tar -xzf "../$archive") || fail "cannot unpack $archive"
src="$tmp/x/aileron-$version-$target"
for b in $BINARIES; do
    [ -f "$src/$b" ] || fail "$archive has no $b"
done

mkdir -p "$dir" || fail "cannot create $dir"
# Each binary is copied beside its place, then renamed over it: a running
# aileron keeps its file, and nobody sees half a binary.
for b in $BINARIES; do
    cp "$src/$b" "$dir/.$b.new" && chmod 755 "$dir/.$b.new" && mv -f "$dir/.$b.new" "$dir/$b" \
        || fail "cannot install $b in $dir"
done
say "installed aileron $version ($target) in $dir: $BINARIES"

case ":${PATH:-}:" in
*":$dir:"*) say "run: aileron --help" ;;
*)
    say "$dir is not on your PATH; add it, e.g. in ~/.profile or your shell's rc file:"
    printf '\n    export PATH="%s:$PATH"\n\n' "$dir"
    ;;
esac
