/**
 * The fair benchmark harness every bench uses.
 *
 * Rules (issue 9; docs/performance.md explains why each one matters):
 *
 * 1. Each contender's timed work runs in **batches** (sized so one batch takes about
 *    `batchMs`), never as one long job.
 * 2. Between two batches the harness **yields to the event loop** with `setImmediate`,
 *    untimed, so promise jobs, `WeakRef` targets (inversify's plan-cache subscriptions),
 *    `FinalizationRegistry` callbacks and I/O run as they would on a server, and so no
 *    contender is billed for the garbage another one left in the same job.
 * 3. Contenders **interleave round by round** (the starting contender rotates each round);
 *    a ratio is taken **within one round** (both sides ran seconds apart, under the same
 *    machine load), then summarised over rounds.
 * 4. Each contender keeps **a few live instances resident** (its `run` works over state set
 *    up once, as a server holds its agents); that is the contender's business, see each
 *    bench.
 * 5. The harness **never forces a GC** (no `gc()` anywhere near the clock: it would throw
 *    away type feedback and bill the next batch for recompiling). Only the heap rows call
 *    `gc()`, and they time nothing.
 * 6. Figures are reported as **min / median over rounds**.
 * 7. Each area runs in **a process of its own** (bench/index.ts forks one per area), so no
 *    area's figures depend on the type feedback and heap another area left behind; the
 *    contenders of one comparison always share a process (rule 3).
 */
import { loadavg } from 'node:os';

/** Monotonic time in nanoseconds. */
export function now(): number {
  return Number(process.hrtime.bigint());
}

/** Yields to the event loop once (a macrotask: promise jobs and finalizers run first). */
export function yieldLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** How long benches run: `full` for `npm run bench`, `quick` for the CI smoke run. */
export interface Budget {
  readonly name: 'full' | 'quick';
  /** Rounds per comparison. */
  readonly rounds: number;
  /** Timed batches per contender per round. */
  readonly batchesPerRound: number;
  /** Target duration of one batch, ms. */
  readonly batchMs: number;
  /** Untimed warm-up (and batch-size calibration) per contender, ms. */
  readonly warmupMs: number;
}

const FULL: Budget = { name: 'full', rounds: 15, batchesPerRound: 4, batchMs: 5, warmupMs: 250 };
const QUICK: Budget = { name: 'quick', rounds: 7, batchesPerRound: 2, batchMs: 3, warmupMs: 150 };

/** The budget of this process: `--quick` on the command line or `BENCH_QUICK=1` selects the short one. */
export function budget(): Budget {
  return process.argv.includes('--quick') || process.env.BENCH_QUICK === '1' ? QUICK : FULL;
}

/** One contender of a comparison. */
export interface Contender {
  /** Short, stable name (the JSON key). */
  readonly name: string;
  /**
   * Runs `n` operations on resident state and resolves when they are done. When
   * `selfTimed` is set it must instead resolve to the nanoseconds spent in the part of the
   * `n` operations that is being measured (for workloads whose per-op preparation must stay
   * off the clock).
   */
  readonly run: (n: number) => unknown;
  readonly selfTimed?: boolean;
}

/** Min and median of a series of samples. */
export interface Stats {
  readonly min: number;
  readonly median: number;
  /** The per-round samples, in round order. */
  readonly samples: readonly number[];
}

/** Summarises samples as min / median. */
export function stats(samples: readonly number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { min: sorted[0], median, samples };
}

/** The result of {@link compare}: ns per op of each contender, per round. */
export class Comparison {
  constructor(
    /** ns/op of each contender, one sample per round. */
    readonly perRound: ReadonlyMap<string, readonly number[]>,
    /** Batch size (ops) chosen for each contender. */
    readonly batchSize: ReadonlyMap<string, number>,
  ) {}

  /** ns/op of `name`, min / median over rounds. */
  ns(name: string): Stats {
    return stats(this.#samples(name));
  }

  /** `a / b`, taken within each round, then min / median over rounds. */
  ratio(a: string, b: string): Stats {
    const sa = this.#samples(a);
    const sb = this.#samples(b);
    return stats(sa.map((x, i) => x / sb[i]));
  }

  /** `a - b` (ns/op), taken within each round, then min / median over rounds. */
  difference(a: string, b: string): Stats {
    const sa = this.#samples(a);
    const sb = this.#samples(b);
    return stats(sa.map((x, i) => x - sb[i]));
  }

  #samples(name: string): readonly number[] {
    const s = this.perRound.get(name);
    if (s === undefined) throw new Error(`bench: no contender named ${name}`);
    return s;
  }
}

async function timeBatch(c: Contender, n: number): Promise<number> {
  if (c.selfTimed === true) return (await c.run(n)) as number;
  const t0 = now();
  await c.run(n);
  return now() - t0;
}

/** Untimed warm-up that also finds the batch size giving about `batchMs` per batch. */
async function calibrate(c: Contender, b: Budget, maxBatch: number): Promise<number> {
  const target = b.batchMs * 1e6;
  const start = now();
  let n = 1;
  let best = Infinity; // ns/op, fastest batch seen
  for (;;) {
    const dt = await timeBatch(c, n);
    await yieldLoop();
    best = Math.min(best, Math.max(dt, 1) / n);
    const elapsed = now() - start;
    if (dt < target / 2 && n < maxBatch) {
      n = Math.min(maxBatch, n * 2);
      continue;
    }
    if (elapsed >= b.warmupMs * 1e6) break;
  }
  return Math.max(1, Math.min(maxBatch, Math.round(target / best)));
}

/** Options of {@link compare}. */
export interface CompareOptions {
  readonly budget?: Budget;
  /** Upper bound on a batch (for workloads that consume a finite resource). */
  readonly maxBatch?: number;
}

/**
 * Measures every contender under the harness rules above and returns ns/op per round.
 * Order of `contenders` does not matter: the first contender of round `r` is
 * `contenders[r % length]`.
 */
export async function compare(contenders: readonly Contender[], options: CompareOptions = {}): Promise<Comparison> {
  const b = options.budget ?? budget();
  const maxBatch = options.maxBatch ?? 1e7;
  const sizes = new Map<string, number>();
  for (const c of contenders) {
    if (sizes.has(c.name)) throw new Error(`bench: duplicate contender ${c.name}`);
    sizes.set(c.name, await calibrate(c, b, maxBatch));
  }
  const perRound = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  for (let r = 0; r < b.rounds; r++) {
    for (let k = 0; k < contenders.length; k++) {
      const c = contenders[(r + k) % contenders.length];
      const n = sizes.get(c.name) as number;
      let ns = 0;
      for (let i = 0; i < b.batchesPerRound; i++) {
        ns += await timeBatch(c, n);
        await yieldLoop();
      }
      (perRound.get(c.name) as number[]).push(ns / (n * b.batchesPerRound));
    }
  }
  return new Comparison(perRound, sizes);
}

/**
 * Times one single-shot operation `rounds` times (fresh state each time, built by
 * `prepare`, untimed) and returns ms, min / median. For workloads that are one big job
 * (adding 40,000 listeners) rather than a rate.
 */
export async function timeOnce<S>(rounds: number, prepare: () => Promise<S> | S, op: (state: S) => Promise<number> | number, cleanup?: (state: S) => Promise<void> | void): Promise<Stats> {
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const state = await prepare();
    await yieldLoop();
    samples.push(await op(state));
    await yieldLoop();
    await cleanup?.(state);
  }
  return stats(samples);
}

/** Runs a full GC when node was started with --expose-gc. For heap rows only: never before a clock. */
export async function settleHeap(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('bench: heap rows need node --expose-gc');
  for (let i = 0; i < 4; i++) {
    gc();
    await yieldLoop();
  }
  return process.memoryUsage().heapUsed;
}

/** The 1-, 5- and 15-minute load averages, rounded (reported with every run). */
export function load(): [number, number, number] {
  return loadavg().map((x) => Math.round(x * 100) / 100) as [number, number, number];
}
