/**
 * CI smoke run of the benchmarks: every area with the short budget (each in a process of
 * its own, see bench/index.ts), checked against
 * generous limits so that it fails only on a gross regression (about a 5× jump), never on
 * the noise of a shared machine. Unit tests make no timing assertions; this is where
 * performance is guarded.
 *
 * A limit is 5× the issue-9 target, except for absolute times (about 10×: load inflates
 * them most). A row may also carry `pending` (the area owing a fix, and the limit
 * it should get then); none does today. An area with a row over its limit runs a second
 * time; only a row over its limit twice fails the run. An area that needs a server this
 * machine can not reach (routing: PostgreSQL) reports one `<area>.skipped` row saying why
 * instead of its rows, which excuses their limits.
 *
 * Run: `npm run bench:smoke` (or `node --expose-gc .build/bench/smoke.js` after
 * `npm run build:run`). Prints the tables, then one JSON document with the verdicts.
 */
import { AREAS, runAreas } from './index.js';
import { header, printTable, type BenchReport, type BenchRow } from './report.js';

if (!process.argv.includes('--quick')) process.argv.push('--quick');

interface Limit {
  /** The row's median must not exceed this. */
  readonly max: number;
  /** Why this number. */
  readonly why: string;
  /** The room whose fix will let the limit drop to `then`. */
  readonly pending?: { readonly room: string; readonly then: number };
  /**
   * The row an area reports instead when it skipped itself (it needs a server this machine
   * does not have, and says so in that row): its presence excuses this row's absence.
   */
  readonly skippedBy?: string;
}

/** Limits by row id (see each bench for the rows). Rows without a limit are reported only. */
export const LIMITS: Readonly<Record<string, Limit>> = {
  // context
  'turn.polestar/floor': { max: 7, why: '5 × the 1.4× target' },
  'get4.polestar/floor': { max: 10, why: '5 × the 2× target' },
  'heap.turn': { max: 5120, why: '5 × the 1 KB target' },
  'insert.ratio': { max: 7.5, why: '5 × the 1.5× target' },
  // systems
  'run.ratio': { max: 8, why: '5 × the 1.6× target' },
  'run-async.ratio': { max: 10, why: '5 × the 2× target' },
  'execute.ratio': { max: 25, why: '5 × the ~5× measured (no target)' },
  'resolve.ratio': { max: 10, why: '5 × the ~2× measured (no target)' },
  // tools
  'visible.ns': { max: 5000, why: '5 × the 1 µs target' },
  // An absolute time: a loaded 2-core machine inflates it 3–5×, hence ~10× the quiet figure.
  'execute.overhead': { max: 15, why: '10 × the 1.5 µs target (measured 1.1–3 µs, load-sensitive)' },
  'execute.vs-ajv': { max: 50, why: '5 × the ~9–10× measured on the one-property tool (the 2.5× target is not met; see docs/performance.md)' },
  'heap.scope5': { max: 20480, why: '5 × the 4 KB target' },
  // agents
  'lifecycle.polestar/floor': { max: 25, why: '5 × the 5× target (measured 3.7–4.4×: docs/performance.md)' },
  'load.heap': { max: 81920, why: '5 × the 16 KB target' },
  'load.growth': { max: 25600, why: '5 × the 5 MB limit' },
  'load.leaks': { max: 0, why: 'nothing may be left after disposal' },
  'heap.agent5': { max: 22000, why: '5 × the ~4.3 KB measured' },
  // scale
  'churn.ratio': { max: 7.5, why: '5 × the 1.5× target' },
  'listeners.ratio': { max: 7.5, why: '5 × the 1.5× target' },
  'listener-churn.ms': { max: 5000, why: '5 × the 1 s target' },
  'schema-heap.after': { max: 10, why: '5 × the 2 MB target' },
  // routing (two processes on PostgreSQL; without a reachable server the area reports routing.skipped)
  'handoff.added': { max: 500, why: '10 × the 50 ms target (an absolute time)', skippedBy: 'routing.skipped' },
  'release.wake': { max: 1000, why: '10 × the 100 ms target (an absolute time)', skippedBy: 'routing.skipped' },
  'cancel.ms': { max: 10_000, why: '10 × the 1 s target (an absolute time)', skippedBy: 'routing.skipped' },
  'routing.lost': { max: 0, why: 'no conversation may lose a turn', skippedBy: 'routing.skipped' },
  'routing.doubled': { max: 0, why: 'no message may be stored twice', skippedBy: 'routing.skipped' },
  // durable turns (3 rounds on the quick budget, and fsync latency swings: ~5 × the measured median)
  'durable.sqlite.polestar/floor': { max: 20, why: '~5 × the 2.7–4.4× measured (the 1.3× target is not met yet)' },
  'durable.sqlite.resume1000.polestar/floor': { max: 50, why: '~5 × the 8–10× measured (the 3× target is not met yet)' },
  'durable.pg.polestar/floor': { max: 12, why: '~5 × the 1.3–2.2× measured', skippedBy: 'durable.pg.skipped' },
  'durable.pg.resume1000.polestar/floor': { max: 25, why: '~5 × the 3–4.4× measured', skippedBy: 'durable.pg.skipped' },
};

interface Verdict {
  readonly id: string;
  readonly median: number;
  readonly max: number;
  readonly ok: boolean;
  readonly pending?: string;
}

function judge(reports: readonly BenchReport[]): Verdict[] {
  const out: Verdict[] = [];
  for (const r of reports) {
    for (const row of r.rows as BenchRow[]) {
      const limit = LIMITS[row.id];
      if (limit === undefined) continue;
      out.push({
        id: row.id,
        median: row.median,
        max: limit.max,
        ok: row.median <= limit.max,
        ...(limit.pending === undefined ? {} : { pending: `${limit.pending.room} (then ${limit.pending.then})` }),
      });
    }
  }
  return out;
}

async function main(): Promise<void> {
  const reports = await runAreas(AREAS);
  for (const r of reports) printTable(r);
  let verdicts = judge(reports);
  const reported = new Set(reports.flatMap((r) => r.rows.map((row) => row.id)));
  const unmeasured = Object.keys(LIMITS).filter((id) => !verdicts.some((v) => v.id === id));
  const excused = unmeasured.filter((id) => {
    const by = LIMITS[id]?.skippedBy;
    return by !== undefined && reported.has(by);
  });
  const missing = unmeasured.filter((id) => !excused.includes(id));
  for (const r of reports) for (const row of r.rows) if (row.id.endsWith('.skipped')) console.log(`\nsmoke: ${r.name}: ${row.metric} (rows not checked: ${excused.join(', ')})`);
  const failedAreas = reports.filter((r) => r.rows.some((row) => verdicts.some((v) => v.id === row.id && !v.ok))).map((r) => AREAS[reports.indexOf(r)]);
  if (failedAreas.length > 0) {
    console.log(`\nsmoke: over the limit in ${failedAreas.join(', ')}; running ${failedAreas.length === 1 ? 'it' : 'them'} once more`);
    const again = await runAreas(failedAreas);
    for (const r of again) printTable(r);
    const second = judge(again);
    verdicts = verdicts.map((v) => (v.ok ? v : (second.find((s) => s.id === v.id) ?? v)));
  }
  console.log('\n## smoke verdicts');
  console.table(verdicts.map((v) => ({ row: v.id, median: Number(v.median.toPrecision(3)), limit: v.max, ok: v.ok ? 'yes' : 'NO', pending: v.pending ?? '' })));
  console.log(JSON.stringify({ ...header(), smoke: verdicts, missing, reports }));
  const bad = verdicts.filter((v) => !v.ok);
  if (missing.length > 0) console.error(`smoke: rows with a limit were not measured: ${missing.join(', ')}`);
  if (bad.length > 0) console.error(`smoke: over the limit twice: ${bad.map((v) => `${v.id} ${v.median.toPrecision(3)} > ${v.max}`).join('; ')}`);
  if (bad.length > 0 || missing.length > 0) process.exit(1);
  console.log(`smoke: ${verdicts.length} rows within their limits`);
}

await main();
