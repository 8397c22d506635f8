import pino, { type Logger } from 'pino';

/**
 * Secrets never reach a log line: credentials in headers and any field that can carry one are censored
 * wherever they appear in a logged object (a test greps the logs for planted secrets).
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  '*.password',
  '*.accessToken',
  '*.refreshToken',
  '*.apiKey',
  '*.secret',
  '*.credentials',
  'password',
  'accessToken',
  'refreshToken',
  'apiKey',
  'secret',
];

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, destination as pino.DestinationStream | undefined);
}
