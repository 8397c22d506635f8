import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from './errors.js';
import { newRequestId } from './plugins/request-records.js';

/**
 * Errors Fastify and Node raise before a route is found keep our `{code, error, requestId}` body: the URL
 * could not be decoded or routed (Fastify's `frameworkErrors`), or the request was not even HTTP the parser
 * accepts (Node's `clientError`: too-large headers, a bad request line, a request that took too long).
 */
export function frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', req.id);
  if (err.code === 'FST_ERR_BAD_URL') {
    void sendError(req, reply, 400, 'invalid_request', 'the URL has invalid percent-encoding');
  } else if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    void sendError(req, reply, 414, 'uri_too_long', 'a path segment of the URL is too long to be an id');
  } else {
    req.log.error({ err }, 'framework error');
    void sendError(req, reply, 500, 'internal_error', 'internal error; the request id identifies it in the server log');
  }
}

const CLIENT_ERRORS: Record<string, [number, string, string, string]> = {
  HPE_HEADER_OVERFLOW: [
    431,
    'Request Header Fields Too Large',
    'request_header_too_large',
    'the request headers are larger than the server accepts',
  ],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'request_timeout', 'the request was not received in time'],
};

/**
 * Node's `clientError`: no request object exists, so the answer is written to the socket by hand, in our
 * body shape and with a request id that also goes to the log.
 */
export function clientErrorHandler(
  this: { log: { debug(o: object, m: string): void } },
  err: Error & { code?: string },
  socket: Socket,
): void {
  // A reset connection has nobody left to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, reason, code, message] = CLIENT_ERRORS[err.code ?? ''] ?? [
    400,
    'Bad Request',
    'invalid_request',
    'the request is not valid HTTP',
  ];
  const requestId = newRequestId();
  this.log.debug({ err, requestId }, 'client error');
  const body = JSON.stringify({ code, error: message, requestId });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `x-request-id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
