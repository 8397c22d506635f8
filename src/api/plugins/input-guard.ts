import type { FastifyInstance } from 'fastify';
import { invalid } from '../../domain/errors.js';
import { MAX_JSON_DEPTH, badChar, findBadString, jsonDepthExceeds } from '../text-safety.js';

/**
 * One gate for what a request carries, in front of every route (so no route can forget it, and nothing a
 * store would refuse reaches a query):
 * - JSON bodies: an empty body is no body; nesting is bounded before parsing; keys and strings are checked
 *   after it (U+0000, unpaired surrogates, control characters in field names); prototype poisoning is
 *   refused as Fastify's own parser does.
 * - Path parameters and query values: no control characters at all (no id or query value holds one).
 * - Any other content type is 415 (errors.ts).
 * The checks run after authentication, so an unauthenticated caller still gets 401 first.
 */
export function inputGuard(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  // The API speaks JSON only: a text/plain body is 415 like any other type, not a string handed to a route.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = body as string;
    // `Content-Type: application/json` with nothing after it (common from HTTP clients) means no body.
    if (text.trim() === '') return done(null, undefined);
    if (jsonDepthExceeds(text, MAX_JSON_DEPTH))
      return done(invalid(`the body is nested deeper than ${MAX_JSON_DEPTH} levels`), undefined);
    parseJson(req, text, (err, value) => {
      if (err) return done(err, undefined);
      const bad = findBadString(value, 'body');
      return bad ? done(invalid(bad), undefined) : done(null, value);
    });
  });

  // A callback hook: every request passes it, and an async one costs a promise and a microtask turn (issue 12).
  app.addHook('preValidation', (req, _reply, done) => {
    for (const [where, values] of [
      ['params', req.params],
      ['query', req.query],
    ] as const) {
      if (!values || typeof values !== 'object') continue;
      for (const [name, v] of Object.entries(values as Record<string, unknown>)) {
        for (const s of Array.isArray(v) ? v : [v]) {
          if (typeof s !== 'string') continue;
          const why = badChar(s, false);
          if (why) return done(invalid(`${where}.${name} contains ${why}, which is not allowed`));
        }
        const nameWhy = badChar(name, false);
        if (nameWhy)
          return done(invalid(`${where} has a parameter name that contains ${nameWhy}, which is not allowed`));
      }
    }
    done();
  });
}
