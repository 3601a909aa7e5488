import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { ErrorCode } from '@eve-flue/eve-protocol';
import { refusalResponse, type RefusalHeaders } from './refusal.ts';

/**
 * A JSON error in Eve's shape, written straight to a socket (before an upgrade, or for a request
 * Node could not parse). Returns the status, for whoever reports refusals.
 */
export function refuse(socket: Duplex, code: ErrorCode, message: string, headers: RefusalHeaders = {}): number {
  const { status, headers: head, body } = refusalResponse(code, message, headers);
  writeResponse(socket, status, head, body);
  return status;
}

function writeResponse(socket: Duplex, status: number, headers: Record<string, string | readonly string[]>, body: string): void {
  if (socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`, 'connection: close', ...Object.entries(headers).flatMap(([k, v]) => (typeof v === 'string' ? [v] : v).map((one) => `${k}: ${one}`))];
  socket.once('finish', () => socket.destroy());
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
}

/**
 * The http server's `'clientError'` listener: a request Node's parser refused (a broken request
 * line, bad headers, headers too large) is answered in Eve's error shape instead of a bare 400.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  // As Node's own handler: only a socket nothing was written to gets an answer (not one whose response went out).
  if (error.code === 'ECONNRESET' || !socket.writable || (socket as Socket).bytesWritten > 0) {
    socket.destroy();
    return;
  }
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  refuse(socket, tooLarge ? 'headers_too_large' : 'invalid_request', tooLarge ? 'The request headers are too large.' : 'The request is malformed.');
}
