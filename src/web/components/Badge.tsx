import { tone } from '../lib/format';

/** A status word with a colour that says good / warn / bad; the word itself carries the meaning. */
export function Badge({ value, title }: { value: string | null | undefined; title?: string | undefined }) {
  const v = value ?? '–';
  return (
    <span className={`badge badge-${tone(value)}`} title={title}>
      {v.replace(/_/g, ' ')}
    </span>
  );
}
