#!/usr/bin/env bash
# Runs every example under examples/ (compiled to .build/examples by `npm run build:run`).
# Examples that serve forever take --self-test: they drive themselves and exit.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
for src in examples/*.ts; do
  name=$(basename "$src" .ts)
  echo "=== example: $name"
  if ! timeout 120 node ".build/examples/$name.js" --self-test; then
    echo "example $name FAILED" >&2
    status=1
  fi
done
exit $status
