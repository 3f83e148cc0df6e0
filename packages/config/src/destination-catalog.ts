/**
 * The destination types an operator can pick (docs/spec.md §6, `GET /catalog`). Adding a type is
 * one new module under destinations/ and one line here.
 */
import { webhooksDestinationType } from './destinations/webhooks.js';

export const destinationCatalog = [webhooksDestinationType] as const;

export function destinationType(name: string): (typeof destinationCatalog)[number] | undefined {
  return destinationCatalog.find((t) => t.name === name);
}
