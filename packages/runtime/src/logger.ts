import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

/** Paths that may hold secrets or user data; they never reach a log line. */
const REDACT = [
  'writeKey',
  '*.writeKey',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'req.headers.authorization',
  'sharedSecret',
  '*.sharedSecret',
  'settings.sharedSecret',
  'adminToken',
  'ADMIN_TOKEN',
  '*.ADMIN_TOKEN',
  'body',
  '*.body',
];

export function createLogger(service: string, level: string, destination?: pino.DestinationStream): Logger {
  const options: LoggerOptions = {
    level,
    base: { service },
    redact: { paths: REDACT, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  return destination ? pino(options, destination) : pino(options);
}
