import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';

/** A remote-agent parent's callback route, as a test sees it: what arrived, and a switch to take it down. */
export interface CallbackReceiver {
  /** `http://127.0.0.1:<port>/eve/v1/callback/<token>` */
  urlFor(token: string): string;
  /** Every callback body received while up, in order. */
  received: Record<string, unknown>[];
  /** Resolves with the `n`th callback body (1-based) once it has arrived. */
  nth(n: number): Promise<Record<string, unknown>>;
  /** Stops listening: deliveries meet a refused connection. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

async function read(request: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of request) body += chunk;
  return body;
}

/** A callback route that answers 202 to every POST, on a free loopback port. */
export async function startCallbackReceiver(): Promise<CallbackReceiver> {
  const received: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  const handle = async (request: IncomingMessage, response: import('node:http').ServerResponse) => {
    const body = JSON.parse(await read(request)) as Record<string, unknown>;
    received.push(body);
    for (const wake of waiters.splice(0)) wake();
    response.writeHead(202, { 'content-type': 'application/json' }).end('{"ok":true}');
  };
  let server: Server = createServer((request, response) => void handle(request, response));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  return {
    urlFor: (token) => `http://127.0.0.1:${port}/eve/v1/callback/${encodeURIComponent(token)}`,
    received,
    async nth(n) {
      while (received.length < n) await new Promise<void>((resolve) => waiters.push(resolve));
      return received[n - 1]!;
    },
    async down() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
    async up() {
      server = createServer((request, response) => void handle(request, response));
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
    },
    async close() {
      if (!server.listening) return;
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
