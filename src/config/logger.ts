import pino, { type Logger } from 'pino';
import { loggableUrl } from './log-url.js';

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

interface LoggedRequest {
  method: string;
  url: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

/** Fastify's request-line fields, with the URL's query values that could be secrets taken out (see loggableUrl). */
const req = (r: LoggedRequest) => ({
  method: r.method,
  url: loggableUrl(r.url),
  host: r.host,
  remoteAddress: r.ip,
  remotePort: r.socket?.remotePort,
});

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  // Fastify keeps a logger instance's own serializers over its defaults, so this one replaces its `req`.
  return pino(
    { level, serializers: { req }, redact: { paths: REDACT_PATHS, censor: '[redacted]' } },
    destination as pino.DestinationStream | undefined,
  );
}
