/**
 * A child process for the PostgreSQL connection-fault tests: a `PostgresSessionStore` (on
 * its own pool, or on a `pg.Pool` of "the user" with no error listener) driven by commands
 * on stdin, one JSON object per line on stdout. The parent stops and restarts the server
 * under it and checks that this process never dies. Run it with {@link spawnVictim}: it is
 * TypeScript, loaded through ts-node's ESM loader (transpile only), so it runs the current
 * sources without a build.
 *
 * Config (argv[2], JSON): `{ url, pool: 'own' | 'user', sessionId, bounds?: { callTimeoutMs, leaseTtlMs }, ttlMs? }`.
 * Commands (stdin lines): `renew` (one renew; answers `{ op: 'renew', ok }` or
 * `{ op: 'renew', code, message }`), `exit` (closes the store and exits 0).
 * First line out: `{ ready: true }` once the session is created.
 */
import pg from 'pg';
import { createInterface } from 'node:readline';
import { PostgresSessionStore } from '../../../src/sessions/postgres.js';
import { SessionError } from '../../../src/sessions/errors.js';
import { STORE_BOUND } from '../../../src/sessions/store/store-bound.js';

interface VictimConfig {
  readonly url: string;
  readonly pool: 'own' | 'user';
  readonly sessionId: string;
  readonly bounds?: { readonly callTimeoutMs: number; readonly leaseTtlMs: number };
  /** The lease's TTL (default 600,000 ms). */
  readonly ttlMs?: number;
}

const config = JSON.parse(process.argv[2] as string) as VictimConfig;
const say = (o: unknown): void => {
  process.stdout.write(JSON.stringify(o) + '\n');
};

// The user's pool has deliberately no 'error' listener of its own.
const userPool = config.pool === 'user' ? new pg.Pool({ connectionString: config.url, max: 3 }) : undefined;
const store = userPool !== undefined ? new PostgresSessionStore({ pool: userPool }) : new PostgresSessionStore({ connectionString: config.url, max: 3 });
if (config.bounds !== undefined) store[STORE_BOUND](config.bounds);

const lease = await store.create({ sessionId: config.sessionId, agentId: 'victim', owner: 'victim', ttlMs: config.ttlMs ?? 600_000, locals: [] });
say({ ready: true });

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const cmd = line.trim();
  if (cmd === 'renew') {
    try {
      await store.renew(lease);
      say({ op: 'renew', ok: true });
    } catch (err) {
      say({ op: 'renew', code: err instanceof SessionError ? err.code : 'NOT_A_SESSION_ERROR', message: err instanceof Error ? err.message : String(err) });
    }
  } else if (cmd === 'exit') {
    await store.close();
    await userPool?.end();
    say({ exiting: true });
    process.exit(0);
  }
}
