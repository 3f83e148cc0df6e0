/**
 * What an audience must be besides its schema, for the admin API and the config file alike: its
 * name gives a trait key that no other audience has, its condition is not nested too deep, and
 * the sources and destinations it names exist. Pure.
 */
import type { FieldProblem } from '../field-problems.js';
import type { Audience, AudienceCondition } from '../generated/contracts.js';
import { traitKey } from './trait-key.js';

/** Deeper conditions are refused: nobody writes them by hand, and evaluation recurses. */
export const MAX_CONDITION_DEPTH = 10;

export interface AudienceWorld {
  readonly sourceIds: ReadonlySet<string>;
  readonly destinationIds: ReadonlySet<string>;
  /** The other audiences (not the one being checked). */
  readonly others: Iterable<Audience>;
}

export function audienceProblems(audience: Audience, world: AudienceWorld): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const key = traitKey(audience.name);
  if (!/[\p{L}\p{N}]/u.test(key))
    problems.push({ field: 'name', message: 'must hold at least one letter or digit (its snake_case form is the membership trait)' });
  for (const other of world.others) {
    if (key !== '' && traitKey(other.name) === key)
      problems.push({ field: 'name', message: `gives the trait "${key}", which audience "${other.id}" already sends` });
  }
  audience.sourceIds.forEach((id, i) => {
    if (!world.sourceIds.has(id)) problems.push({ field: `sourceIds[${i}]`, message: `names no source ("${id}")` });
  });
  audience.destinationIds.forEach((id, i) => {
    if (!world.destinationIds.has(id)) problems.push({ field: `destinationIds[${i}]`, message: `names no destination ("${id}")` });
  });
  problems.push(...depthProblems(audience.condition, 'condition', 1));
  return problems;
}

function depthProblems(condition: AudienceCondition, field: string, depth: number): FieldProblem[] {
  if (depth > MAX_CONDITION_DEPTH) return [{ field, message: `nests deeper than ${MAX_CONDITION_DEPTH} levels` }];
  if (condition.all) return condition.all.flatMap((c, i) => depthProblems(c, `${field}.all[${i}]`, depth + 1));
  if (condition.any) return condition.any.flatMap((c, i) => depthProblems(c, `${field}.any[${i}]`, depth + 1));
  if (condition.not) return depthProblems(condition.not, `${field}.not`, depth + 1);
  return [];
}
