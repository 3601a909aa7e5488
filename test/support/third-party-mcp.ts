import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from './free-port.ts';

export interface ThirdPartyServer {
  /** The MCP endpoint. */
  url: string;
  close(): Promise<void>;
}

const MODULES = join(process.cwd(), 'node_modules');

/** `@modelcontextprotocol/server-everything` over Streamable HTTP (`PORT`), as its README starts it; `port` restarts it where it was. */
export async function startEverythingServer(port?: number): Promise<ThirdPartyServer & { port: number }> {
  port ??= await freePort();
  const child = spawn(process.execPath, [join(MODULES, '@modelcontextprotocol/server-everything/dist/index.js'), 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await outputLine(child, 'stderr', /listening on port/);
  return { url: `http://127.0.0.1:${port}/mcp`, port, close: () => stop(child) };
}

/**
 * The MCP SDK's example `simpleStreamableHttp --oauth`: every MCP request needs a token from its
 * own authorization server (dynamic registration, an authorize step that approves at once).
 * It names itself `localhost` (ports from `MCP_PORT`, `MCP_AUTH_PORT`).
 */
export async function startSdkOAuthServer(): Promise<ThirdPartyServer & { authUrl: string }> {
  const [port, authPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, [join(MODULES, '@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js'), '--oauth'], {
    env: { ...process.env, MCP_PORT: String(port), MCP_AUTH_PORT: String(authPort) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await outputLine(child, 'stdout', /MCP Streamable HTTP Server listening/);
  return { url: `http://localhost:${port}/mcp`, authUrl: `http://localhost:${authPort}`, close: () => stop(child) };
}

/**
 * The MCP SDK's example `simpleStreamableHttp` (stateful: it forgets its sessions when it stops,
 * and answers 404 for a session it does not know). `port` restarts it where it was.
 */
export async function startSdkExampleServer(port?: number): Promise<ThirdPartyServer & { port: number; output(): string }> {
  const listenOn = port ?? (await freePort());
  const child = spawn(process.execPath, [join(MODULES, '@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js')], {
    env: { ...process.env, MCP_PORT: String(listenOn) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  await outputLine(child, 'stdout', /MCP Streamable HTTP Server listening/);
  return { url: `http://127.0.0.1:${listenOn}/mcp`, port: listenOn, output: () => output, close: () => stop(child) };
}

/** A `fastmcp` server (`fastmcp-server.ts`) that admits only `token`. */
export async function startFastMcpServer(token: string): Promise<ThirdPartyServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(process.cwd(), 'test/support/fastmcp-server.ts')], {
    env: { ...process.env, PORT: String(port), FASTMCP_TOKEN: token },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await outputLine(child, 'stdout', /FastMCP ready/);
  return { url: `http://127.0.0.1:${port}/mcp`, close: () => stop(child) };
}

function outputLine(child: ChildProcess, stream: 'stdout' | 'stderr', line: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    child[stream]!.on('data', (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      if (line.test(seen)) resolve();
    });
    // Keep reading so a chatty server never blocks on a full pipe.
    child.once('exit', (code) => reject(new Error(`the server exited (${code}) before it was ready: ${seen.slice(-500)}`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
