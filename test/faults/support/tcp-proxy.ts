/**
 * A TCP proxy on 127.0.0.1 between `pg` and a PostgreSQL server that injects one network
 * fault at a chosen statement. It parses the frontend/backend message framing just enough to
 * recognise a simple-protocol `Query` or an extended-protocol `Parse` whose SQL starts with a
 * given prefix (such as `COMMIT`), and the `ReadyForQuery` that ends the server's reply to it.
 *
 * ```ts
 * const proxy = await startTcpProxy({ target: dbUrl });
 * const store = new PostgresSessionStore({ connectionString: proxy.url(dbUrl) });
 * const fault = proxy.arm({ match: 'COMMIT', at: 'after-query' });
 * await expect(store.commit(lease, input)).rejects.toThrow();
 * await fault.done;            // the server has finished the COMMIT; the client never heard
 * ```
 *
 * Fault points (each fires once, on the first matching statement after `arm`, or after
 * `skip` matches were let through):
 * - `'before-query'`: both sockets are destroyed before the statement is forwarded; the
 *   server never sees it (and rolls back the transaction the connection had open).
 * - `'after-query'`: the statement is forwarded, then the client's socket is destroyed at
 *   once, before any byte of the reply; the server's socket is kept until the server has
 *   answered (its `ReadyForQuery`), so the statement certainly ran to its end, and is then
 *   destroyed. The reply is discarded.
 * - `'drop-reply'`: the statement is forwarded and the server's whole reply (through its
 *   `ReadyForQuery`) is swallowed; the connection then stays open but silent in both
 *   directions (a black hole) until {@link TcpProxy.cutAll} or {@link TcpProxy.close}. The
 *   client waits for an answer that never comes, as when a reply is lost on the network.
 *
 * Only unencrypted connections are parsed (`pg` without `ssl`); an SSLRequest answered `S`
 * turns the connection into a plain pass-through where no fault can match. A named prepared
 * statement is matched by the SQL its `Parse` gave it: the first time by that `Parse`, every
 * later time (when only its `Bind` is sent) by its `Bind`.
 */
import { createServer, Socket, type Server } from 'node:net';

/** Where a fault is injected. See the module documentation. */
export type FaultPoint = 'before-query' | 'after-query' | 'drop-reply';

/** What {@link TcpProxy.arm} injects. */
export interface FaultPlan {
  /**
   * The statement: a string matches SQL that starts with it (case-insensitive, after leading
   * whitespace), e.g. `'COMMIT'` or `'BEGIN'`; a RegExp is tested against the whole SQL text.
   */
  readonly match: string | RegExp;
  /** Where the fault is injected. */
  readonly at: FaultPoint;
  /** Matching statements to let through before the fault fires (default 0). */
  readonly skip?: number;
}

/** What happened when a fault fired. */
export interface FaultEvent {
  /** The SQL text of the statement the fault fired on. */
  readonly sql: string;
  /** The fault point. */
  readonly at: FaultPoint;
  /** The proxy's number for the connection (1, 2, … in accept order). */
  readonly connection: number;
}

/** An armed fault. */
export interface ArmedFault {
  /** Resolves when the fault fires (the statement was recognised and the fault begun). */
  readonly fired: Promise<FaultEvent>;
  /**
   * Resolves when the fault is complete: for `'before-query'` when both sockets are
   * destroyed; for `'after-query'` and `'drop-reply'` once the server has answered the
   * statement (so its effect, e.g. a COMMIT, is final on the server).
   */
  readonly done: Promise<FaultEvent>;
  /** Disarms the fault if it has not fired yet (its promises then never settle). */
  disarm(): void;
}

/** Options of {@link startTcpProxy}. */
export interface TcpProxyOptions {
  /** The server: a `postgres://` URL (host and port are read from it) or `{ host, port }`. */
  readonly target: string | { readonly host: string; readonly port: number };
  /** Called with the SQL of every query or parse the proxy forwards (for debugging and counting). */
  readonly onQuery?: (sql: string, connection: number) => void;
}

/** A running proxy. */
export interface TcpProxy {
  /** The proxy's port on 127.0.0.1. */
  readonly port: number;
  /** `url` with its host and port replaced by the proxy's (e.g. a store's connection string). */
  url(url: string): string;
  /** Arms one fault; only one may be armed at a time (arming again replaces it). */
  arm(plan: FaultPlan): ArmedFault;
  /** Destroys every open connection at once (both sides), like a network partition. */
  cutAll(): void;
  /**
   * While `true`, new connections are accepted and destroyed at once (the server looks
   * unreachable); connections already open are not touched (use {@link TcpProxy.cutAll}).
   */
  refuse(on: boolean): void;
  /** Connections open now. */
  readonly open: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Closes the listener and destroys every connection. */
  close(): Promise<void>;
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;

interface Armed {
  plan: FaultPlan;
  seen: number;
  resolveFired: (e: FaultEvent) => void;
  resolveDone: (e: FaultEvent) => void;
}

/** The statement name of a `B` (Bind) message body (after the portal name), or undefined. */
function boundName(body: Buffer): string | undefined {
  const portalEnd = body.indexOf(0);
  if (portalEnd < 0) return undefined;
  const end = body.indexOf(0, portalEnd + 1);
  return end < 0 ? undefined : body.toString('utf8', portalEnd + 1, end);
}

/** The statement name of a `P` (Parse) message body, or undefined. */
function parsedName(body: Buffer): string | undefined {
  const end = body.indexOf(0);
  return end < 0 ? undefined : body.toString('utf8', 0, end);
}

/** The SQL text of a `Q` or `P` message body, or undefined. */
function sqlOf(type: number, body: Buffer): string | undefined {
  if (type === 0x51 /* Q */) {
    const end = body.indexOf(0);
    return body.toString('utf8', 0, end < 0 ? body.length : end);
  }
  if (type === 0x50 /* P */) {
    const nameEnd = body.indexOf(0);
    if (nameEnd < 0) return undefined;
    const end = body.indexOf(0, nameEnd + 1);
    return body.toString('utf8', nameEnd + 1, end < 0 ? body.length : end);
  }
  return undefined;
}

function matches(m: string | RegExp, sql: string): boolean {
  if (typeof m === 'string') return sql.trimStart().toUpperCase().startsWith(m.toUpperCase());
  m.lastIndex = 0;
  return m.test(sql);
}

/** Starts a proxy on a free port of 127.0.0.1 in front of `options.target`. */
export async function startTcpProxy(options: TcpProxyOptions): Promise<TcpProxy> {
  let host: string;
  let port: number;
  if (typeof options.target === 'string') {
    const u = new URL(options.target);
    host = u.hostname === '' || u.hostname === 'localhost' ? '127.0.0.1' : u.hostname;
    port = u.port === '' ? 5432 : Number(u.port);
  } else {
    ({ host, port } = options.target);
  }
  const pairs = new Set<{ client: Socket; server: Socket }>();
  let armed: Armed | undefined;
  let refusing = false;
  let accepted = 0;

  const handle = (client: Socket): void => {
    accepted += 1;
    const id = accepted;
    if (refusing) {
      client.destroy();
      return;
    }
    const server = new Socket();
    const pair = { client, server };
    pairs.add(pair);
    client.setNoDelay(true);
    server.setNoDelay(true);
    let closed = false;
    let holdServer = false; // after-query: keep the server socket open after the client's was cut
    const destroyBoth = (): void => {
      closed = true;
      client.destroy();
      server.destroy();
      pairs.delete(pair);
    };
    client.on('error', destroyBoth);
    server.on('error', destroyBoth);
    client.on('close', () => {
      // The client hung up: pass it on unless a fault keeps the server side open.
      if (!holdServer) destroyBoth();
    });
    server.on('close', destroyBoth);

    // Parsing state.
    let clientBuf: Buffer = Buffer.alloc(0);
    let serverBuf: Buffer = Buffer.alloc(0);
    let clientStarted = false; // the startup message has been seen
    let serverExpectsSslByte = false;
    let passThrough = false; // TLS or cancel: no parsing any more
    let blackHole = false; // drop-reply: nothing is forwarded either way
    /** The SQL of each named statement parsed on this connection. */
    const named = new Map<string, string>();
    /** Named statements whose `Parse` was just seen: their next `Bind` is the same statement. */
    const justParsed = new Set<string>();
    /** A fault waiting for the server's ReadyForQuery. */
    let awaitingReply: { armed: Armed; event: FaultEvent; needSync: boolean; cutClient: boolean } | undefined;

    const onClientData = (chunk: Buffer): void => {
      if (closed) return;
      if (blackHole) return;
      if (passThrough) {
        server.write(chunk);
        return;
      }
      clientBuf = clientBuf.length === 0 ? chunk : Buffer.concat([clientBuf, chunk]);
      const out: Buffer[] = [];
      let at = 0;
      for (;;) {
        if (!clientStarted) {
          if (clientBuf.length - at < 8) break;
          const len = clientBuf.readInt32BE(at);
          if (clientBuf.length - at < len) break;
          const code = clientBuf.readInt32BE(at + 4);
          out.push(clientBuf.subarray(at, at + len));
          at += len;
          if (code === SSL_REQUEST || code === GSSENC_REQUEST) serverExpectsSslByte = true;
          else if (code === CANCEL_REQUEST) {
            passThrough = true;
            break;
          } else clientStarted = true;
          continue;
        }
        if (clientBuf.length - at < 5) break;
        const type = clientBuf[at] as number;
        const len = clientBuf.readInt32BE(at + 1);
        if (clientBuf.length - at < 1 + len) break;
        const msg = clientBuf.subarray(at, at + 1 + len);
        let sql = sqlOf(type, msg.subarray(5));
        if (type === 0x50 /* Parse */ && sql !== undefined) {
          const name = parsedName(msg.subarray(5));
          if (name !== undefined && name !== '') {
            named.set(name, sql);
            justParsed.add(name);
          }
        } else if (type === 0x42 /* Bind */) {
          const name = boundName(msg.subarray(5));
          if (name !== undefined && name !== '' && !justParsed.delete(name)) sql = named.get(name);
        }
        if (awaitingReply?.needSync === true) {
          out.push(msg);
          at += 1 + len;
          if (type === 0x53 /* Sync */) {
            awaitingReply.needSync = false;
            afterForwarded(out);
            out.length = 0;
            clientBuf = clientBuf.subarray(at);
            at = 0;
            if (closed || blackHole) return;
          }
          continue;
        }
        if (sql !== undefined) {
          options.onQuery?.(sql, id);
          const a = armed;
          if (a !== undefined && matches(a.plan.match, sql)) {
            a.seen += 1;
            if (a.seen > (a.plan.skip ?? 0)) {
              armed = undefined;
              const event: FaultEvent = { sql, at: a.plan.at, connection: id };
              a.resolveFired(event);
              if (a.plan.at === 'before-query') {
                const before = Buffer.concat(out);
                const finish = (): void => {
                  destroyBoth();
                  a.resolveDone(event);
                };
                if (before.length > 0) server.write(before, finish);
                else finish();
                closed = true;
                return;
              }
              out.push(msg);
              at += 1 + len;
              const extended = type === 0x50 || type === 0x42;
              awaitingReply = { armed: a, event, needSync: extended, cutClient: a.plan.at === 'after-query' };
              if (extended) continue; // forward through the Sync that ends the extended query
              afterForwarded(out);
              out.length = 0;
              clientBuf = clientBuf.subarray(at);
              at = 0;
              if (closed || blackHole) return;
              continue;
            }
          }
        }
        out.push(msg);
        at += 1 + len;
      }
      clientBuf = clientBuf.subarray(at);
      if (out.length > 0) server.write(Buffer.concat(out));
      if (passThrough && clientBuf.length > 0) {
        server.write(clientBuf);
        clientBuf = Buffer.alloc(0);
      }
    };

    /** The faulted statement (and what preceded it in `out`) is written; the client side is cut or black-holed. */
    const afterForwarded = (out: Buffer[]): void => {
      const w = awaitingReply;
      if (w === undefined) return;
      const data = Buffer.concat(out);
      if (w.cutClient) {
        holdServer = true;
        server.write(data, () => client.destroy());
      } else {
        server.write(data);
        blackHole = true;
      }
    };

    const onServerData = (chunk: Buffer): void => {
      if (closed) return;
      if (passThrough) {
        if (!blackHole) client.write(chunk);
        return;
      }
      serverBuf = serverBuf.length === 0 ? chunk : Buffer.concat([serverBuf, chunk]);
      const out: Buffer[] = [];
      let at = 0;
      for (;;) {
        if (serverExpectsSslByte) {
          if (serverBuf.length - at < 1) break;
          const b = serverBuf[at] as number;
          out.push(serverBuf.subarray(at, at + 1));
          at += 1;
          serverExpectsSslByte = false;
          if (b === 0x53 /* S: TLS follows */) {
            passThrough = true;
            break;
          }
          continue;
        }
        if (serverBuf.length - at < 5) break;
        const type = serverBuf[at] as number;
        const len = serverBuf.readInt32BE(at + 1);
        if (serverBuf.length - at < 1 + len) break;
        const msg = serverBuf.subarray(at, at + 1 + len);
        at += 1 + len;
        const w = awaitingReply;
        if (w !== undefined && !w.needSync) {
          // Part of the reply to the faulted statement: swallowed.
          if (type === 0x5a /* ReadyForQuery */) {
            awaitingReply = undefined;
            if (w.cutClient) destroyBoth();
            w.armed.resolveDone(w.event);
            if (closed) return;
          }
          continue;
        }
        if (!blackHole && !holdServer) out.push(msg);
      }
      serverBuf = serverBuf.subarray(at);
      if (out.length > 0) client.write(Buffer.concat(out));
      if (passThrough && serverBuf.length > 0) {
        client.write(serverBuf);
        serverBuf = Buffer.alloc(0);
      }
    };

    client.pause();
    server.connect(port, host, () => {
      client.resume();
    });
    client.on('data', onClientData);
    server.on('data', onServerData);
  };

  const listener: Server = createServer({ pauseOnConnect: false }, handle);
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(0, '127.0.0.1', () => resolve());
  });
  const addr = listener.address();
  const myPort = typeof addr === 'object' && addr !== null ? addr.port : 0;

  const cutAll = (): void => {
    for (const p of [...pairs]) {
      p.client.destroy();
      p.server.destroy();
      pairs.delete(p);
    }
  };

  return {
    port: myPort,
    url(url: string): string {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(myPort);
      return u.toString();
    },
    arm(plan: FaultPlan): ArmedFault {
      let resolveFired!: (e: FaultEvent) => void;
      let resolveDone!: (e: FaultEvent) => void;
      const fired = new Promise<FaultEvent>((r) => (resolveFired = r));
      const done = new Promise<FaultEvent>((r) => (resolveDone = r));
      const a: Armed = { plan, seen: 0, resolveFired, resolveDone };
      armed = a;
      return {
        fired,
        done,
        disarm() {
          if (armed === a) armed = undefined;
        },
      };
    },
    cutAll,
    refuse(on: boolean) {
      refusing = on;
    },
    get open() {
      return pairs.size;
    },
    get accepted() {
      return accepted;
    },
    close(): Promise<void> {
      cutAll();
      return new Promise((resolve) => listener.close(() => resolve()));
    },
  };
}
