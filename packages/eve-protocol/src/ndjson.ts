/** NDJSON framing of the session stream (`eve/dist/src/client/ndjson.js`). */

export const NDJSON_CONTENT_TYPE = 'application/x-ndjson; charset=utf-8';

/** A bare newline: the client skips blank lines, and any byte resets its 15 s idle timer. */
export const HEARTBEAT_LINE = '\n';

/** Ends a lease: a client that sent `streamControlVersion=1` reconnects from its cursor at once. */
export const LEASE_ENDED_CONTROL = { $eve: 'stream.lease-ended', version: 1 } as const;
export const LEASE_ENDED_LINE = `${JSON.stringify(LEASE_ENDED_CONTROL)}\n`;

export function toNdjsonLine(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

/** Splits an NDJSON body into parsed records, skipping blank lines the way the client does. */
export function parseNdjson(body: string): unknown[] {
  return body
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as unknown);
}

export function isLeaseEndedControl(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { $eve?: unknown }).$eve === LEASE_ENDED_CONTROL.$eve;
}
