/**
 * Runs every benchmark (one module per hot path, plus the scale bench) and prints a table
 * per area, then one JSON document.
 *
 * Each area runs in **its own Node process** (a fresh V8, as JMH forks a fresh JVM per
 * benchmark): an area's figures must not depend on which areas ran before it. In one
 * process they did: what the earlier areas left in V8 (allocation-site pretenuring
 * decisions, type feedback, a grown heap) made the agent lifecycle read about 17% slower
 * after the context, systems and tools areas than alone, while its Map floor, bench-local
 * code, did not move (docs/performance.md, "One process per area"; the pretenuring part
 * was a polestar problem, fixed since, and both ways now read alike). Within an area every
 * rule of bench/harness.ts holds: its contenders share one process, interleaved round by
 * round.
 *
 * Usage: `npm run bench` (builds, then runs with --expose-gc). Flags:
 * `--quick` (the short CI budget), `--only=context,scale` (some areas),
 * `--json` (the JSON document only, pretty-printed), `--one-process` (every area in this
 * process, one after the other, as before: to see what the areas do to each other).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { header, printTable, type BenchReport } from './report.js';
import { budget, load } from './harness.js';

/** Every area, in run order. */
export const AREAS = ['context', 'systems', 'tools', 'agents', 'scale', 'routing', 'durable', 'sqlite-soak'] as const;

/**
 * Runs `areas` (each `bench/<area>.bench.ts`), one after the other, each in its own child
 * process (unless `--one-process` is given, here or to the smoke run), and returns their
 * reports.
 */
export async function runAreas(areas: readonly string[]): Promise<BenchReport[]> {
  const reports: BenchReport[] = [];
  const oneProcess = process.argv.includes('--one-process');
  for (const area of areas) reports.push(oneProcess ? await runHere(area) : await runForked(area));
  return reports;
}

/** Runs one area in this process. */
async function runHere(area: string): Promise<BenchReport> {
  const mod = (await import(`./${area}.bench.js`)) as { run(): Promise<BenchReport> };
  return mod.run();
}

/** How long one area may run in its child process before it is killed (a full run takes well under a minute). */
const AREA_TIMEOUT_MS = 10 * 60_000;

/**
 * Runs one area in a child process: `node <this process's flags> <area>.bench.js`, which
 * prints its table and then its JSON document as its last line (report.ts `runIfMain`).
 * The child's table is not shown (the caller prints every report); its stderr is. A child
 * that exits with an error, prints no report or outlives
 * {@link AREA_TIMEOUT_MS} rejects (and is killed).
 */
function runForked(area: string): Promise<BenchReport> {
  const file = fileURLToPath(new URL(`./${area}.bench.js`, import.meta.url));
  const flags = budget().name === 'quick' ? ['--quick'] : [];
  const args = [...process.execArgv, file, ...flags];
  const alone = `node --expose-gc ${file}${flags.length > 0 ? ' --quick' : ''}`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`bench: the ${area} area ran for more than ${AREA_TIMEOUT_MS / 60_000} minutes and was killed (run it alone: ${alone})`));
    }, AREA_TIMEOUT_MS);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (out += chunk));
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) {
        reject(new Error(`bench: the ${area} area exited with ${signal ?? `code ${String(code)}`} (run it alone: ${alone})`));
        return;
      }
      const last = out.trimEnd().split('\n').pop() ?? '';
      let report: BenchReport | undefined;
      try {
        report = (JSON.parse(last) as { reports?: BenchReport[] }).reports?.[0];
      } catch {
        report = undefined;
      }
      if (report === undefined || !Array.isArray(report.rows)) {
        reject(new Error(`bench: the ${area} area printed no JSON report as its last line; its output ended with: ${out.slice(-300)}`));
        return;
      }
      resolve(report);
    });
  });
}

/** The areas named by `--only=a,b` (all when absent). */
export function selectedAreas(): string[] {
  const only = process.argv.find((a) => a.startsWith('--only='));
  if (only === undefined) return [...AREAS];
  const names = only.slice('--only='.length).split(',').filter((s) => s.length > 0);
  for (const n of names) if (!(AREAS as readonly string[]).includes(n)) throw new Error(`bench: unknown area ${n} (areas: ${AREAS.join(', ')})`);
  return names;
}

async function main(): Promise<void> {
  const json = process.argv.includes('--json');
  if (!json) console.log(`polestar benchmarks, ${budget().name} budget, node ${process.version}, load ${load().join(' ')}`);
  const reports = await runAreas(selectedAreas());
  if (json) {
    console.log(JSON.stringify({ ...header(), reports }, null, 2));
    return;
  }
  for (const r of reports) printTable(r);
  console.log(JSON.stringify({ ...header(), reports }));
}

if (process.argv[1]?.endsWith('bench/index.js')) await main();
