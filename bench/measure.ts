/** Timing helpers shared by every benchmark. */

/** Monotonic time in nanoseconds. */
export function now(): number {
  return Number(process.hrtime.bigint());
}

/** Runs a full GC when node was started with --expose-gc (no-op otherwise). */
export function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Median ns per op over `rounds` rounds of `n` ops (after one warm-up round). */
export async function nsPerOp(n: number, rounds: number, loop: (n: number) => unknown): Promise<number> {
  gc();
  await loop(Math.min(n, 20_000));
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = now();
    await loop(n);
    samples.push((now() - t0) / n);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}
