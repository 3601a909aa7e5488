import { BlockList, isIP } from 'node:net';

/**
 * Private and reserved address ranges a callback URL may not name, as Eve's receiver refuses them
 * (`eve/dist/src/shared/network-address.js`); loopback stays allowed, for local development.
 */
const RESERVED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24],
  ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) RESERVED.addSubnet(net, prefix, 'ipv4');
RESERVED.addAddress('::', 'ipv6');
for (const [net, prefix] of [
  ['::', 96], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23], ['2001:db8::', 32],
  ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8],
] as const) RESERVED.addSubnet(net, prefix, 'ipv6');

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

function normalize(host: string): string {
  const bare = host.trim().replace(/^\[(.*)\]$/u, '$1');
  const zone = bare.indexOf('%');
  const address = zone === -1 ? bare : bare.slice(0, zone);
  if (address.toLowerCase().startsWith('::ffff:') && isIP(address.slice(7)) === 4) return address.slice(7);
  return address;
}

function isLoopback(host: string): boolean {
  const name = normalize(host).toLowerCase().replace(/\.$/u, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  const family = isIP(name);
  return family !== 0 && LOOPBACK.check(name, family === 4 ? 'ipv4' : 'ipv6');
}

/** Whether a URL's hostname is a literal private or reserved address (loopback is not). */
export function isReservedAddress(hostname: string): boolean {
  const address = normalize(hostname);
  if (isLoopback(address)) return false;
  const family = isIP(address);
  return family !== 0 && RESERVED.check(address, family === 4 ? 'ipv4' : 'ipv6');
}
