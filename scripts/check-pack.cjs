#!/usr/bin/env node
// Packs polestar-di as `npm publish` would from a fresh clone, installs the tarball into a
// throwaway project and runs a consumer there. Offline: the tarball's dependencies (and
// the consumer's @types/node and the optional peers) come from the npm cache that
// `npm ci` filled. Run from the repository: `npm run check:pack` (CI does).
//
// 1. Copies the committed-or-staged source files (`git ls-files`) into a temporary "fresh
//    clone" with no dist/, links its node_modules, and runs `npm pack` there: the tarball
//    holds code only because `prepack` builds it.
// 2. Checks the tarball: every "exports" file is in it, no `@internal` member is
//    published, no published .d.ts cites a document users do not have ("SPEC §…",
//    "issue 12", "contract C3") or declares an `_`-prefixed member (see
//    `scanDeclarations`), and every source map's sources are in it (src/ ships, see
//    docs/packaging.md). `require('./check-pack.cjs')` runs nothing: it exports the scan.
// 3. Installs it into a throwaway project and, for every "exports" entry:
//    - ESM: `import('polestar-di/...')`;
//    - CommonJS: `require('polestar-di/...')` (Node >= 20.19 can require ES modules);
//    - types: `tsc --noEmit` with `moduleResolution: node10` + `module: commonjs` (the
//      NestJS default, which reads "typesVersions", not "exports"; skipLibCheck on, as
//      NestJS has it) and again with `nodenext` and `skipLibCheck: false` (the published
//      .d.ts must be complete once internals are stripped).
//    and runs a small program using the public API and the re-exported decorators;
//    then type-checks the examples (examples/**/*.ts, which import polestar by its package
//    name) against the installed package, with the packages they import from devDependencies.
/* global __dirname */
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const repo = path.resolve(__dirname, '..');
const pkg = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8'));
const tsc = path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const keep = process.argv.includes('--keep');

/**
 * Published names that start with `_` and must stay (none today). Each entry is
 * `<file relative to the package>:<member name>`, with the reason beside it.
 */
const ALLOWED_UNDERSCORE_MEMBERS = new Set([]);

/** References to documents a user of the package does not have, as they read in doc comments. */
const INTERNAL_REFERENCES = [
  { what: 'a SPEC section', re: /\bSPEC\b\s*(?:§|\d)/ },
  { what: 'a section sign', re: /§\s*\d/ },
  { what: 'an issue number', re: /\bissues?\s+#?\d+/i },
  { what: 'a contract number', re: /\bcontract[\s-]+C\d+\b/i },
];

/**
 * The lines of `text` that cite a document users do not have ("SPEC §10.2", "issue 9",
 * "contract C3"), as `file:line: ...` findings.
 *
 * @param {string} file - the name findings give.
 * @param {string} text - the file's text.
 * @returns {string[]} one finding per reference.
 */
function findInternalReferences(file, text) {
  const findings = [];
  text.split('\n').forEach((line, i) => {
    for (const ref of INTERNAL_REFERENCES) {
      const m = ref.re.exec(line);
      if (m !== null) findings.push(`${file}:${i + 1}: cites ${ref.what} ("${m[0]}"), a document users do not have: ${line.trim()}`);
    }
  });
  return findings;
}

/**
 * Scans published declaration files for what users must not see: references to internal
 * documents (anywhere in the text: doc comments are where they hide) and `_`-prefixed
 * members of classes, interfaces and type literals, or `_`-prefixed declared names
 * (members tagged `@internal` are stripped by scripts/build.cjs; one that is left is a
 * leak). Parameters named `_x` are not members and are allowed.
 *
 * @param {{ file: string, text: string }[]} files - each .d.ts, by its path in the package.
 * @returns {string[]} one `file:line: ...` finding per problem, in file order; empty when clean.
 */
function scanDeclarations(files) {
  const ts = require(path.join(repo, 'node_modules', 'typescript'));
  const findings = [];
  for (const { file, text } of files) {
    findings.push(...findInternalReferences(file, text));
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const nameOf = (n) => (n !== undefined && (ts.isIdentifier(n) || ts.isStringLiteral(n) || ts.isPrivateIdentifier(n)) ? n.text : undefined);
    const visit = (node) => {
      const isMember = (ts.isClassElement(node) || ts.isTypeElement(node)) && !ts.isConstructorDeclaration(node);
      const isDeclaration = (ts.isFunctionDeclaration(node) || ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node) || ts.isVariableDeclaration(node) || ts.isEnumDeclaration(node) || ts.isExportSpecifier(node)) && node.parent !== undefined;
      const name = isMember || isDeclaration ? nameOf(node.name) : undefined;
      if (name !== undefined && name.startsWith('_') && !ALLOWED_UNDERSCORE_MEMBERS.has(`${file}:${name}`)) {
        const { line } = sf.getLineAndCharacterOfPosition(node.name.getStart(sf));
        findings.push(`${file}:${line + 1}: publishes ${isMember ? 'the member' : 'the name'} "${name}": tag it @internal (scripts/build.cjs strips tagged members) or rename it`);
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return findings;
}

module.exports = { scanDeclarations, findInternalReferences };

function run(cmd, args, cwd, extraEnv = {}) {
  try {
    return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...extraEnv } });
  } catch (err) {
    console.error(`check-pack: ${cmd} ${args.join(' ')} (in ${cwd}) failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
    throw err;
  }
}

function step(msg) {
  console.log(`check-pack: ${msg}`);
}

/** Every subpath the package exports ('' for the root), with its file targets. */
const entries = Object.entries(pkg.exports).map(([key, target]) => ({
  spec: key === '.' ? pkg.name : `${pkg.name}/${key.slice(2)}`,
  files: typeof target === 'string' ? [target] : Object.values(target),
}));

/**
 * Writes the consumer's package.json and a package-lock.json whose entries (resolved URL and
 * integrity) come from this repository's lock, so `npm ci --offline` installs the tarball's
 * dependencies from the npm cache without asking the registry for package metadata.
 */
function writeConsumerProject(dir, tarball, integrity, extras) {
  const lock = JSON.parse(fs.readFileSync(path.join(repo, 'package-lock.json'), 'utf8')).packages;
  const deps = { [pkg.name]: `file:${path.relative(dir, tarball)}`, ...extras };
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, dependencies: deps }, null, 2));
  const packages = { '': { name: 'consumer', version: '1.0.0', dependencies: deps } };
  const own = { version: pkg.version, resolved: `file:${path.relative(dir, tarball)}`, integrity, license: pkg.license };
  for (const f of ['dependencies', 'peerDependencies', 'peerDependenciesMeta', 'engines']) if (pkg[f] !== undefined) own[f] = pkg[f];
  packages[`node_modules/${pkg.name}`] = own;
  // Node's lookup from a lock path: <at>/node_modules/<name>, then each ancestor's.
  const locate = (from, name) => {
    for (let at = from; ; ) {
      const candidate = at === '' ? `node_modules/${name}` : `${at}/node_modules/${name}`;
      if (lock[candidate] !== undefined) return candidate;
      if (at === '') return undefined;
      const cut = at.lastIndexOf('/node_modules/');
      at = cut < 0 ? '' : at.slice(0, cut);
    }
  };
  const queue = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(extras)].map((n) => locate('', n));
  const seen = new Set();
  while (queue.length > 0) {
    const at = queue.pop();
    if (at === undefined || seen.has(at)) continue;
    seen.add(at);
    const entry = { ...lock[at] };
    delete entry.dev;
    delete entry.devOptional;
    packages[at] = entry;
    const peerMeta = entry.peerDependenciesMeta ?? {};
    const wanted = [...Object.keys(entry.dependencies ?? {}), ...Object.keys(entry.optionalDependencies ?? {}), ...Object.keys(entry.peerDependencies ?? {}).filter((n) => peerMeta[n]?.optional !== true)];
    for (const name of wanted) queue.push(locate(at, name));
  }
  fs.writeFileSync(path.join(dir, 'package-lock.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', lockfileVersion: 3, requires: true, packages }, null, 2));
}

// Required (by the scan's test) rather than run: export the scan and stop here (a CommonJS
// module may return at its top level).
if (require.main !== module) return;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'polestar-pack-'));
try {
  // ---------------------------------------------------------------- 1. pack a fresh clone
  const clone = path.join(tmp, 'clone');
  let files;
  try {
    files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\0').filter(Boolean);
  } catch {
    // Not a git checkout: everything but what a clone never has.
    const skip = new Set(['.git', 'node_modules', 'dist', '.build', 'site', 'coverage']);
    const walk = (dir) => fs.readdirSync(path.join(repo, dir), { withFileTypes: true }).flatMap((d) => (skip.has(d.name) ? [] : d.isDirectory() ? walk(path.join(dir, d.name)) : [path.join(dir, d.name)]));
    files = walk('');
  }
  for (const f of files) {
    const from = path.join(repo, f);
    if (!fs.existsSync(from)) continue; // deleted in the working tree
    const to = path.join(clone, f);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(from, to);
  }
  if (fs.existsSync(path.join(clone, 'dist'))) throw new Error('dist/ is tracked by git; it must not be');
  fs.symlinkSync(path.join(repo, 'node_modules'), path.join(clone, 'node_modules'), 'dir');
  const packed = JSON.parse(run(npm, ['pack', '--json', '--pack-destination', tmp], clone, { npm_config_loglevel: 'error' }));
  const info = packed[0];
  const tarball = path.join(tmp, info.filename);
  const shipped = new Set(info.files.map((f) => f.path));
  step(`packed ${info.filename}: ${info.files.length} files, ${Math.round(info.size / 1024)} KB (prepack built dist/ in a clone without one)`);

  // ---------------------------------------------------------------- 2. what the tarball holds
  for (const e of entries) {
    for (const f of e.files) if (!shipped.has(path.posix.normalize(f))) throw new Error(`${e.spec}: ${f} is not in the tarball`);
  }
  const extracted = path.join(tmp, 'extracted');
  fs.mkdirSync(extracted);
  run('tar', ['-xzf', tarball, '-C', extracted], tmp);
  const root = path.join(extracted, 'package');
  let maps = 0;
  for (const f of shipped) {
    const text = f.endsWith('.d.ts') || f.endsWith('.map') ? fs.readFileSync(path.join(root, f), 'utf8') : '';
    // Members (indented in a .d.ts) tagged @internal must be gone; top-level internals stay (see scripts/build.cjs).
    if (f.endsWith('.d.ts') && /^ {4,}(\/\*\*| \*).*@internal\b/m.test(text)) throw new Error(`${f} publishes an @internal member (was dist/ built by scripts/build.cjs?)`);
    if (f.endsWith('.map')) {
      maps++;
      const map = JSON.parse(text);
      for (const s of map.sources) {
        const target = path.posix.normalize(path.posix.join(path.posix.dirname(f), map.sourceRoot ?? '', s));
        if (!shipped.has(target) && map.sourcesContent === undefined) throw new Error(`${f} points at ${target}, which is not in the tarball`);
      }
    }
  }
  const declarations = [...shipped].filter((f) => f.endsWith('.d.ts')).sort();
  const findings = scanDeclarations(declarations.map((f) => ({ file: f, text: fs.readFileSync(path.join(root, f), 'utf8') })));
  if (findings.length > 0) {
    throw new Error(`the published declarations show users what is not theirs (${findings.length} finding(s)); rewrite the doc comment to speak to users, or tag the member @internal:\n  ${findings.join('\n  ')}`);
  }
  step(`tarball: every exports target present, no @internal member, no internal reference and no _-prefixed member in ${declarations.length} .d.ts files, ${maps} source maps resolve`);

  // ---------------------------------------------------------------- 3. a consumer
  const consumer = path.join(tmp, 'consumer');
  fs.mkdirSync(consumer);
  const dev = pkg.devDependencies;
  const extras = { '@types/node': dev['@types/node'] };
  for (const peer of Object.keys(pkg.peerDependencies ?? {})) if (dev[peer] !== undefined) extras[peer] = dev[peer];
  // ai's declarations (@ai-sdk/provider) import JSONSchema7 from 'json-schema', whose types
  // live in @types/json-schema: an AI SDK user who type-checks libraries needs it installed too.
  extras['@types/json-schema'] = require(path.join(repo, 'node_modules', '@types', 'json-schema', 'package.json')).version;
  // The examples, as a user copies them: their imports of other packages come from devDependencies.
  const exampleFiles = files.filter((f) => /^examples\/.+\.ts$/.test(f) && fs.existsSync(path.join(repo, f)));
  for (const f of exampleFiles) {
    for (const m of fs.readFileSync(path.join(repo, f), 'utf8').matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+'([^'.][^']*)'|^\s*import\s+'([^'.][^']*)'/gm)) {
      const spec = m[1] ?? m[2];
      if (spec.startsWith('node:')) continue;
      const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
      if (name !== pkg.name && dev[name] !== undefined) extras[name] = dev[name];
    }
  }
  writeConsumerProject(consumer, tarball, info.integrity, extras);
  const ci = ['ci', '--no-audit', '--no-fund', '--ignore-scripts'];
  let mode = 'offline, from the npm cache';
  try {
    execFileSync(npm, [...ci, '--offline'], { cwd: consumer, stdio: 'pipe', env: { ...process.env, npm_config_loglevel: 'error' } });
  } catch (err) {
    if (!String(err.stderr).includes('ENOTCACHED')) throw err;
    // The cache lacks some package metadata: fetch only what is missing, then it is offline-ready.
    mode = 'prefer-offline: the npm cache lacked some metadata, fetched from the registry';
    run(npm, [...ci, '--prefer-offline'], consumer, { npm_config_loglevel: 'error' });
  }
  step(`installed the tarball into a throwaway project (npm ci ${mode}; with ${Object.keys(extras).join(', ')})`);

  const program = `
import { Server, SystemContext, inject, injectable, token } from 'polestar-di';
import { createTestServer, assertNoLeaks } from 'polestar-di/testing';

const ApiKey = token<string>('ApiKey');

@injectable()
class Client {
  constructor(@inject(ApiKey) readonly key: string) {}
}

export async function main(): Promise<string> {
  const server: Server = await createTestServer({ globals: [[ApiKey, 'secret']] });
  const ctx: SystemContext = server.createContext().child();
  const key = ctx.resolve(Client).key;
  await server.dispose();
  assertNoLeaks(server);
  return key;
}
`;
  const allEntries = entries.map((e, i) => `import * as entry${i} from '${e.spec}';`).join('\n') + `\nexport const entries = [${entries.map((_, i) => `entry${i}`).join(', ')}];\n`;
  // An @internal member must not be visible to consumers.
  const internals = `
import { Agent, Agents, Events, Prompts, SystemContext, Tools } from 'polestar-di';
declare const ctx: SystemContext;
// @ts-expect-error _scopeKey is @internal: stripped from the published types
void ctx._scopeKey;
// Classes with an @internal constructor are still tokens (a protected one was not).
export const views = [ctx.get(Tools), ctx.get(Agents), ctx.get(Events), ctx.get(Prompts), ctx.tryGet(Agent)];
// @ts-expect-error the constructor is @internal: agents come from agents.create
void new Agent();
`;
  const compilerOptions = {
    strict: true,
    noEmit: true,

    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    target: 'ES2022',
    // DOM: the declarations of ai and @openai/agents (the optional peers behind
    // polestar-di/adapters/ai-sdk and /openai-agents) name fetch and WebRTC types that only
    // lib DOM declares, as in any project that type-checks them with skipLibCheck off.
    lib: ['ES2022', 'esnext.disposable', 'DOM'],
    types: ['node'],
  };
  // node10 keeps skipLibCheck on (NestJS's default): inversify 8 ships its types behind
  // "exports" only, which node10 can not read, so polestar-di's own .d.ts importing
  // 'inversify' would be reported there (docs/packaging.md). nodenext checks every .d.ts.
  for (const [name, resolution] of [
    ['node10', { module: 'commonjs', moduleResolution: 'node10', esModuleInterop: true, skipLibCheck: true }],
    ['nodenext', { module: 'nodenext', moduleResolution: 'nodenext', skipLibCheck: false }],
  ]) {
    const dir = path.join(consumer, `types-${name}`);
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'program.ts'), program);
    fs.writeFileSync(path.join(dir, 'entries.ts'), allEntries);
    fs.writeFileSync(path.join(dir, 'internals.ts'), internals);
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...compilerOptions, ...resolution, ignoreDeprecations: '6.0' }, include: ['*.ts'] }, null, 2));
    run(process.execPath, [tsc, '-p', dir], consumer);
    step(`types: ${entries.map((e) => e.spec).join(', ')} type-check with moduleResolution ${name} (skipLibCheck ${resolution.skipLibCheck}; @internal members hidden)`);
  }

  // The examples import polestar by its package name: copied into the consumer, they
  // type-check against the installed tarball's declarations, as a user's copy does.
  const exampleDir = path.join(consumer, 'examples');
  for (const f of exampleFiles) {
    fs.mkdirSync(path.dirname(path.join(consumer, f)), { recursive: true });
    fs.copyFileSync(path.join(repo, f), path.join(consumer, f));
  }
  if (exampleFiles.length > 0) {
    fs.writeFileSync(path.join(exampleDir, 'package.json'), JSON.stringify({ type: 'module', private: true }, null, 2));
    const exampleOptions = { ...compilerOptions, module: 'nodenext', moduleResolution: 'nodenext', isolatedModules: true, esModuleInterop: true, skipLibCheck: true };
    fs.writeFileSync(path.join(exampleDir, 'tsconfig.json'), JSON.stringify({ compilerOptions: exampleOptions, include: ['**/*.ts'] }, null, 2));
    run(process.execPath, [tsc, '-p', exampleDir], consumer);
    step(`examples: ${exampleFiles.length} files type-check against the installed package (their 'polestar-di/...' imports resolved through its "exports")`);
  }

  const esm = `
${entries.map((e, i) => `const m${i} = await import('${e.spec}');`).join('\n')}
const { Server, token, injectable, inject } = m0;
const { createTestServer, assertNoLeaks } = await import('polestar-di/testing');
const inversify = await import('inversify');
if (injectable !== inversify.injectable || inject !== inversify.inject) throw new Error('injectable/inject are not the installed inversify\\'s');
const ApiKey = token('ApiKey');
class Client { constructor(key) { this.key = key; } }
inject(ApiKey)(Client, undefined, 0);
injectable()(Client);
const server = await createTestServer({ globals: [[ApiKey, 'secret']] });
const key = server.createContext().child().resolve(Client).key;
await server.dispose();
assertNoLeaks(server);
if (key !== 'secret' || !(server instanceof Server)) throw new Error('consumer program gave ' + key);
console.log('esm ok: ' + ${JSON.stringify(entries.map((e) => e.spec).join(', '))});
`;
  fs.writeFileSync(path.join(consumer, 'esm.mjs'), esm);
  run(process.execPath, ['esm.mjs'], consumer);
  const cjs = `
const loaded = [${entries.map((e) => `require('${e.spec}')`).join(', ')}];
for (const m of loaded) if (Object.keys(m).length === 0) throw new Error('an entry loaded empty');
if (typeof loaded[0].Server !== 'function' || typeof loaded[0].injectable !== 'function') throw new Error('require("polestar-di") is missing exports');
console.log('cjs ok');
`;
  fs.writeFileSync(path.join(consumer, 'cjs.cjs'), cjs);
  run(process.execPath, ['--no-warnings=ExperimentalWarning', 'cjs.cjs'], consumer);
  step(`runtime: every entry loads with import() and require(); a program using the public API and the re-exported decorators runs`);
  console.log('check-pack: ok');
} finally {
  if (keep) console.log(`check-pack: kept ${tmp}`);
  else fs.rmSync(tmp, { recursive: true, force: true });
}
