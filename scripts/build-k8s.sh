#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager and kube-scheduler from the
# module in localcluster/build, and etcd from localcluster/build/etcd, into
# .cache/k8s/<version>/bin. A warm build is a no-op: each part is keyed by
# its module's go.mod and go.sum and the Go version (.stamp, .stamp-etcd).
# The cold build takes about 13 minutes on 2 cores (etcd: half a minute).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
mod="$root/localcluster/build"
version="$(awk '$1=="require" && $2=="k8s.io/kubernetes" {print $3}' "$mod/go.mod")"
out="$root/.cache/k8s/$version/bin"
mkdir -p "$out"

# key prints the cache key of the module in $1.
key() { echo "$(cat "$1/go.mod" "$1/go.sum" | sha256sum | cut -d' ' -f1) $(go env GOVERSION)"; }

etcd_stamp="$out/.stamp-etcd"
etcd_key="$(key "$mod/etcd")"
etcd_version="$(awk '$1=="require" && $2=="go.etcd.io/etcd/server/v3" {print $3}' "$mod/etcd/go.mod")"
if [[ -f "$etcd_stamp" && "$(cat "$etcd_stamp")" == "$etcd_key" ]]; then
	echo "etcd $etcd_version: cached in ${out#"$root"/}"
else
	echo "building etcd $etcd_version..."
	start=$SECONDS
	(cd "$mod/etcd" && CGO_ENABLED=0 go build -mod=readonly -trimpath -ldflags "-s -w" -o "$out/etcd" .)
	echo "  etcd built in $((SECONDS - start))s"
	echo "$etcd_key" > "$etcd_stamp"
fi

stamp="$out/.stamp"
key="$(key "$mod")"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$key" ]]; then
	echo "kubernetes $version control plane: cached in ${out#"$root"/}"
	exit 0
fi
minor="${version#v1.}"; minor="${minor%%.*}"
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
cd "$mod"
for cmd in kube-apiserver kube-controller-manager kube-scheduler; do
	echo "building $cmd $version (cold builds take minutes)..."
	start=$SECONDS
	CGO_ENABLED=0 go build -mod=readonly -trimpath -ldflags "$ldflags" -o "$out/$cmd" "k8s.io/kubernetes/cmd/$cmd"
	echo "  $cmd built in $((SECONDS - start))s"
done
echo "$key" > "$stamp"
echo "kubernetes $version control plane: built into ${out#"$root"/}"
