import { Code } from '@mantine/core';
import { problemText, type PatternProblem } from '../builder/patternCheck';

/**
 * PatternProblems says an event pattern's problems under its field, one per line, each at its place in the
 * pattern (patternCheck.ts); nothing when there is none. Every field that takes a pattern (the builder's filter,
 * the events search, the live tail, an archive) shows them so.
 */
export function PatternProblems({ problems }: { problems: PatternProblem[] }) {
  if (problems.length === 0) return null;
  return (
    <span data-testid="pattern-problems">
      {problems.map((p) => (
        <span key={problemText(p)} style={{ display: 'block' }}>
          {p.path && <Code>{p.path}</Code>}
          {p.path ? `: ${p.message}` : p.message.charAt(0).toUpperCase() + p.message.slice(1)}
        </span>
      ))}
    </span>
  );
}
