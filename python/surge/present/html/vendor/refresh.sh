#!/bin/sh
# refresh.sh: re-fetch uPlot from its published npm package (npm pack) into this directory and
# print the sha256 of each file, to record in VENDOR.md. Usage: refresh.sh [VERSION] (default
# the version VENDOR.md records).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
version=${1:-1.6.32}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "uplot@$version" >/dev/null && tar xzf "uplot-$version.tgz")
cp "$work/package/dist/uPlot.iife.min.js" "$work/package/dist/uPlot.min.css" "$work/package/LICENSE" "$here/"
echo "uplot $version ($(sha256sum "$work/uplot-$version.tgz" | cut -d' ' -f1)  uplot-$version.tgz)"
(cd "$here" && sha256sum uPlot.iife.min.js uPlot.min.css LICENSE)
