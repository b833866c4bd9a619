#!/usr/bin/env bash
# Builds the binaries pinned under hack/tools into bin/: the control plane (kube-apiserver,
# kube-controller-manager, kube-scheduler, etcd) and controller-gen (hack/tools/go.mod);
# promtool, which checks and tests config/prometheus (hack/tools/prometheus/go.mod); and kwok,
# which plays the nodes and kubelets of the test bed's members, with its stages beside it
# (hack/tools/kwok/go.mod). Prometheus and kwok are modules of their own, so that their
# dependencies do not move the control plane's.
#
# The builds are kept in a cache keyed by the pin of each module (its go.mod and go.sum, and
# the etcd wrapper for the control plane's), so a fresh clone on a machine that built them
# before only links them into bin/, and a change of one pin builds what it pins once more.
# The first build takes about five minutes on two cores, promtool about two more, and
# kube-scheduler and kwok about two each.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/hack/tools"
bin="$root/bin"
caches="${CUSTODY_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/custody/tools}"

# Each tool is built from its module, a folder of hack/tools, as module:package.
declare -A pkgs=(
  [kube-apiserver]=.:k8s.io/kubernetes/cmd/kube-apiserver
  [kube-controller-manager]=.:k8s.io/kubernetes/cmd/kube-controller-manager
  [kube-scheduler]=.:k8s.io/kubernetes/cmd/kube-scheduler
  [etcd]=.:./etcd
  [controller-gen]=.:sigs.k8s.io/controller-tools/cmd/controller-gen
  [promtool]=prometheus:github.com/prometheus/prometheus/cmd/promtool
  [kwok]=kwok:sigs.k8s.io/kwok/cmd/kwok
)
# Each folder kept from a module's source is module:path-of-the-module-it-requires:folder.
# kwok-stages holds kwok's stages of the pinned version (the pod and node lifecycles it plays),
# as kwokctl renders them into kwok's configuration.
declare -A dirs=(
  [kwok-stages]=kwok:sigs.k8s.io/kwok:kustomize/stage
)
declare -A keys=(
  [.]=$(cat "$tools/go.mod" "$tools/go.sum" "$tools"/etcd/*.go | sha256sum | cut -c1-16)
  [prometheus]=$(cat "$tools/prometheus/go.mod" "$tools/prometheus/go.sum" | sha256sum | cut -c1-16)
  [kwok]=$(cat "$tools/kwok/go.mod" "$tools/kwok/go.sum" | sha256sum | cut -c1-16)
)
key="${keys[.]} ${keys[prometheus]} ${keys[kwok]}"

mkdir -p "$bin"
if [ "$(cat "$bin/.tools-key" 2>/dev/null)" = "$key" ]; then
  ok=1
  for name in "${!pkgs[@]}" "${!dirs[@]}"; do [ -e "$bin/$name" ] || ok=0; done
  [ "$ok" = 1 ] && exit 0
fi

# One build at a time: test packages that start in parallel may all find bin/ empty.
exec 9>"$bin/.tools-lock"
flock 9

for name in "${!pkgs[@]}"; do
  module=${pkgs[$name]%%:*} pkg=${pkgs[$name]#*:}
  cache="$caches/${keys[$module]}"
  mkdir -p "$cache"
  if [ ! -x "$cache/$name" ]; then
    echo "building $name ($pkg)" >&2
    start=$SECONDS
    (cd "$tools/$module" && go build -trimpath -o "$cache/$name.tmp" "$pkg")
    mv "$cache/$name.tmp" "$cache/$name"
    echo "built $name in $((SECONDS - start))s" >&2
  fi
  ln -sf "$cache/$name" "$bin/$name"
done
for name in "${!dirs[@]}"; do
  IFS=: read -r module modpath dir <<<"${dirs[$name]}"
  cache="$caches/${keys[$module]}"
  if [ ! -d "$cache/$name" ]; then
    src=$(cd "$tools/$module" && go mod download -json "$modpath" >/dev/null && go list -m -f '{{.Dir}}' "$modpath")
    rm -rf "$cache/$name.tmp"
    cp -R "$src/$dir" "$cache/$name.tmp"
    # The module cache is read-only; the copy must be removable with the cache.
    chmod -R u+w "$cache/$name.tmp"
    mv "$cache/$name.tmp" "$cache/$name"
  fi
  ln -sfn "$cache/$name" "$bin/$name"
done
echo "$key" > "$bin/.tools-key"
