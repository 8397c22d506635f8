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
const SECRET_SHAPED = /(ctk|ctat|whsec)_|eyJ[A-Za-z0-9_-]{8,}/;

export function loggableUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const path = url.slice(0, q);
  const callback = /\/callback\/?$/i.test(path);
  const parts = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair.length > 64 || SECRET_SHAPED.test(pair) ? '[redacted]' : pair;
      const name = pair.slice(0, eq);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        /* a malformed name is shown as sent */
      }
      const value = pair.slice(eq + 1);
      const keep = !callback && HARMLESS.has(decoded) && !SECRET_SHAPED.test(value);
      return `${name}=${keep ? value : '[redacted]'}`;
    });
  return `${path}?${parts.join('&')}`;
}
