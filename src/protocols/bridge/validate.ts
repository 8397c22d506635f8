import { AjvCompiler } from '@fastify/ajv-compiler';
import type { TSchema } from 'typebox';
import { EA_MESSAGES, type EaMessage, SERVICE_MESSAGES, type ServiceMessage } from './schemas.js';

type Validate = ((data: unknown) => boolean) & { errors?: Array<{ instancePath?: string; message?: string }> | null };
type Build = (
  external: unknown,
  options: unknown,
) => (route: { schema: unknown; method: string; url: string; httpPart?: string }) => Validate;

/** Largest message either side accepts: a snapshot of a busy account fits, a flood does not. */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/** Why a frame was refused; `code` is the protocol error code the connection is closed with. */
export interface Refusal {
  ok: false;
  code: 'malformed_json' | 'unknown_type' | 'schema_violation' | 'message_too_large';
  message: string;
}
export type Parsed<T> = { ok: true; msg: T } | Refusal;

/**
 * Ajv as Fastify uses it, but strict: no type coercion, no defaults, no removal of unknown fields (Fastify's
 * defaults would quietly turn a wrong message into a right one).
 */
function compileAll(schemas: Record<string, TSchema>): Map<string, Validate> {
  const build = (AjvCompiler() as unknown as Build)(
    {},
    { customOptions: { coerceTypes: false, useDefaults: false, removeAdditional: false, allErrors: false } },
  );
  const out = new Map<string, Validate>();
  for (const [type, schema] of Object.entries(schemas))
    out.set(type, build({ schema, method: 'BRIDGE', url: type, httpPart: 'body' }));
  return out;
}

let eaValidators: Map<string, Validate> | null = null;
let serviceValidators: Map<string, Validate> | null = null;

function parseWith<T>(raw: string, validators: Map<string, Validate>): Parsed<T> {
  if (raw.length > MAX_MESSAGE_BYTES)
    return { ok: false, code: 'message_too_large', message: `message over ${MAX_MESSAGE_BYTES} bytes` };
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch (err) {
    return { ok: false, code: 'malformed_json', message: `not JSON: ${(err as Error).message}` };
  }
  const type = data !== null && typeof data === 'object' ? (data as { type?: unknown }).type : undefined;
  const validate = typeof type === 'string' ? validators.get(type) : undefined;
  if (!validate)
    return { ok: false, code: 'unknown_type', message: `unknown message type ${JSON.stringify(type ?? null)}` };
  if (!validate(data)) {
    const e = validate.errors?.[0];
    return {
      ok: false,
      code: 'schema_violation',
      message: `${type}: ${e?.instancePath || '/'} ${e?.message ?? 'does not match its schema'}`,
    };
  }
  return { ok: true, msg: data as T };
}

/** A frame from an EA, checked against its message's schema. */
export function parseEaMessage(raw: string): Parsed<EaMessage> {
  eaValidators ??= compileAll(EA_MESSAGES);
  return parseWith<EaMessage>(raw, eaValidators);
}

/** A frame from the service, as an EA (the simulated one) checks it. */
export function parseServiceMessage(raw: string): Parsed<ServiceMessage> {
  serviceValidators ??= compileAll(SERVICE_MESSAGES);
  return parseWith<ServiceMessage>(raw, serviceValidators);
}
