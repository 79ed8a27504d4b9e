/** One measured figure of a benchmark. */
export interface BenchRow {
  metric: string;
  value: number;
  unit: string;
  target?: string;
  ok?: boolean;
}

/** What each bench/<area>.bench.ts `run()` resolves to. */
export interface BenchReport {
  name: string;
  rows: BenchRow[];
}

/** Prints one report as a table: the human-readable half of every benchmark's output. */
export function printTable(report: BenchReport): void {
  console.log(`\n## ${report.name}`);
  console.table(
    report.rows.map((row) => ({
      metric: row.metric,
      value: Number(row.value.toPrecision(4)),
      unit: row.unit,
      target: row.target ?? '',
      ok: row.ok === undefined ? '' : row.ok ? 'yes' : 'NO',
    })),
  );
}

/**
 * Runs `run` when the compiled benchmark file is the process's entry point (so each
 * `.build/bench/<area>.bench.js` also runs alone): prints its JSON, then its table.
 */
export async function runIfMain(file: string, run: () => Promise<BenchReport>): Promise<void> {
  if (!process.argv[1]?.endsWith(file)) return;
  const report = await run();
  console.log(JSON.stringify(report));
  printTable(report);
}
