/**
 * The bus port: fire-and-forget signals between processes ("events were appended for user X"). The truth
 * is always in the store; a lost signal only delays a reader until its next poll, so at-most-once is enough.
 * Subjects are dot-separated tokens; `*` matches one token and `>` the rest, as in NATS.
 */
export interface Bus {
  readonly kind: 'local' | 'nats';
  publish(subject: string, data: string): void;
  subscribe(subject: string, handler: (data: string, subject: string) => void): () => void;
  close(): Promise<void>;
  /** A round trip to the server, for readiness; absent where there is no server (the in-process bus). */
  ping?(): Promise<void>;
}

export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length || (p[i] !== '*' && p[i] !== s[i])) return false;
  }
  return p.length === s.length;
}
