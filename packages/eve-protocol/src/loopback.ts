/**
 * The names of the loopback interface as a URL's `hostname` spells them (IPv6 in brackets): the
 * one list the site check, the OAuth backend's plain-http allowance and the bridge's host read.
 */
export const LOOPBACK_HOSTNAMES: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** True for a loopback name, as a URL spells it (`[::1]`) or as `listen()` takes it (`::1`). */
export function isLoopbackHostname(hostname: string): boolean {
  const name = hostname.toLowerCase();
  return LOOPBACK_HOSTNAMES.includes(name) || LOOPBACK_HOSTNAMES.includes(`[${name}]`);
}
