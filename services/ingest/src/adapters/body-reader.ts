/**
 * Reads a request body with a size limit that applies to the inflated bytes (docs/spec.md §2):
 * gzip, deflate (zlib or raw) and br are inflated, and inflation stops one byte past the limit, so
 * a small compressed bomb costs no more memory than an honest body.
 */
import type { IncomingMessage } from 'node:http';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { ValidationError } from '@eventrelay/config';

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const inflateRaw = promisify(zlib.inflateRaw);
const brotli = promisify(zlib.brotliDecompress);
const utf8 = new TextDecoder('utf-8', { fatal: true });

export async function readBodyText(req: IncomingMessage, limit: number): Promise<string> {
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  // Compressed input is never larger than its output by more than framing overhead.
  const rawLimit = encoding === 'identity' || encoding === '' ? limit : limit + Math.ceil(limit / 100) + 1024;
  const raw = await readRaw(req, rawLimit, limit);
  const inflated = await decode(raw, encoding, limit);
  if (inflated.length > limit) throw tooLarge(limit);
  try {
    return utf8.decode(inflated);
  } catch {
    throw new ValidationError('invalid_request', 'body is not valid UTF-8');
  }
}

function tooLarge(limit: number): ValidationError {
  return new ValidationError('payload_too_large', `body is over ${limit} bytes`);
}

function readRaw(req: IncomingMessage, rawLimit: number, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > rawLimit) {
    req.resume();
    return Promise.reject(tooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      req.off('data', onData).off('end', onEnd).off('error', onError).off('aborted', onAborted);
      if (err) {
        req.resume();
        reject(err);
      } else resolve(Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > rawLimit) finish(tooLarge(limit));
      else chunks.push(chunk);
    };
    const onEnd = () => finish();
    const onError = (err: Error) => finish(new ValidationError('invalid_request', `body could not be read: ${err.message}`));
    const onAborted = () => finish(new ValidationError('invalid_request', 'client aborted the request'));
    req.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onAborted);
  });
}

async function decode(raw: Buffer, encoding: string, limit: number): Promise<Buffer> {
  const opts = { maxOutputLength: limit + 1 };
  try {
    switch (encoding) {
      case '':
      case 'identity':
        return raw;
      case 'gzip':
      case 'x-gzip':
        return await gunzip(raw, opts);
      case 'deflate':
        // RFC 9110 deflate is zlib-wrapped, but some clients send a raw stream.
        return await inflate(raw, opts).catch((err: NodeJS.ErrnoException) => {
          if (err.code === 'ERR_BUFFER_TOO_LARGE') throw err;
          return inflateRaw(raw, opts);
        });
      case 'br':
        return await brotli(raw, opts);
      default:
        throw new ValidationError('invalid_request', `Content-Encoding "${encoding}" is not supported; use gzip, deflate, br or none`);
    }
  } catch (err) {
    if (err instanceof ValidationError) throw err;
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(limit);
    throw new ValidationError('invalid_request', `body is not valid ${encoding} data`);
  }
}
