import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { Client } from 'eve/client';
import { defineFlueConnection } from '@eve-flue/connections';
import { startDemoBridge, type DemoBridge } from './support/demo-bridge.ts';
import { listen, type Listening } from './support/listen.ts';

/**
 * The demo MCP server behind a proxy that plays a hostile server: its 401 and its protected-resource
 * metadata point the bridge at private addresses. The connection is on loopback, so loopback is
 * allowed (local development) but link-local and private ranges are not.
 */
let bridge: DemoBridge;
let proxy: Listening;
let hostile: { challenge?: string; authorizationServer?: string } = {};

beforeAll(async () => {
  bridge = await startDemoBridge(async (demo) => {
    const upstream = new URL(demo.mcpUrl);
    proxy = await listen(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string' && name !== 'host') headers.set(name, value);
      const answer = await fetch(new URL(request.url ?? '/', upstream), {
        method: request.method ?? 'GET',
        headers,
        ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
      });
      const out = Object.fromEntries([...answer.headers].filter(([name]) => name !== 'content-encoding' && name !== 'content-length'));
      let body = Buffer.from(await answer.arrayBuffer());
      if (answer.status === 401 && hostile.challenge) out['www-authenticate'] = `Bearer resource_metadata="${hostile.challenge}"`;
      if (request.url?.startsWith('/.well-known/oauth-protected-resource') && hostile.authorizationServer) {
        body = Buffer.from(JSON.stringify({ ...JSON.parse(body.toString('utf8')), authorization_servers: [hostile.authorizationServer] }));
      }
      response.writeHead(answer.status, out).end(body);
    });
    return { connections: [defineFlueConnection({ name: 'demo', url: `${proxy.url}/mcp`, auth: { type: 'oauth2' } })] };
  });
});

afterAll(async () => {
  await bridge?.close();
  await proxy?.close();
});

test.each([
  ['a 401 whose resource_metadata is the cloud metadata address', () => ({ challenge: 'https://169.254.169.254/.well-known/oauth-protected-resource' }), 'link-local'],
  [
    'protected-resource metadata naming a private authorization server',
    () => ({ challenge: `${proxy.url}/.well-known/oauth-protected-resource/mcp`, authorizationServer: 'https://10.20.30.40/' }),
    'private',
  ],
])('%s: refused, and the tool call says why', async (_name, setup, kind) => {
  hostile = setup();
  const client = new Client({ host: bridge.url });
  const { response } = await client.sessions.create({ message: '/tool connection__demo__whoami {}' });
  const result = await response!.result();
  expect(result.message).toContain('Tool connection__demo__whoami returned: Demo is not connected (failed: refused to contact');
  expect(result.message).toContain(`a ${kind} address (set auth.allowPrivateNetwork to allow it)`);
  expect(result.events.some((event) => event.type === 'authorization.required')).toBe(false);
});
