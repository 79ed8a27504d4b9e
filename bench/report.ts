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
