/**
 * @internal The wake-up sources of the PostgreSQL store: one dedicated `LISTEN` connection per
 * store object (a `pg.Client` of its own, never a pooled one: a pool would hand the
 * connection to a transaction, and PgBouncer in transaction mode drops `LISTEN`), or, when
 * the store has no connection string to listen on, polling.
 */
import { errorText } from '../../../util/error-text.js';
import { WAKE_CHANNEL, decodeWake, type WakeHub, type WakeSource } from './wakes.js';

/** First delay before a new connection attempt, doubled at each failure up to {@link MAX_RETRY_MS}. */
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5_000;
/** How long one connection attempt may take. */
const CONNECT_TIMEOUT_MS = 10_000;
/**
 * How often an idle LISTEN connection is checked (`SELECT 1`), and how long the check may
 * take: a connection that died silently (a NAT or firewall forgot it, a partition) looks
 * up forever otherwise, and the requests addressed to this process would never be heard.
 */
const HEARTBEAT_MS = 2_000;
const HEARTBEAT_TIMEOUT_MS = 2_000;

/** The part of `pg.Client` the listener uses. */
interface ListenClient {
  connect(): Promise<unknown>;
  query(text: string): Promise<unknown>;
  end(): Promise<void>;
  on(event: 'error', fn: (err: Error) => void): unknown;
  on(event: 'end', fn: () => void): unknown;
  on(event: 'notification', fn: (msg: { channel: string; payload?: string }) => void): unknown;
  readonly connection?: { readonly stream?: { unref?: () => unknown; destroy?: () => unknown } };
}

type ClientConfig = { connectionString: string; keepAlive: boolean; connectionTimeoutMillis: number; application_name: string };

/** Logs once per store that its wake-ups are polled. */
function warnPolled(why: string): void {
  process.emitWarning(`PostgresSessionStore: wake-ups are polled (${why}); handoffs, cancels and waits across processes are noticed within pollMs instead of at once.`, {
    type: 'PolestarWarning',
    code: 'POLESTAR_WAKEUPS_POLLED',
  });
}

/** @internal The source of a store given a pool and no `listen`: its callers poll (logged once). */
export function polledSource(): WakeSource {
  let warned = false;
  return {
    mode: 'poll',
    local: true,
    start(): void {
      if (warned) return;
      warned = true;
      warnPolled('the store was given a pool and no listen connection string: new PostgresSessionStore({ pool, listen: "postgres://…" }) listens');
    },
    close: () => Promise.resolve(),
  };
}

/**
 * @internal The `LISTEN` connection of one store, started by the first `watch()`. Its wake-ups
 * go to the store's hub (its own NOTIFYs come back through it too). While it has never been
 * set up, its mode is `'poll'`; a first failure is reported once to the watchers and logged
 * once. Once up, it stays `'notify'`: a dropped connection is reconnected with backoff, and
 * every successful `LISTEN` is followed by a `resync` wake-up (what happened meanwhile was not
 * heard). Its socket and timers are unref'd: it never keeps the process alive on its own, and
 * a connection error never crashes the process.
 */
export class PgListener implements WakeSource {
  readonly #url: string;
  readonly #label: string;
  readonly #hub: WakeHub;
  #started = false;
  #closed = false;
  /** True once a `LISTEN` succeeded. */
  #up = false;
  /** True while the first connection has failed and none succeeded since: reported and logged once. */
  #failed = false;
  #client: ListenClient | undefined;
  /** The generation of the current connection: events of an older one are ignored. */
  #gen = 0;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #delay = FIRST_RETRY_MS;
  #attempt: Promise<void> | undefined;
  /** The heartbeat of the current connection (unref'd). */
  #beat: ReturnType<typeof setInterval> | undefined;

  /**
   * @param url - the connection string to listen on.
   * @param label - where it connects, for messages (no password).
   * @param hub - the watchers of the store.
   */
  constructor(url: string, label: string, hub: WakeHub) {
    this.#url = url;
    this.#label = label;
    this.#hub = hub;
  }

  get mode(): 'notify' | 'poll' {
    return this.#up ? 'notify' : 'poll';
  }

  /** True while a `LISTEN` connection is up. */
  get listening(): boolean {
    return this.#client !== undefined && this.#up && this.#retry === undefined && this.#attempt === undefined;
  }

  /**
   * While no `LISTEN` connection is up, the store's own NOTIFYs do not come back to it: it
   * delivers its wake-ups in-process (one may then arrive twice, which a wake-up allows).
   */
  get local(): boolean {
    return !this.listening;
  }

  start(): void {
    if (this.#started || this.#closed) return;
    this.#started = true;
    this.#connect();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#gen += 1;
    clearInterval(this.#beat);
    this.#beat = undefined;
    if (this.#retry !== undefined) clearTimeout(this.#retry);
    this.#retry = undefined;
    const client = this.#client;
    this.#client = undefined;
    const attempt = this.#attempt;
    if (client === undefined) {
      // Not connecting yet (loading the driver): the attempt ends at its next step.
      await attempt;
      return;
    }
    // Still in its startup handshake: pg's end() would wait for the connect timeout, so the
    // socket is destroyed first; pg's connect() then never settles, so it is not awaited.
    if (attempt !== undefined) client.connection?.stream?.destroy?.();
    await client.end().catch(() => undefined);
  }

  #connect(): void {
    const gen = ++this.#gen;
    const attempt: Promise<void> = this.#open(gen)
      .then(
        () => {
          if (gen !== this.#gen) return;
          this.#delay = FIRST_RETRY_MS;
          this.#up = true;
          if (this.#failed) this.#hub.recover();
          this.#failed = false;
          this.#heartbeat(gen);
          // Whatever happened before this LISTEN was not heard: the watchers read again.
          this.#hub.emit({ kind: 'resync' });
        },
        (err: unknown) => this.#lost(gen, err),
      )
      .finally(() => {
        if (this.#attempt === attempt) this.#attempt = undefined;
      });
    this.#attempt = attempt;
  }

  /** Opens a client, listens, and keeps it as the current one (unless a newer generation or close came first). */
  async #open(gen: number): Promise<void> {
    let pg: { Client: new (config: ClientConfig) => ListenClient };
    try {
      pg = ((await import('pg')) as unknown as { default: typeof pg }).default;
    } catch (err) {
      throw new Error('the pg package is not installed (npm install pg)', { cause: err });
    }
    if (gen !== this.#gen) return;
    const client = new pg.Client({ connectionString: this.#url, keepAlive: true, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: 'polestar-di listen' });
    // An error of this client, now or later, never crashes the process.
    client.on('error', (err) => this.#lost(gen, err));
    client.on('end', () => this.#lost(gen, new Error('the LISTEN connection ended')));
    client.on('notification', (msg) => {
      if (gen !== this.#gen || msg.channel !== WAKE_CHANNEL) return;
      const wake = decodeWake(msg.payload);
      if (wake !== undefined) this.#hub.emit(wake);
    });
    this.#client = client;
    await client.connect();
    // The listener alone must not keep the process alive.
    client.connection?.stream?.unref?.();
    await client.query(`LISTEN ${WAKE_CHANNEL}`);
  }

  /** Checks the connection of generation `gen` every {@link HEARTBEAT_MS}: one that does not answer in time is dropped (and reconnected). */
  #heartbeat(gen: number): void {
    clearInterval(this.#beat);
    this.#beat = setInterval(() => {
      const client = this.#client;
      if (gen !== this.#gen || client === undefined) return;
      const timeout = setTimeout(() => {
        client.connection?.stream?.destroy?.();
        this.#lost(gen, new Error(`the LISTEN connection did not answer a check within ${HEARTBEAT_TIMEOUT_MS} ms`));
      }, HEARTBEAT_TIMEOUT_MS);
      timeout.unref();
      client.query('SELECT 1').then(
        () => clearTimeout(timeout),
        (err: unknown) => {
          clearTimeout(timeout);
          this.#lost(gen, err);
        },
      );
    }, HEARTBEAT_MS);
    this.#beat.unref();
  }

  /** The connection of generation `gen` failed or ended: drop it and try again later. */
  #lost(gen: number, err: unknown): void {
    if (gen !== this.#gen || this.#closed) return;
    this.#gen += 1;
    clearInterval(this.#beat);
    this.#beat = undefined;
    const client = this.#client;
    this.#client = undefined;
    // A silent connection: pg's end() would wait for an answer that never comes.
    client?.connection?.stream?.destroy?.();
    client?.end().catch(() => undefined);
    if (!this.#up && !this.#failed) {
      this.#failed = true;
      const e = new Error(`PostgresSessionStore: the LISTEN connection to ${this.#label} could not be set up: ${errorText(err)}. Wake-ups are polled until it can.`, { cause: err });
      this.#hub.fail(e);
      warnPolled(`the LISTEN connection to ${this.#label} could not be set up: ${errorText(err)}; it is retried`);
    }
    const delay = Math.round(this.#delay * (0.5 + Math.random() / 2));
    this.#delay = Math.min(this.#delay * 2, MAX_RETRY_MS);
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      if (!this.#closed) this.#connect();
    }, delay);
    this.#retry.unref();
  }
}
