/**
 * Runs every benchmark (one module per hot path, plus the scale bench) in this process
 * and prints a table per area, then one JSON document.
 *
 * Usage: `npm run bench` (builds, then runs with --expose-gc). Flags:
 * `--quick` (the short CI budget), `--only=context,scale` (some areas),
 * `--json` (the JSON document only, pretty-printed).
 */
import { header, printTable, type BenchReport } from './report.js';
import { budget, load } from './harness.js';

/** Every area, in run order. */
export const AREAS = ['context', 'systems', 'tools', 'agents', 'scale'] as const;

/** Runs `areas` (each `bench/<area>.bench.ts`) and returns their reports. */
export async function runAreas(areas: readonly string[]): Promise<BenchReport[]> {
  const reports: BenchReport[] = [];
  for (const area of areas) {
    const mod = (await import(`./${area}.bench.js`)) as { run(): Promise<BenchReport> };
    reports.push(await mod.run());
  }
  return reports;
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
