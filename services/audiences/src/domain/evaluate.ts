/**
 * Whether a profile meets an audience condition (the grammar is audience-condition.schema.json;
 * docs/audiences.md has examples). Pure; `now` is injected so time windows are testable.
 */
import type { AudienceCondition, TraitTest } from '@eventrelay/config';
import { utcDay, type ProfileView } from './profile.js';

export function meets(condition: AudienceCondition, view: ProfileView, now: number): boolean {
  if (condition.all) return condition.all.every((c) => meets(c, view, now));
  if (condition.any) return condition.any.some((c) => meets(c, view, now));
  if (condition.not) return !meets(condition.not, view, now);
  if (condition.trait) return traitMeets(condition.trait, view);
  if (condition.event)
    return view.eventCount(condition.event.name, utcDay(now), condition.event.withinDays) >= (condition.event.atLeast ?? 1);
  return false;
}

function traitMeets(test: TraitTest, view: ProfileView): boolean {
  const trait = view.trait(test.key);
  if (test.exists !== undefined) return trait.set === test.exists;
  if (!trait.set) return false;
  const value = trait.value;
  if (test.equals !== undefined) return sameJson(value, test.equals);
  if (test.not_equals !== undefined) return !sameJson(value, test.not_equals);
  if (test.contains !== undefined) {
    if (typeof value === 'string') return typeof test.contains === 'string' && value.includes(test.contains);
    return Array.isArray(value) && value.some((item) => sameJson(item, test.contains));
  }
  if (test.gt !== undefined) return compare(value, test.gt, (c) => c > 0);
  if (test.gte !== undefined) return compare(value, test.gte, (c) => c >= 0);
  if (test.lt !== undefined) return compare(value, test.lt, (c) => c < 0);
  if (test.lte !== undefined) return compare(value, test.lte, (c) => c <= 0);
  return false;
}

// Only values of the same kind compare: a number with a number, a string with a string. Anything
// else (a string "10" against 5, a missing trait) is simply not in the audience.
function compare(value: unknown, bound: string | number, ok: (c: number) => boolean): boolean {
  if (typeof value === 'number' && typeof bound === 'number') return ok(value - bound);
  if (typeof value === 'string' && typeof bound === 'string') return ok(value < bound ? -1 : value > bound ? 1 : 0);
  return false;
}

function sameJson(a: unknown, b: unknown): boolean {
  return a === b || (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null && JSON.stringify(a) === JSON.stringify(b));
}

/** Whether membership can change with time alone, so the periodic sync must look at it. */
export function isTimeWindowed(condition: AudienceCondition): boolean {
  if (condition.all) return condition.all.some(isTimeWindowed);
  if (condition.any) return condition.any.some(isTimeWindowed);
  if (condition.not) return isTimeWindowed(condition.not);
  return condition.event?.withinDays !== undefined;
}
