/** What every benchmark prints: rows as JSON (machine-readable) plus a table (human-readable). */
import { availableParallelism } from 'node:os';
import { budget, load, type Stats } from './harness.js';

/** One measured figure of a benchmark. */
export interface BenchRow {
  /** Stable identifier (the CI smoke thresholds and docs refer to it). */
  readonly id: string;
  readonly metric: string;
  readonly unit: string;
  /** Median over rounds (the figure a target is checked against). */
  readonly median: number;
  /** Minimum over rounds (best case; equal to `median` for single-shot rows). */
  readonly min: number;
  /** The target from issue 9 (or an older README target), as text. */
  readonly target?: string;
  /** Whether the median meets the target. */
  readonly ok?: boolean;
}

/** What each bench/<area>.bench.ts `run()` resolves to. */
export interface BenchReport {
  readonly name: string;
  readonly rows: BenchRow[];
  /** Load averages (1, 5, 15 min) when the area started and when it ended. */
  readonly load?: { readonly start: number[]; readonly end: number[] };
}

/** A row from min / median stats. */
export function row(id: string, metric: string, unit: string, s: Stats, target?: { text: string; max: number }): BenchRow {
  return {
    id,
    metric,
    unit,
    median: s.median,
    min: s.min,
    ...(target === undefined ? {} : { target: target.text, ok: s.median <= target.max }),
  };
}

/** A row from one value. */
export function single(id: string, metric: string, unit: string, value: number, target?: { text: string; max: number }): BenchRow {
  return row(id, metric, unit, { min: value, median: value, samples: [value] }, target);
}

function fmt(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a >= 1000) return Math.round(v).toLocaleString('en-US');
  return String(Number(v.toPrecision(3)));
}

/** Prints one report as a table. */
export function printTable(report: BenchReport): void {
  const l = report.load === undefined ? '' : ` (load ${report.load.start.join(' ')} → ${report.load.end.join(' ')})`;
  console.log(`\n## ${report.name}${l}`);
  console.table(
    report.rows.map((r) => ({
      metric: r.metric,
      median: fmt(r.median),
      min: r.min === r.median ? '' : fmt(r.min),
      unit: r.unit,
      target: r.target ?? '',
      ok: r.ok === undefined ? '' : r.ok ? 'yes' : 'NO',
    })),
  );
}

/** Wraps an area's measurement with the load averages before and after. */
export async function withLoad(name: string, measure: () => Promise<BenchRow[]>): Promise<BenchReport> {
  const start = load();
  const rows = await measure();
  return { name, rows, load: { start, end: load() } };
}

/** The header of every JSON document the benches print. */
export function header(): Record<string, unknown> {
  return { node: process.version, date: new Date().toISOString(), budget: budget().name, cpus: availableParallelism() };
}

/**
 * Runs `run` when the compiled benchmark file is the process's entry point (so each
 * `.build/bench/<area>.bench.js` also runs alone): prints its table, then one JSON line.
 */
export async function runIfMain(file: string, run: () => Promise<BenchReport>): Promise<void> {
  if (!process.argv[1]?.endsWith(file)) return;
  const report = await run();
  printTable(report);
  console.log(JSON.stringify({ ...header(), reports: [report] }));
}
