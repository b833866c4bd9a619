#!/usr/bin/env bash
# Builds the binaries pinned by hack/tools/go.mod (kube-apiserver, kube-controller-manager, etcd,
# controller-gen) into bin/.
#
# The builds are kept in a cache keyed by the pin (hack/tools/go.mod, go.sum and the etcd wrapper),
# so a fresh clone on a machine that built them before only links them into bin/, and a change of
# pin builds them once more. The first build takes about five minutes on two cores.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/hack/tools"
bin="$root/bin"
key=$(cat "$tools/go.mod" "$tools/go.sum" "$tools"/etcd/*.go | sha256sum | cut -c1-16)
cache="${CUSTODY_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/custody/tools}/$key"

declare -A pkgs=(
  [kube-apiserver]=k8s.io/kubernetes/cmd/kube-apiserver
  [kube-controller-manager]=k8s.io/kubernetes/cmd/kube-controller-manager
  [etcd]=./etcd
  [controller-gen]=sigs.k8s.io/controller-tools/cmd/controller-gen
)

mkdir -p "$bin"
if [ "$(cat "$bin/.tools-key" 2>/dev/null)" = "$key" ]; then
  ok=1
  for name in "${!pkgs[@]}"; do [ -x "$bin/$name" ] || ok=0; done
  [ "$ok" = 1 ] && exit 0
fi

# One build at a time: test packages that start in parallel may all find bin/ empty.
exec 9>"$bin/.tools-lock"
flock 9

mkdir -p "$cache"
for name in "${!pkgs[@]}"; do
  if [ ! -x "$cache/$name" ]; then
    echo "building $name (${pkgs[$name]})" >&2
    start=$SECONDS
    (cd "$tools" && go build -trimpath -o "$cache/$name.tmp" "${pkgs[$name]}")
    mv "$cache/$name.tmp" "$cache/$name"
    echo "built $name in $((SECONDS - start))s" >&2
  fi
  ln -sf "$cache/$name" "$bin/$name"
done
echo "$key" > "$bin/.tools-key"
