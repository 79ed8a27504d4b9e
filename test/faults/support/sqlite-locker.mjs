/* global process, setTimeout */
// A child process of the fault suite: holds a SQLite file's write lock (BEGIN IMMEDIATE)
// for `holdMs`, as another program sharing the file could, then rolls back and exits.
// Argument: {"path": "...", "holdMs": 3000}. Prints {"t":"locked"} once it holds the lock
// and {"t":"unlocked"} when it let go.
import { createClient } from '@libsql/client';
import { pathToFileURL } from 'node:url';

const config = JSON.parse(process.argv[2]);
const client = createClient({ url: pathToFileURL(config.path).href });
await client.execute('PRAGMA busy_timeout = 10000');
await client.execute('CREATE TABLE IF NOT EXISTS faults_locker (x INTEGER)');
// transaction('write') is BEGIN IMMEDIATE; the write makes sure the lock is really held.
const tx = await client.transaction('write');
await tx.execute('INSERT INTO faults_locker (x) VALUES (1)');
process.stdout.write(JSON.stringify({ t: 'locked', at: Date.now() }) + '\n');
await new Promise((r) => setTimeout(r, config.holdMs));
await tx.rollback();
client.close();
process.stdout.write(JSON.stringify({ t: 'unlocked', at: Date.now() }) + '\n');
process.exit(0);
