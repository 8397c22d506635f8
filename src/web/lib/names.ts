/**
 * The service's messages name things by id (`account acc_0mws…`, `group grp_…`, `job job_…`): exact for a
 * script, noise for a person. The dashboard remembers the names it has loaded and shows those instead; an id it
 * cannot name becomes a plain word. The request id stays (Alert shows it apart, for support).
 */
const names = new Map<string, string>();

export function rememberNames(items: Array<{ id: string; name: string }>): void {
  for (const i of items) names.set(i.id, i.name);
}

const WORDS: Record<string, string> = {
  acc: 'an account',
  grp: 'a copier group',
  job: 'a panic-close job',
  trd: 'a trade',
  int: 'a copy',
  usr: 'a user',
  key: 'an API key',
  whe: 'a webhook endpoint',
  evt: 'an event',
  act: 'an action',
};
const ID = /\b(acc|grp|job|trd|int|usr|key|whe|evt|act)_[a-z0-9]{6,}\b/g;

export function humanize(text: string): string {
  return (
    text
      .replace(ID, (id, kind: string) => {
        const name = names.get(id);
        return name ? `“${name}”` : (WORDS[kind] ?? 'it');
      })
      // "account an account", "group “Demo group”": the kind word is already said by the replacement.
      .replace(
        /\b(account|copier group|group|panic-close job|job|trade) (an account|a copier group|a panic-close job|a trade)\b/g,
        '$2',
      )
      .replace(/\b(account|copier group|group) (“[^”]*”)/g, '$2')
  );
}
