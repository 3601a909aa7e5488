/** NDJSON framing of the session stream (`eve/dist/src/client/ndjson.js`). */

export const NDJSON_CONTENT_TYPE = 'application/x-ndjson; charset=utf-8';

/** A bare newline: the client skips blank lines, and any byte resets its 15 s idle timer. */
export const HEARTBEAT_LINE = '\n';

/** Ends a lease: a client that sent `streamControlVersion=1` reconnects from its cursor at once. */
export const LEASE_ENDED_CONTROL = { $eve: 'stream.lease-ended', version: 1 } as const;
export const LEASE_ENDED_LINE = `${JSON.stringify(LEASE_ENDED_CONTROL)}\n`;
