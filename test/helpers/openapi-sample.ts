/** Test helper: request values made from the OpenAPI document's own schemas. */
type Schema = Record<string, any>;

/** A small value that satisfies a JSON schema (enough for the request to pass validation and reach its handler). */
export function sample(s: Schema | undefined): unknown {
  if (!s) return undefined;
  if ('const' in s) return s.const;
  if (s.enum) return s.enum[0];
  if ('default' in s && s.default !== undefined) return s.default;
  for (const k of ['anyOf', 'oneOf'] as const)
    if (s[k]) return sample((s[k] as Schema[]).find((x) => x.type !== 'null') ?? s[k][0]);
  if (s.allOf) return Object.assign({}, ...(s.allOf as Schema[]).map((x) => sample(x) as object));
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type;
  switch (type) {
    case 'object': {
      const o: Record<string, unknown> = {};
      for (const k of (s.required ?? []) as string[]) o[k] = sample(s.properties?.[k]);
      return o;
    }
    case 'array':
      return [];
    case 'boolean':
      return false;
    case 'integer':
      return Math.max(1, s.minimum ?? 1);
    case 'number':
      return Math.max(1, s.minimum ?? 1);
    case 'string': {
      if (s.format === 'uri') return 'https://example.com/hook';
      if (s.format === 'date-time') return new Date().toISOString();
      const tries = [
        '1',
        'x'.repeat(Math.max(1, s.minLength ?? 1)),
        'EURUSD',
        'https://example.com/hook',
        'a@example.com',
        '1.5',
      ];
      return s.pattern ? (tries.find((t) => new RegExp(s.pattern).test(t)) ?? tries[0]) : tries[1];
    }
    default:
      return {};
  }
}
