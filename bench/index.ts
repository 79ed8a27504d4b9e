/**
 * Runs every benchmark (one module per hot path, plus the scale bench) and prints a table
 * per area, then one JSON document.
 *
 * Each area runs in **its own Node process** (a fresh V8, as JMH forks a fresh JVM per
 * benchmark): an area's figures must not depend on which areas ran before it. In one
 * process they did: the type feedback the earlier areas left in polestar's shared code
 * (other shapes, other call paths) and the heap they grew made the agent lifecycle read
 * 10–40% slower after the context, systems and tools areas than alone, while its Map
 * floor, bench-local code, did not move (docs/performance.md, "One process per area").
 * Within an area every rule of bench/harness.ts holds: its contenders share one process,
 * interleaved round by round.
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
export const AREAS = ['context', 'systems', 'tools', 'agents', 'scale'] as const;

/**
 * Runs `areas` (each `bench/<area>.bench.ts`), one after the other, each in its own child
 * process (unless `--one-process` is given), and returns their reports.
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

/**
 * Runs one area in a child process: `node <this process's flags> <area>.bench.js`, which
 * prints its table and then its JSON document as its last line (report.ts `runIfMain`).
 * The child's table is not shown (the caller prints every report); its stderr is.
 */
function runForked(area: string): Promise<BenchReport> {
  const file = fileURLToPath(new URL(`./${area}.bench.js`, import.meta.url));
  const args = [...process.execArgv, file, ...(budget().name === 'quick' ? ['--quick'] : [])];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (out += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code !== 0) {
        reject(new Error(`bench: the ${area} area exited with ${signal ?? `code ${String(code)}`} (run it alone: node --expose-gc ${file})`));
        return;
      }
      const last = out.trimEnd().split('\n').pop() ?? '';
      try {
        const doc = JSON.parse(last) as { reports: BenchReport[] };
        resolve(doc.reports[0] as BenchReport);
      } catch {
        reject(new Error(`bench: the ${area} area printed no JSON report as its last line`));
      }
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
