import type { IncomingMessage } from 'node:http';
import { LOOPBACK_HOSTNAMES } from '@eve-flue/eve-protocol';
import type { Refusal } from './errors.ts';

/** Where the bridge is reachable: the `Host` names it answers to and the browser origins that are its own. */
export interface SiteOptions {
  /** The public origin (e.g. `https://agent.example.com`): links, the redirect URI, same-origin checks. */
  publicUrl: string;
  /** Set when the server is bound to a loopback interface: the loopback names on this port count as the site too. */
  loopbackPort?: number;
}

export interface Site {
  /** True when `Host` names this site (a DNS-rebinding page sends its own name). */
  hostAllowed(request: IncomingMessage): boolean;
  /** True when a browser `Origin` is this site's own. */
  isOwnOrigin(origin: string): boolean;
}

export function site({ publicUrl, loopbackPort }: SiteOptions): Site {
  const publicOrigin = new URL(publicUrl);
  const hosts = new Set([publicOrigin.hostname.toLowerCase()]);
  const origins = new Set([publicOrigin.origin]);
  if (loopbackPort !== undefined) {
    for (const name of LOOPBACK_HOSTNAMES) {
      hosts.add(name);
      origins.add(`http://${name}:${loopbackPort}`);
    }
  }
  return {
    hostAllowed(request) {
      const host = request.headers.host;
      if (host === undefined || !URL.canParse(`http://${host}`)) return false;
      return hosts.has(new URL(`http://${host}`).hostname.toLowerCase());
    },
    isOwnOrigin: (origin) => origins.has(origin),
  };
}

/** 421 in Eve's error shape: this server does not answer to that name. */
export const MISDIRECTED: Refusal = { code: 'misdirected_request', message: 'This server does not answer to that host name.' };
