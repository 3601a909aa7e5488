import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';

export interface HangingGate {
  port: number;
  /** From now on every connection is accepted and read, and never answered (open ones are dropped first). */
  hang(): void;
  /** Requests (connections that sent bytes) received while hanging; none of them is ever answered. */
  unanswered(): number;
  close(): Promise<void>;
}

/**
 * A TCP gate in front of `target` (none: it hangs from the start), on `port` (default: a free
 * one): it passes traffic through until `hang()`, then behaves like a server that accepts
 * connections and never answers.
 */
export async function startHangingGate({ target, port = 0 }: { target?: { host: string; port: number }; port?: number } = {}): Promise<HangingGate> {
  const sockets = new Set<Socket>();
  let hanging = target === undefined;
  let unanswered = 0;
  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    if (hanging || !target) {
      client.once('data', () => unanswered++);
      client.resume();
      return;
    }
    const upstream = connect(target);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => upstream.destroy());
    client.pipe(upstream).pipe(client);
  }).listen(port, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as { port: number }).port,
    hang() {
      hanging = true;
      for (const socket of sockets) socket.destroy();
    },
    unanswered: () => unanswered,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
