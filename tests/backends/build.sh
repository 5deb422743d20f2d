#!/usr/bin/env bash
# Build the real backends the end-to-end tests run, from their Go modules at
# the versions pinned in versions.env:
#
#   otelcol  the OpenTelemetry Collector, made by the Collector Builder from
#            otelcol-builder.yaml (exactly the components flow-xray's
#            Collector configs use, core and contrib)
#   jaeger   Jaeger v2 (github.com/jaegertracing/jaeger, cmd/jaeger)
#
# Usage: tests/backends/build.sh [otelcol|jaeger]...   (default: both)
#
# Binaries go to a cache folder outside the repository, one folder per
# version: $FLOW_XRAY_BACKENDS_DIR (default /opt/flow-xray-backends). A binary
# already there is not built again, so a second run takes a second. Builds run
# under `nice -n 19`; each prints how long it took. Needs the `go` command and
# the Go module proxy.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=versions.env
. "$HERE/versions.env"
MANIFEST="$HERE/otelcol-builder.yaml"
CACHE="${FLOW_XRAY_BACKENDS_DIR:-/opt/flow-xray-backends}"
NICE=(nice -n 19)

need_go() {
    if ! command -v go >/dev/null && [ -x /usr/local/go/bin/go ]; then
        PATH="/usr/local/go/bin:$PATH"
    fi
    if ! command -v go >/dev/null; then
        echo "build.sh: the go command is not installed" >&2
        exit 1
    fi
}

manifest_hash() {
    sha256sum "$MANIFEST" | cut -c1-12
}

# The folders the tests look in (tests/backends/binaries.py computes the same).
otelcol_bin() {
    echo "$CACHE/otelcol-$COLLECTOR_VERSION-$(manifest_hash)/otelcol-flow-xray"
}
jaeger_bin() {
    echo "$CACHE/jaeger-$JAEGER_VERSION/jaeger"
}

# Every version in the manifest is the pinned one, so versions.env stays the
# one place to change them.
check_manifest() {
    local wrong
    wrong="$(grep -E '^\s*- gomod:|^\s*gomod:' "$MANIFEST" |
        grep -vE " v($COLLECTOR_VERSION|$COLLECTOR_STABLE_VERSION)\s*$" || true)"
    if [ -n "$wrong" ]; then
        echo "build.sh: otelcol-builder.yaml disagrees with versions.env:" >&2
        echo "$wrong" >&2
        exit 1
    fi
    if ! grep -qE "^\s*version: $COLLECTOR_VERSION\s*$" "$MANIFEST"; then
        echo "build.sh: otelcol-builder.yaml dist.version is not $COLLECTOR_VERSION" >&2
        exit 1
    fi
}

# A build folder left by an interrupted run is removed on exit.
WORK=""
trap '[ -z "$WORK" ] || rm -rf "$WORK"' EXIT

# Run "$@" and print how long it took, labelled $1.
timed() {
    local label="$1" start
    shift
    start=$(date +%s)
    "$@"
    echo "build.sh: $label: $(($(date +%s) - start)) s"
}

build_otelcol() {
    local target
    target="$(otelcol_bin)"
    if [ -x "$target" ]; then
        echo "build.sh: otelcol $COLLECTOR_VERSION already built: $target"
        return
    fi
    check_manifest
    need_go
    mkdir -p "$CACHE"
    WORK="$(mktemp -d "$CACHE/.otelcol-build.XXXXXX")"
    # The builder at the Collector's own version (it writes a go.mod requiring
    # that release), installed into the build folder only.
    GOBIN="$WORK/bin" "${NICE[@]}" go install \
        "go.opentelemetry.io/collector/cmd/builder@v$COLLECTOR_VERSION"
    # dist.output_path is relative: the generated sources and the binary land
    # in $WORK/otelcol-flow-xray.
    (cd "$WORK" && "${NICE[@]}" "$WORK/bin/builder" --config "$MANIFEST")
    mkdir -p "$(dirname "$target")"
    mv "$WORK/otelcol-flow-xray/otelcol-flow-xray" "$target.tmp"
    mv "$target.tmp" "$target"
    rm -rf "$WORK"
    WORK=""
    "$target" --version
}

build_jaeger() {
    local target module dir
    target="$(jaeger_bin)"
    if [ -x "$target" ]; then
        echo "build.sh: jaeger $JAEGER_VERSION already built: $target"
        return
    fi
    need_go
    mkdir -p "$CACHE"
    WORK="$(mktemp -d "$CACHE/.jaeger-build.XXXXXX")"
    module="github.com/jaegertracing/jaeger@v$JAEGER_MODULE_VERSION"
    # `go install module@version` refuses this module (its go.mod has replace
    # directives), so fetch the module and build inside its folder, where
    # those directives apply.
    dir="$(cd "$WORK" && go mod download -json "$module" |
        sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    if [ -z "$dir" ] || [ ! -d "$dir/cmd/jaeger" ]; then
        echo "build.sh: go mod download $module gave no module folder" >&2
        exit 1
    fi
    # latestVersion is what `jaeger version` and the UI report (Jaeger's own
    # release build sets it the same way).
    (cd "$dir" && "${NICE[@]}" go build -trimpath \
        -ldflags "-s -w -X github.com/jaegertracing/jaeger/internal/version.latestVersion=v$JAEGER_VERSION" \
        -o "$WORK/jaeger" ./cmd/jaeger)
    mkdir -p "$(dirname "$target")"
    mv "$WORK/jaeger" "$target.tmp"
    mv "$target.tmp" "$target"
    rm -rf "$WORK"
    WORK=""
}

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(otelcol jaeger)
for name in "${targets[@]}"; do
    case "$name" in
        otelcol) timed "otelcol $COLLECTOR_VERSION" build_otelcol ;;
        jaeger) timed "jaeger $JAEGER_VERSION (module v$JAEGER_MODULE_VERSION)" build_jaeger ;;
        *)
            echo "build.sh: unknown target $name (otelcol, jaeger)" >&2
            exit 2
            ;;
    esac
done
