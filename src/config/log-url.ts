/**
 * The request line's URL as logged: the path, and of the query only values that cannot be a secret. A query
 * string is where a careless client puts an API key and where the OAuth popup returns its `code` and
 * `state`, so every value is replaced unless its parameter is one of ours that never carries one (paging,
 * filters); on a callback path every value goes, and so does any value shaped like one of our secrets.
 */
const HARMLESS = new Set([
  'limit',
  'cursor',
  'before',
  'from',
  'to',
  'symbol',
  'history',
  'accountId',
  'dryRun',
  'query',
  'platform',
  'instrumentId',
]);
const SECRET_SHAPED = /(ctk|ctat|ctbt|ctop|whsec)_|eyJ[A-Za-z0-9_-]{8,}/;
/** No id of ours is longer (the routes' path parameters stop at 64): a longer segment is someone's data. */
const MAX_ID = 64;

const decoded = (s: string): string => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/**
 * A path as logged and recorded: a segment shaped like one of our secrets, or longer than any id, is replaced. A
 * client that puts a key or token in the path (a wrong base URL, a copied curl line) must not leave it in the logs
 * or the request records (issue 46, finding 6).
 */
export function loggablePath(path: string): string {
  if (!SECRET_SHAPED.test(decoded(path)) && path.length <= MAX_ID) return path;
  return path
    .split('/')
    .map((seg) => (seg.length > MAX_ID || SECRET_SHAPED.test(decoded(seg)) ? '[redacted]' : seg))
    .join('/');
}

export function loggableUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return loggablePath(url);
  const path = loggablePath(url.slice(0, q));
  const callback = /\/callback\/?$/i.test(path);
  const parts = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair.length > 64 || SECRET_SHAPED.test(pair) ? '[redacted]' : pair;
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const keep = !callback && HARMLESS.has(decoded(name)) && !SECRET_SHAPED.test(value);
      return `${name}=${keep ? value : '[redacted]'}`;
    });
  return `${path}?${parts.join('&')}`;
}
