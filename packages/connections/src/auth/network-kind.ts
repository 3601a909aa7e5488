import ipaddr from 'ipaddr.js';

/** What kind of network an address is on. */
export type NetworkKind = 'public' | 'loopback' | 'private' | 'link-local';

/** ipaddr.js's range table (the IANA special-purpose registries) by kind; every other special range is private. */
const RANGE_KINDS: Readonly<Record<string, NetworkKind>> = { unicast: 'public', loopback: 'loopback', linkLocal: 'link-local' };

/**
 * The kind of an address. IPv6 forms that carry an IPv4 address (mapped, RFC 6145, NAT64
 * `64:ff9b::/96`, 6to4, Teredo, the deprecated IPv4-compatible `::a.b.c.d`) are the kind of the
 * address they carry, so `64:ff9b::7f00:1` is loopback. Anything unparseable is private.
 */
export function networkKind(address: string): NetworkKind {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, ''));
  } catch {
    return 'private';
  }
  if (parsed.kind() === 'ipv4') return rangeKind(parsed);
  const v6 = parsed as ipaddr.IPv6;
  const carried = carriedIPv4(v6);
  if (!carried) return rangeKind(v6);
  const refused = carried.addresses.map(rangeKind).find((kind) => kind !== 'public');
  return refused ?? (carried.routable ? 'public' : 'private');
}

function rangeKind(address: ipaddr.IPv4 | ipaddr.IPv6): NetworkKind {
  return RANGE_KINDS[address.range()] ?? 'private';
}

const v4 = (bytes: number[]) => new ipaddr.IPv4(bytes);

/** The IPv4 addresses an IPv6 address embeds, and whether the form itself is routed on the internet. */
function carriedIPv4(address: ipaddr.IPv6): { addresses: ipaddr.IPv4[]; routable: boolean } | undefined {
  const bytes = address.toByteArray();
  const parts = address.parts;
  const last = v4(bytes.slice(12));
  const zeros = (from: number, to: number) => parts.slice(from, to).every((part) => part === 0);
  if (zeros(0, 5) && parts[5] === 0xffff) return { addresses: [last], routable: true }; // ::ffff:a.b.c.d
  if (zeros(0, 4) && parts[4] === 0xffff && parts[5] === 0) return { addresses: [last], routable: true }; // RFC 6145
  if (zeros(0, 6) && !(zeros(6, 7) && parts[7]! <= 1)) return { addresses: [last], routable: false }; // ::a.b.c.d (deprecated)
  if (parts[0] === 0x64 && parts[1] === 0xff9b && zeros(2, 6)) return { addresses: [last], routable: true }; // NAT64, RFC 6052
  if (parts[0] === 0x2002) return { addresses: [v4(bytes.slice(2, 6))], routable: true }; // 6to4
  if (parts[0] === 0x2001 && parts[1] === 0) {
    // Teredo: the server, and the client's address stored inverted.
    return { addresses: [v4(bytes.slice(4, 8)), v4(bytes.slice(12).map((b) => b ^ 0xff))], routable: true };
  }
  return undefined;
}
