/**
 * Runs every benchmark (one module per hot path) in this process and prints a JSON
 * report plus a table. Usage: `npm run bench` (builds, then runs with --expose-gc).
 */
import { printTable, type BenchReport } from './report.js';

const areas = ['context', 'systems', 'tools', 'agents'];

async function main(): Promise<void> {
  const reports: BenchReport[] = [];
  for (const area of areas) {
    const mod = (await import(`./${area}.bench.js`)) as { run(): Promise<BenchReport> };
    reports.push(await mod.run());
  }
  const json = process.argv.includes('--json');
  if (json) {
    console.log(JSON.stringify({ node: process.version, date: new Date().toISOString(), reports }, null, 2));
    return;
  }
  for (const r of reports) printTable(r);
  console.log(JSON.stringify({ node: process.version, reports }));
}

await main();
