import { request as forward } from 'node:http';
import { listen, type Listening } from './listen.ts';

export interface Balancer extends Listening {
  /** Which upstream served each request, by path. */
  served: { path: string; upstream: string }[];
  /** Picks the upstream for a request; round-robin unless replaced. */
  route: (path: string) => string;
}

/** A streaming HTTP load balancer in front of several bridge instances, as in a deployment. */
export async function startBalancer(upstreams: readonly string[]): Promise<Balancer> {
  let next = 0;
  const served: Balancer['served'] = [];
  const balancer = {
    served,
    route: (_path: string) => upstreams[next++ % upstreams.length]!,
  } as Balancer;
  const listening = await listen((request, response) => {
    const upstream = balancer.route(request.url ?? '/');
    served.push({ path: request.url ?? '/', upstream });
    const target = new URL(request.url ?? '/', upstream);
    const proxied = forward(target, { method: request.method, headers: { ...request.headers, host: target.host } }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    proxied.on('error', () => {
      if (!response.headersSent) response.writeHead(502, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ ok: false, code: 'bad_gateway', error: 'The upstream instance is gone.' }));
    });
    response.on('close', () => proxied.destroy());
    request.pipe(proxied);
  });
  return Object.assign(balancer, listening);
}
