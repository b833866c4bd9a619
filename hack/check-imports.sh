#!/usr/bin/env bash
# Fails when a controller package (a package under controllers/ with a Reconcile method)
# imports another: what two controllers share lives in api/, in the pure packages
# (coordination/, fencing/, storageclass/) or under controllers/internal/, so that each
# controller can be read, tested and changed alone.
set -euo pipefail
cd "$(dirname "$0")/.."
module=$(go list -m)
mapfile -t controllers < <(grep -lE '^func \([a-z]+ \*[A-Za-z]+\) Reconcile\(' $(git ls-files 'controllers/*.go' | grep -v '_test\.go$') |
  xargs -n1 dirname | sort -u | sed "s|^|$module/|")
failed=0
for pkg in "${controllers[@]}"; do
  while read -r imported; do
    for other in "${controllers[@]}"; do
      if [ "$imported" = "$other" ] && [ "$other" != "$pkg" ]; then
        echo "${pkg#"$module"/} imports the controller package ${other#"$module"/}" >&2
        failed=1
      fi
    done
  done < <(go list -f '{{join .Imports "\n"}}' "$pkg")
done
exit "$failed"
