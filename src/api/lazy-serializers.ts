import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { RouteWarmup } from './route-warmup.js';

type Compile = (route: {
  schema: unknown;
  method: string;
  url: string;
  httpStatus: string;
  contentType?: string;
}) => (data: unknown) => string;
export type Build = (externalSchemas: unknown, options: unknown) => Compile;

/**
 * Fastify's own response serializers (fast-json-stringify), each compiled on its route's first answer with that
 * status instead of all at start-up: compiling every route's schemas was ~1 s of CPU of each `serve` start, for
 * routes most runs never call. What a response holds is unchanged (same compiler, same options); a schema it
 * cannot compile fails that answer (500) instead of the start, and the OpenAPI tests cover every route's schema.
 * Given a warm-up, each route's compile is also handed to it (route-warmup.ts).
 */
export function lazySerializers(warmup?: RouteWarmup, build: Build = SerializerSelector() as unknown as Build): Build {
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options);
    return (route) => {
      let fn: ((data: unknown) => string) | null = null;
      const compiled = () => (fn ??= compile(route));
      warmup?.add(route.method, route.url, compiled);
      return (data) => compiled()(data);
    };
  };
}
