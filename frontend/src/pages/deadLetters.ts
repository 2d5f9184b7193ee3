import type { components } from '../api/schema';

type DeadLetter = components['schemas']['DeadLetter'];
type DeadLetterList = components['schemas']['DeadLetterList'];

/**
 * findDeadLetter looks a dead letter up by id: the API has no GET by id, so the list is read page by page
 * (following nextToken, at most maxPages pages) until it holds the id. Undefined when it is not found.
 */
export async function findDeadLetter(
  load: (nextToken: string | undefined) => Promise<DeadLetterList>,
  id: string,
  maxPages = 20,
): Promise<DeadLetter | undefined> {
  let token: string | undefined;
  for (let i = 0; i < maxPages; i++) {
    const page = await load(token);
    const hit = (page.deadLetters ?? []).find((d) => d.id === id);
    if (hit) return hit;
    if (!page.nextToken) return undefined;
    token = page.nextToken;
  }
  return undefined;
}

/** prettyEvent renders the original event as indented JSON, data included. */
export function prettyEvent(event: unknown): string {
  if (event === undefined || event === null) return '';
  return JSON.stringify(event, null, 2);
}

/** entryText says in plain words what happened to one dead letter of a redrive or discard. */
export function entryText(e: components['schemas']['DeadLetterEntryResult'], verb: 'redriven' | 'discarded'): string {
  if (e.errorCode || e.errorMessage) return `Dead letter ${e.id ?? ''} was not ${verb}: ${e.errorMessage ?? e.errorCode}.`.replace(/\.\.$/, '.');
  return `Dead letter ${e.id ?? ''} was ${verb}.`;
}
