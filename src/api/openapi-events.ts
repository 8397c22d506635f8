import { EVENT_TYPES, eventComponentName } from '../events/catalogue.js';
import { OPEN } from './schemas.js';

/**
 * @fastify/swagger's refResolver: shared schemas (added with app.addSchema) become components named after
 * their $id instead of def-0, def-1...: each event type's envelope (`$id: Event.<type>`) is
 * `<Type>Event`, so a client generator gives it a readable name.
 */
export const refResolver = {
  buildLocalReference(json: Record<string, unknown>, _baseUri: unknown, _fragment: unknown, i: number): string {
    const id = typeof json.$id === 'string' ? json.$id : '';
    if (id.startsWith('Event.')) return eventComponentName(id.slice('Event.'.length));
    return `def-${i}`;
  },
};

const header = (name: string, description: string) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
});

/**
 * The OpenAPI 3.1 `webhooks` object: one entry per event type, the POST we send to a webhook endpoint, whose
 * body is that type's envelope component. The same envelopes are the `data` of the live stream's messages
 * and the items of GET /v1/events (docs/webhooks.md).
 */
export function eventWebhooks(): Record<string, unknown> {
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `webhook.${type}`,
          summary: `The ${type} event, posted to a webhook endpoint`,
          description:
            'Sent to every enabled endpoint of the user that subscribed to this type (or to all types), signed per Standard Webhooks; delivery is at least once, so deduplicate on webhook-id. The same envelope is a message of GET /v1/events/stream and an item of GET /v1/events.',
          tags: ['Webhooks'],
          ...OPEN,
          security: [],
          parameters: [
            header('webhook-id', 'the event id (evt_...): deduplicate on it'),
            header('webhook-timestamp', 'seconds since the epoch when this attempt was signed'),
            header(
              'webhook-signature',
              'v1,<base64 HMAC-SHA256> over `id.timestamp.body`, one per active secret, space-separated',
            ),
          ],
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: `#/components/schemas/${eventComponentName(type)}` } } },
          },
          responses: {
            '2XX': { description: 'received: any 2xx ends the delivery' },
            '410': { description: 'Gone: we disable the endpoint at once' },
            default: { description: 'any other answer or none: retried with back-off (docs/webhooks.md)' },
          },
        },
      },
    ]),
  );
}
