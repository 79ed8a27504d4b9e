/**
 * @internal The main thread's side of the SQLite store's worker thread: it starts the
 * worker (sqlite-worker.ts), sends it requests and matches the replies. A worker that
 * ends unexpectedly (an uncaught error, or terminated) fails every request sent to it with
 * a {@link ThreadGone} error, and the next transaction starts a fresh one.
 *
 * The worker does not keep the process alive while idle: the store holds it (`hold()`)
 * while a call is queued or running, and lets go when none is.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, threadId } from 'node:worker_threads';
import { errorText } from '../../../util/error-text.js';
import { Connection, answer, loadLibsql, type WorkerData, type WorkerFailure, type WorkerReply, type WorkerRequest } from './sqlite-worker.js';

/** Request fields the caller gives (the id is added here). */
export type Request = WorkerRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/** @internal A statement's error as the worker reported it (`code` and `rawCode` are SQLite's). */
export class SqliteFailure extends Error {
  readonly code: string | undefined;
  readonly rawCode: number | undefined;
  constructor(f: WorkerFailure) {
    super(f.code !== undefined && !f.message.startsWith(f.code) ? `${f.code}: ${f.message}` : f.message);
    this.name = 'SqliteError';
    this.code = f.code;
    this.rawCode = f.rawCode;
  }
}

/** @internal The worker thread of a store ended while (or before) a request was sent to it. */
export class ThreadGone extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ThreadGone';
  }
}

/**
 * The worker's entry: its compiled file next to this one, or (the package running from its
 * TypeScript sources, under a test runner) their transpiled text, kept in the temporary
 * directory by the hash of the source so that it is transpiled once.
 */
let entry: URL | undefined;
async function workerEntry(): Promise<URL> {
  if (entry !== undefined) return entry;
  const js = new URL('./sqlite-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(js))) return (entry = js);
  const ts = new URL('./sqlite-worker.ts', import.meta.url);
  if (!existsSync(fileURLToPath(ts))) {
    throw new Error(`the SQLite store's worker file ${fileURLToPath(js)} is missing: reinstall polestar-di.`);
  }
  const source = readFileSync(ts, 'utf8');
  const file = join(tmpdir(), `polestar-sqlite-worker-${createHash('sha256').update(source).digest('hex').slice(0, 16)}.mjs`);
  if (!existsSync(file)) {
    // The worker imports nothing of polestar's, so its transpiled text runs on its own.
    const typescript = (await import('typescript')).default;
    const out = typescript.transpileModule(source, { compilerOptions: { module: typescript.ModuleKind.ESNext, target: typescript.ScriptTarget.ES2022 } }).outputText;
    const partial = `${file}.${process.pid}.${threadId}`;
    writeFileSync(partial, out);
    renameSync(partial, file);
  }
  return (entry = pathToFileURL(file));
}

/** The `libsql` binding, found where `@libsql/client` (which depends on it) finds it. */
let libsql: string | undefined;
/** @internal The file of the `libsql` binding (throws naming the package to install when it is missing). */
export function libsqlFile(label: string): string {
  if (libsql !== undefined) return libsql;
  let client: string;
  try {
    client = createRequire(import.meta.url).resolve('@libsql/client');
  } catch (err) {
    throw new Error(`SqliteSessionStore on ${label} needs the package @libsql/client, which is not installed: npm install @libsql/client.`, { cause: err });
  }
  try {
    libsql = createRequire(client).resolve('libsql');
  } catch (err) {
    throw new Error(`SqliteSessionStore on ${label}: the package libsql, a dependency of @libsql/client, was not found next to ${client}: reinstall @libsql/client.`, { cause: err });
  }
  return libsql;
}

/** @internal Where the store's transactions run: its worker thread, or (while that boots) the main thread. */
export interface Link {
  /** True once the link can no longer serve (its thread ended). */
  readonly gone: boolean;
  /** True for the connection on the main thread (its transactions' ends are awaited, to yield to the event loop). */
  readonly local: boolean;
  send(request: Request): Promise<WorkerReply>;
  ref(): void;
  unref(): void;
  terminate(): Promise<void>;
}

/**
 * @internal A connection on the main thread, serving the first calls of a store while its
 * worker thread boots (which takes tens of milliseconds, more on a loaded machine). Each
 * transaction's end yields to the event loop once, so timers (and the worker's ready
 * message) run between transactions.
 */
export class LocalLink implements Link {
  readonly local = true;
  readonly #conn: Connection;
  #closed = false;
  constructor(path: string, label: string) {
    this.#conn = new Connection(path, loadLibsql(libsqlFile(label)));
  }
  get gone(): boolean {
    return this.#closed;
  }
  send(request: Request): Promise<WorkerReply> {
    const reply = answer(this.#conn, { ...request, id: 0 } as WorkerRequest);
    const settle = (resolve: (r: WorkerReply) => void, reject: (e: Error) => void): void => {
      if (reply.error !== undefined) reject(new SqliteFailure(reply.error));
      else resolve(reply);
    };
    if (request.op === 'end') return new Promise((resolve, reject) => setImmediate(() => settle(resolve, reject)));
    return new Promise(settle);
  }
  ref(): void {}
  unref(): void {}
  /** Closes the connection (between transactions only). */
  terminate(): Promise<void> {
    this.#closed = true;
    this.#conn.close();
    return Promise.resolve();
  }
}

/** @internal One worker thread and its requests. */
export class WorkerLink implements Link {
  readonly local = false;
  readonly #worker: Worker;
  readonly #calls = new Map<number, { resolve(r: WorkerReply): void; reject(e: Error): void }>();
  #next = 1;
  /** The numbers of the statements sent to this worker, by SQL text. */
  readonly #sids = new Map<string, number>();
  /** Why the worker is gone, once it is. */
  #gone: Error | undefined;
  #crash: unknown;
  /** Resolves when the worker loaded the binding; rejects when it ended before. */
  readonly ready: Promise<void>;

  constructor(worker: Worker, label: string) {
    this.#worker = worker;
    this.ready = new Promise<void>((resolve, reject) => this.#calls.set(0, { resolve: () => resolve(), reject }));
    worker.on('message', (r: WorkerReply) => {
      const call = this.#calls.get(r.id);
      if (call === undefined) return;
      this.#calls.delete(r.id);
      if (r.error !== undefined) call.reject(new SqliteFailure(r.error));
      else call.resolve(r);
    });
    worker.on('error', (err) => {
      this.#crash = err;
    });
    worker.on('exit', (code) => {
      const why = this.#crash === undefined ? `exit code ${code}` : errorText(this.#crash);
      this.#gone = new ThreadGone(
        `the worker thread running ${label} ended (${why}); a transaction in flight on it was rolled back by SQLite, unless its COMMIT had been sent (then its outcome is unknown). The next call starts a fresh thread: retry it.`,
        this.#crash === undefined ? undefined : { cause: this.#crash },
      );
      for (const c of this.#calls.values()) c.reject(this.#gone);
      this.#calls.clear();
    });
  }

  /** True once the worker ended. */
  get gone(): boolean {
    return this.#gone !== undefined;
  }

  /** Sends one request; resolves with its reply, rejects with the statement's error or {@link ThreadGone}. */
  send(request: Request): Promise<WorkerReply> {
    if (this.#gone !== undefined) return Promise.reject(this.#gone);
    const id = this.#next++;
    let message: WorkerRequest;
    if (request.op === 'run') {
      // the SQL text crosses once per worker; then its number does (less to copy per statement)
      const known = this.#sids.get(request.sql);
      const sid = known ?? this.#sids.size + 1;
      if (known === undefined) this.#sids.set(request.sql, sid);
      message =
        request.begin === undefined
          ? { id, op: 'run', sql: known === undefined ? request.sql : '', sid, params: request.params }
          : { id, op: 'run', sql: known === undefined ? request.sql : '', sid, params: request.params, begin: request.begin, relaxed: request.relaxed === true };
    } else message = { ...request, id } as WorkerRequest;
    return new Promise<WorkerReply>((resolve, reject) => {
      this.#calls.set(id, { resolve, reject });
      this.#worker.postMessage(message);
    });
  }

  ref(): void {
    this.#worker.ref();
  }

  unref(): void {
    this.#worker.unref();
  }

  /** Ends the worker (its connection is closed with it); resolves once it has exited. */
  async terminate(): Promise<void> {
    if (this.#gone !== undefined) return;
    await this.#worker.terminate();
  }
}

/** @internal Starts a worker thread for the SQLite file `path`, unref'd; resolves once it is ready to serve. */
export async function startWorker(path: string, label: string): Promise<WorkerLink> {
  const data: WorkerData = { polestarSqliteWorker: true, path, libsql: libsqlFile(label) };
  // No flags of the main thread's (a script run with --input-type, say, would not start).
  const worker = new Worker(await workerEntry(), { workerData: data, execArgv: [] });
  const link = new WorkerLink(worker, label);
  // Unref'd once its listeners are on: adding a 'message' listener refs the worker's port again.
  worker.unref();
  // the worker's first reply (to id 0) says it loaded the binding
  await link.ready;
  return link;
}
