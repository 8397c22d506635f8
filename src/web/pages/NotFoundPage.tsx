import { Link } from '../lib/router';

export function NotFoundPage() {
  return (
    <section>
      <h1>Not found</h1>
      <p>
        No page here. <Link to="/">Back to the accounts</Link>.
      </p>
    </section>
  );
}
