import { ApiError } from '../api/errors';
import { Alert } from './Alert';
import { RetryCountdown } from './RetryCountdown';

/**
 * Errors of the connection routes, said plainly: the 3-per-5-minutes limit with the time to wait, wrong
 * broker credentials, an account number that does not match, a broker that is down.
 */
export function ConnectError({ error }: { error: unknown }) {
  if (!error) return null;
  if (error instanceof ApiError) {
    if (error.status === 429)
      return (
        <RetryCountdown key={error.requestId ?? String(error.retryAfterSec)} seconds={error.retryAfterSec ?? 300} />
      );
    if (error.code === 'account_already_connected') {
      return (
        <Alert
          error={
            new Error(
              `This broker account is already connected here, by another user. A broker account can be connected once: copying an account onto itself multiplies every trade. (${error.message})`,
            )
          }
        />
      );
    }
    // Before the credentials test below: this is the server's own settings, not the user's broker login.
    if (error.code === 'platform_not_configured')
      return (
        <Alert
          error={
            new Error(
              `This platform is not set up on this server yet; ask its operator. Nothing was counted against your connection attempts. (${error.message})`,
            )
          }
        />
      );
    const text = `${error.code} ${error.message}`.toLowerCase();
    if (error.status === 401 || error.status === 403 || /credential|password|login|auth/.test(text)) {
      return (
        <Alert
          error={
            new Error(
              `The broker refused these credentials: check the login or email, the password and the server. (${error.message})`,
            )
          }
        />
      );
    }
    if (error.status === 502 || error.status === 503)
      return (
        <Alert
          error={new Error(`The broker could not be reached or failed (${error.message}). Try again in a moment.`)}
        />
      );
  }
  return <Alert error={error} />;
}
