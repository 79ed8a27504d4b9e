/**
 * The SQLite store: the conformance suite on one file shared by every store object.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteSessionStore } from '../../src/sessions/sqlite.js';
import { runSessionStoreConformance } from '../../src/testing/index.js';

const dir = mkdtempSync(join(tmpdir(), 'polestar-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SqliteSessionStore conformance', () => {
  runSessionStoreConformance(() => new SqliteSessionStore({ path: join(dir, 'conformance.db') }), { test, leaseTtlMs: 600 });
});
