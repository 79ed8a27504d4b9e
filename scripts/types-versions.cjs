#!/usr/bin/env node
// Keeps package.json "typesVersions" in step with "exports", so a consumer whose
// TypeScript uses `moduleResolution: node10` (which ignores "exports"; NestJS's default)
// finds the types of every subpath entry: polestar-di/testing, polestar-di/adapters,
// polestar-di/sessions/sqlite, ... Each exports entry "./x" with "types": "./dist/y.d.ts"
// becomes "x": ["./dist/y.d.ts"]; the root entry needs none ("types" covers it).
//
//   node scripts/types-versions.cjs          check (exit 1 when out of step; CI runs this)
//   node scripts/types-versions.cjs --write  rewrite package.json's typesVersions
//
// Whoever adds an exports entry runs it with --write.
/* global __dirname */
const fs = require('node:fs');
const path = require('node:path');

const file = path.join(__dirname, '..', 'package.json');
const text = fs.readFileSync(file, 'utf8');
const pkg = JSON.parse(text);

/** The typesVersions that `pkg.exports` calls for. */
function expected(exportsField) {
  const map = {};
  for (const [key, target] of Object.entries(exportsField ?? {})) {
    if (key === '.' || key === './package.json') continue;
    if (!key.startsWith('./') || key.includes('*')) throw new Error(`types-versions: unsupported exports key ${key}`);
    const types = typeof target === 'object' && target !== null ? target.types : undefined;
    if (typeof types !== 'string') throw new Error(`types-versions: exports["${key}"] has no "types" condition (put "types" first in every entry)`);
    map[key.slice(2)] = [types];
  }
  return { '*': map };
}

const want = expected(pkg.exports);
if (process.argv.includes('--write')) {
  pkg.typesVersions = want;
  const indent = (text.match(/^\{\n( +)/) ?? [null, '  '])[1];
  fs.writeFileSync(file, JSON.stringify(pkg, null, indent.length) + '\n');
  console.log(`types-versions: wrote ${Object.keys(want['*']).length} entries`);
} else if (JSON.stringify(pkg.typesVersions) !== JSON.stringify(want)) {
  console.error('types-versions: package.json "typesVersions" does not match "exports".');
  console.error(`  have: ${JSON.stringify(pkg.typesVersions)}`);
  console.error(`  want: ${JSON.stringify(want)}`);
  console.error('  fix:  node scripts/types-versions.cjs --write');
  process.exit(1);
} else {
  console.log(`types-versions: ${Object.keys(want['*']).length} subpath entries mapped for moduleResolution node10`);
}

module.exports = { expected };
