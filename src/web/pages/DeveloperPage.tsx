import { ApiKeys } from '../components/ApiKeys';
import { WebhookEndpoints } from '../components/WebhookEndpoints';

/** The developer page: API keys, webhook endpoints, and the API's documents. */
export function DeveloperPage() {
  return (
    <section aria-labelledby="dev-title">
      <h1 id="dev-title">Developer</h1>
      <section className="card" aria-labelledby="docs-title">
        <h2 id="docs-title">API reference</h2>
        <ul>
          <li>
            <a href="/openapi.json" target="_blank" rel="noreferrer">
              OpenAPI document
            </a>{' '}
            (<code>/openapi.json</code>)
          </li>
          <li>
            <a href="/docs" target="_blank" rel="noreferrer">
              Interactive reference
            </a>{' '}
            (<code>/docs</code>)
          </li>
        </ul>
        <p className="muted small">
          Family R (<code>/api</code>) takes a signed-in access token; family V (<code>/v1</code>) takes an API key.
        </p>
      </section>
      <ApiKeys />
      <WebhookEndpoints />
    </section>
  );
}
