/**
 * Whether a profile meets an audience condition (the grammar is audience-condition.schema.json;
 * docs/audiences.md has examples). Pure; `now` is injected so time windows are testable.
 */
import { compileValueTest, type AudienceCondition, type TraitTest } from '@eventrelay/config';
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

// The operators are the ones call conditions use (compileValueTest), so they mean the same in both.
// Compiled per evaluation: audiences have no pattern or list operators, so compiling is a few closures.
function traitMeets(test: TraitTest, view: ProfileView): boolean {
  const trait = view.trait(test.key);
  return compileValueTest(test)(trait.set ? trait.value : undefined);
}

/** Whether membership can change with time alone, so the periodic sync must look at it. */
export function isTimeWindowed(condition: AudienceCondition): boolean {
  if (condition.all) return condition.all.some(isTimeWindowed);
  if (condition.any) return condition.any.some(isTimeWindowed);
  if (condition.not) return isTimeWindowed(condition.not);
  return condition.event?.withinDays !== undefined;
}
