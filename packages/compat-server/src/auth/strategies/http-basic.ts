import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Principal } from '@eve-flue/session-contract';
import { withAuthChallenges, type RouteAuth } from '../route-auth.ts';
import { checkKeys, checkString, failFor } from './options.ts';

export interface HttpBasicCredentials {
  username: string;
  password: string;
}

export interface HttpBasicOptions {
  /** Shown by browsers on their login prompt. Default `eve`. */
  realm?: string;
}

/** The SHA-256 of a credential after Unicode NFC (the challenge advertises UTF-8). */
const digest = (value: string): Buffer => createHash('sha256').update(value.normalize('NFC'), 'utf8').digest();

/**
 * One shared username and password (Eve's `httpBasic`), compared in constant time after NFC. The
 * caller is the user `username`.
 */
export function httpBasic(credentials: HttpBasicCredentials, options: HttpBasicOptions = {}): RouteAuth {
  const fail = failFor('httpBasic');
  checkKeys(credentials, ['username', 'password'], fail);
  checkKeys(options, ['realm'], fail);
  const username = checkString(credentials.username, 'username', fail);
  // RFC 7617: the username ends at the first colon, so one with a colon could never sign in.
  if (username.includes(':')) fail('username', 'may not contain ":"');
  const expected = { username: digest(username), password: digest(checkString(credentials.password, 'password', fail)) };
  const realm = options.realm === undefined ? 'eve' : checkString(options.realm, 'realm', fail);
  const principal: Principal = Object.freeze({ id: username.normalize('NFC'), type: 'user' });
  return withAuthChallenges((request) => {
    const given = basicCredentials(request);
    if (!given) return null;
    const userMatches = timingSafeEqual(digest(given.username), expected.username);
    const passwordMatches = timingSafeEqual(digest(given.password), expected.password);
    return userMatches && passwordMatches ? principal : null;
  }, [{ scheme: 'Basic', parameters: { realm, charset: 'UTF-8' } }]);
}

function basicCredentials(request: IncomingMessage): HttpBasicCredentials | undefined {
  const encoded = /^Basic\s+([A-Za-z0-9+/]+={0,2})\s*$/i.exec(request.headers.authorization ?? '')?.[1];
  if (encoded === undefined) return undefined;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? undefined : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
