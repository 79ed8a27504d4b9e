/**
 * The PostgreSQL store: the conformance suite in a fresh database shared by every store
 * object (see pg-target.ts for when these tests run or are skipped).
 */
import { PostgresSessionStore } from '../../src/sessions/postgres.js';
import { runSessionStoreConformance } from '../../src/testing/index.js';
import { createTestDatabase, describePg, pgTarget } from './pg-target.js';

const target = await pgTarget();
let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;

describePg(target)('PostgresSessionStore conformance', () => {
  beforeAll(async () => {
    if (target.ok) db = await createTestDatabase(target.adminUrl, 'conformance');
  });
  afterAll(async () => {
    await db?.drop();
  });
  runSessionStoreConformance(() => new PostgresSessionStore({ connectionString: (db as { url: string }).url, max: 4 }), { test, leaseTtlMs: 800 });
});
