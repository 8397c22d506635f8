import type { paths } from '../../client/schema';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
export type Ok<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: infer R }
  ? R extends { 200: infer X }
    ? Json<X>
    : R extends { 201: infer X }
      ? Json<X>
      : R extends { 202: infer X }
        ? Json<X>
        : never
  : never;
export type Body<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { requestBody?: infer B }
  ? Json<NonNullable<B>>
  : never;

/** Shapes of the service's answers, taken from the generated OpenAPI types. */
export type Account = Ok<'/v1/accounts', 'get'>['accounts'][number];
export type Health = Account['health'];
/** The connect routes' answer: the account and what its connection test read at the broker. */
export type TestedAccount = Ok<'/v1/accounts/{account_id}/connection-test', 'get'>;
export type ConnectionTest = NonNullable<TestedAccount['connectionTest']>;
export type Position = Ok<'/v1/accounts/{account_id}/positions', 'get'>['positions'][number];
export type Group = Ok<'/v1/copier-groups', 'get'>['groups'][number];
export type CopyRule = Ok<'/v1/accounts/{account_id}/copy-rule', 'put'>;
export type CopyRulePatch = Body<'/v1/accounts/{account_id}/copy-rule', 'put'>;
export type RulePreviewAnswer = Ok<'/v1/accounts/{account_id}/rule-preview', 'post'>;
export type Trade = Ok<'/v1/trades', 'get'>['trades'][number];
export type OrderResponse = Ok<'/v1/accounts/{account_id}/orders', 'post'>;
export type AccountPanicReport = Ok<'/v1/accounts/{account_id}/panic-close', 'post'>;
export type ApiKey = Ok<'/app/api-keys', 'get'>['keys'][number];
export type WebhookEndpoint = Ok<'/v1/webhook-endpoints', 'get'>['endpoints'][number];
export type AlertChannel = Ok<'/v1/alert-channels', 'get'>['channels'][number];
export type AlertDelivery = Ok<'/v1/alert-channels/{channel_id}/deliveries', 'get'>['deliveries'][number];
export type AlertRule = Ok<'/v1/alert-rules', 'get'>['rules'][number];
