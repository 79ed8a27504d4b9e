/**
 * The HTTP plumbing of `examples/agent-service.ts` (node:http, JSON in, JSON out), kept apart
 * so the service file reads as what it does with polestar. Errors are
 * `{ "error": { "code", "message", ... } }` with a 4xx or 5xx status: 400 for bad JSON or a
 * bad field, 405 with an `Allow` header, 413 for a body over 64 KiB.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** An error answered as `{ error: { code, message, ...extra } }` with `status`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Readonly<Record<string, unknown>> = {},
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** A 405 with the `Allow` header RFC 9110 requires. */
export function notAllowed(method: string, route: string, allow: readonly string[]): HttpError {
  return new HttpError(405, 'METHOD_NOT_ALLOWED', `${method} ${route} is not supported; use ${allow.join(' or ')}`, {}, { allow: allow.join(', ') });
}

/** A field of a JSON object body (400 when the body is not an object). */
export function field(body: unknown, name: string): unknown {
  if (body === undefined) return undefined;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new HttpError(400, 'BAD_REQUEST', 'the request body must be a JSON object');
  }
  return (body as Record<string, unknown>)[name];
}

/** What a route answers. */
export interface Reply {
  readonly status: number;
  readonly body: unknown;
}

/** Handles one request: the method, the decoded path segments and the parsed body. */
export type Handler = (method: string, parts: readonly string[], body: unknown) => Promise<Reply>;

const MAX_BODY = 64 * 1024;

/** An HTTP server on 127.0.0.1:`port` (0 = any free port) answering every request through `handle`. */
export async function listen(port: number, handle: Handler, log: (line: string) => void): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const send = (status: number, payload: unknown, headers: Readonly<Record<string, string>> = {}): void => {
      const text = JSON.stringify(payload);
      res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      log(`${req.method} ${req.url} -> ${status}`);
    };
    readBody(req)
      .then((raw) => {
        const method = req.method ?? 'GET';
        let body: unknown;
        if (method === 'POST' && raw.length > 0) {
          try {
            body = JSON.parse(raw);
          } catch (err) {
            throw new HttpError(400, 'BAD_JSON', `the request body is not valid JSON: ${(err as Error).message}`);
          }
        }
        let parts: string[];
        try {
          parts = new URL(req.url ?? '/', 'http://localhost').pathname.split('/').filter(Boolean).map(decodeURIComponent);
        } catch {
          throw new HttpError(400, 'BAD_REQUEST', `the path ${req.url} is not valid percent-encoding`);
        }
        return handle(method, parts, body);
      })
      .then(
        (r) => send(r.status, r.body),
        (err: unknown) => {
          if (err instanceof HttpError) send(err.status, { error: { code: err.code, message: err.message, ...err.extra } }, err.headers);
          else send(500, { error: { code: 'INTERNAL', message: err instanceof Error ? err.message : String(err) } });
        },
      );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    // Too large: answer 413 and close the connection once the answer is out. The rest of the
    // body is read and dropped meanwhile (destroying the socket at once would reset the
    // connection before the client could read the 413).
    const tooLarge = (): void => {
      req.removeAllListeners('data');
      req.resume();
      reject(new HttpError(413, 'TOO_LARGE', `the request body exceeds ${MAX_BODY} bytes`, {}, { connection: 'close' }));
    };
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > MAX_BODY) return tooLarge();
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) return tooLarge();
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
