#!/usr/bin/env bash
# Builds the binaries pinned under hack/tools into bin/: the control plane and controller-gen
# (hack/tools/go.mod), and promtool, which checks and tests config/prometheus
# (hack/tools/prometheus/go.mod, a module of its own so that Prometheus' dependencies do not
# move the control plane's).
#
# The builds are kept in a cache keyed by the pin of each module (its go.mod and go.sum, and
# the etcd wrapper for the control plane's), so a fresh clone on a machine that built them
# before only links them into bin/, and a change of one pin builds what it pins once more.
# The first build takes about five minutes on two cores, and promtool about two more.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/hack/tools"
bin="$root/bin"
caches="${CUSTODY_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/custody/tools}"

# Each tool is built from its module, a folder of hack/tools, as module:package.
declare -A pkgs=(
  [kube-apiserver]=.:k8s.io/kubernetes/cmd/kube-apiserver
  [kube-controller-manager]=.:k8s.io/kubernetes/cmd/kube-controller-manager
  [etcd]=.:./etcd
  [controller-gen]=.:sigs.k8s.io/controller-tools/cmd/controller-gen
  [promtool]=prometheus:github.com/prometheus/prometheus/cmd/promtool
)
declare -A keys=(
  [.]=$(cat "$tools/go.mod" "$tools/go.sum" "$tools"/etcd/*.go | sha256sum | cut -c1-16)
  [prometheus]=$(cat "$tools/prometheus/go.mod" "$tools/prometheus/go.sum" | sha256sum | cut -c1-16)
)
key="${keys[.]} ${keys[prometheus]}"

mkdir -p "$bin"
if [ "$(cat "$bin/.tools-key" 2>/dev/null)" = "$key" ]; then
  ok=1
  for name in "${!pkgs[@]}"; do [ -x "$bin/$name" ] || ok=0; done
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
echo "$key" > "$bin/.tools-key"
