/** The wizard's steps, the current one marked for screen readers (aria-current="step"). */
export function Steps({ steps, current }: { steps: string[]; current: number }) {
  return (
    <ol className="steps" aria-label="Steps">
      {steps.map((s, i) => (
        <li
          key={s}
          className={i < current ? 'done' : i === current ? 'current' : ''}
          aria-current={i === current ? 'step' : undefined}
        >
          <span className="step-n" aria-hidden="true">
            {i < current ? '✓' : i + 1}
          </span>{' '}
          {s}
        </li>
      ))}
    </ol>
  );
}
