#!/usr/bin/env bash
# Runs every example under examples/ (compiled to .build/examples by `npm run build:run`).
# Examples that serve forever take --self-test: they drive themselves and exit.
# The examples import polestar by its package name ('polestar-di', 'polestar-di/testing', ...),
# as a user's code does: Node resolves those names through package.json "exports" to dist/
# (type-checking reads them from src/, see tsconfig.json "paths"). So dist/ must be built
# from the current sources: CI's `npm run build` made it; a missing or stale dist/ is rebuilt.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f dist/index.js ] || [ -n "$(find src package.json -newer dist/index.js \( -name '*.ts' -o -name package.json \) -print -quit)" ]; then
  echo "=== dist/ is missing or older than src/: npm run build"
  npm run build
fi
status=0
for src in examples/*.ts; do
  name=$(basename "$src" .ts)
  echo "=== example: $name"
  if ! timeout 120 node ".build/examples/$name.js" --self-test; then
    echo "example $name FAILED" >&2
    status=1
  fi
done
# One model loop again with --trace: it prints its span tree (polestar-di/otel) and checks its nesting.
echo "=== example: support-desk --trace"
if ! timeout 120 node .build/examples/support-desk.js --self-test --trace; then
  echo "example support-desk --trace FAILED" >&2
  status=1
fi
exit $status
