import type { Client, ClientSession, MessageResult } from 'eve/client';
import { collect, readUntil } from './events.ts';

export const WHOAMI = '/tool connection__demo__whoami {}';

export interface ParkedSignIn {
  session: ClientSession;
  attemptId: string;
  startUrl: string;
  /** The turn's result: settles once the sign-in does. */
  result: Promise<MessageResult>;
}

/** Starts a turn that calls the protected tool and waits until it is parked on a sign-in. */
export async function parkOnSignIn(client: Client, message = WHOAMI): Promise<ParkedSignIn> {
  const { session, response } = await client.sessions.create({ message });
  const result = response!.result();
  // Tests that leave the turn parked never read its result; the bridge closing ends that read.
  result.catch(() => undefined);
  const events = await readUntil(session.stream({ startIndex: 0 }), (e) => e.type === 'authorization.required');
  const data = events.at(-1)!.data as { attemptId: string; authorization: { url: string } };
  return { session, attemptId: data.attemptId, startUrl: data.authorization.url, result };
}

/** Opens a start link the way a browser would, without following the redirect: the binding cookie and the provider URL. */
export async function openStartLink(startUrl: string): Promise<{ cookie: string; providerUrl: URL; state: string }> {
  const response = await fetch(startUrl, { redirect: 'manual' });
  const cookie = response.headers.getSetCookie()[0]!.split(';')[0]!;
  const providerUrl = new URL(response.headers.get('location')!);
  return { cookie, providerUrl, state: providerUrl.searchParams.get('state')! };
}

/** How many events a session's stream holds. */
export async function eventCount(session: ClientSession): Promise<number> {
  return (await collect(session.stream({ startIndex: 0, follow: false }))).length;
}
