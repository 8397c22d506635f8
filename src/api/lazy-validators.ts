import { AjvCompiler } from '@fastify/ajv-compiler';
import type { RouteWarmup } from './route-warmup.js';

type Validate = ((data: unknown) => unknown) & { errors?: unknown };
type Compile = (route: { schema: unknown; method: string; url: string; httpPart?: string }) => Validate;
export type Build = (externalSchemas: unknown, options: unknown) => Compile;

/**
 * Fastify's own request validators (Ajv, through @fastify/ajv-compiler as Fastify would use it), each compiled on
 * its route's first request instead of all at start-up: compiling every route's schemas was ~0.8 s of CPU of each
 * `serve` start (measured with --cpu-prof), the largest part of `npm start` once the store was open. Validation is
 * unchanged (same compiler, same Ajv options, `errors` as Fastify reads it); a schema Ajv refuses fails its route's
 * requests (500) instead of the start, and the API tests call every route.
 */
export function lazyValidators(warmup?: RouteWarmup, select: Build = AjvCompiler() as unknown as Build): Build {
  return (externalSchemas, options) => {
    let compile: Compile | null = null;
    return (route) => {
      let fn: Validate | null = null;
      const compiled = () => (fn ??= (compile ??= select(externalSchemas, options))(route));
      warmup?.add(route.method, route.url, compiled);
      const validate: Validate = (data) => {
        const v = compiled();
        const ok = v(data);
        validate.errors = v.errors;
        return ok;
      };
      return validate;
    };
  };
}
