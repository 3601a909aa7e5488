import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** How many clients are connected through the proxy now. */
  clients(): number;
  /** Drops every connection and refuses new ones, as if the target went away. */
  cut(): Promise<void>;
  /** Accepts connections again, on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** A TCP proxy to `target` that a test can cut and restore. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const clients = new Set<Socket>();
  const accept = (client: Socket) => {
    const upstream = connect(target);
    clients.add(client);
    client.on('close', () => clients.delete(client));
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    client.pipe(upstream).pipe(client);
  };
  let server: Server = createServer(accept).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  const stop = async () => {
    for (const socket of sockets) socket.destroy();
    if (server.listening) await new Promise((resolve) => server.close(resolve));
  };
  return {
    port,
    clients: () => clients.size,
    cut: stop,
    async restore() {
      server = createServer(accept).listen(port, '127.0.0.1');
      await once(server, 'listening');
    },
    close: stop,
  };
}
