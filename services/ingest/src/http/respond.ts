import type { ServerResponse } from 'node:http';
import { EventrelayError, UnavailableError } from '@eventrelay/config';

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** SDKs parse `code` and `message`; a 3xx is never sent because some SDKs count it as success. */
export function sendError(res: ServerResponse, err: unknown): { status: number; code: string } {
  const known = err instanceof EventrelayError && err.httpStatus !== undefined ? err : undefined;
  const status = known?.httpStatus ?? 500;
  const code = known?.code ?? 'internal_error';
  if (err instanceof UnavailableError) {
    res.setHeader('Retry-After', String(err.retryAfterSeconds));
    if (err.resetAtEpochSeconds !== undefined) res.setHeader('X-RateLimit-Reset', String(err.resetAtEpochSeconds));
  }
  // The rest of an oversized body is not worth reading.
  if (code === 'payload_too_large') res.setHeader('Connection', 'close');
  sendJson(res, status, { success: false, code, message: known ? known.message : 'internal error' });
  return { status, code };
}
