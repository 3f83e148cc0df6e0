/**
 * Parsing and checking the declarative config file. Everything is checked before anything is
 * applied, so a bad file changes nothing.
 */
import { ConfigError } from './errors.js';
import type { EventrelayConfig } from './generated/contracts.js';
import { describeSchemaErrors, validateConfigShape } from './schemas.js';
import { describeProblem } from './field-problems.js';
import { bodyDepthProblem } from './json-depth.js';
import { filtersProblems } from './filters/destination-filters.js';
import { destinationType } from './destination-catalog.js';
import { audienceProblems } from './audiences/audience-rules.js';

export interface ValidConfig {
  readonly sources: NonNullable<EventrelayConfig['sources']>;
  readonly destinations: NonNullable<EventrelayConfig['destinations']>;
  readonly audiences: NonNullable<EventrelayConfig['audiences']>;
}

/** `origin` names the file in messages. */
export function parseConfigText(text: string, origin: string): ValidConfig {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ConfigError('invalid_config', `${origin}: not valid JSON (${(err as Error).message})`);
  }
  // Before the schema validator recurses over it: a file nested thousands of levels deep must be
  // refused by name, not overflow the stack.
  const tooDeep = bodyDepthProblem(value);
  if (tooDeep) throw new ConfigError('invalid_config', `${origin}: ${tooDeep.message}`);
  return checkConfig(value, origin);
}

export function checkConfig(value: unknown, origin: string): ValidConfig {
  if (!validateConfigShape(value)) {
    throw new ConfigError('invalid_config', `${origin}: ${describeSchemaErrors(validateConfigShape.errors).join('; ')}`);
  }
  const config: ValidConfig = { sources: value.sources ?? [], destinations: value.destinations ?? [], audiences: value.audiences ?? [] };
  const problems = [...uniqueness(config), ...references(config)];
  // The settings rules belong to the destination's catalog type (the schema has checked the name).
  config.destinations.forEach((d, i) => {
    problems.push(...(destinationType(d.name)?.settingsProblems(d.settings, `destinations[${i}].settings`) ?? []).map(describeProblem));
    if (d.filters !== undefined) problems.push(...filtersProblems(d.filters, `destinations[${i}].filters`).map(describeProblem));
  });
  if (problems.length > 0) throw new ConfigError('invalid_config', `${origin}: ${problems.join('; ')}`);
  return config;
}

function uniqueness(config: ValidConfig): string[] {
  const problems: string[] = [];
  const seen = (list: readonly { id: string }[], what: string) => {
    const ids = new Set<string>();
    list.forEach((item, i) => {
      if (ids.has(item.id)) problems.push(`${what}[${i}].id "${item.id}" is used twice`);
      ids.add(item.id);
    });
  };
  seen(config.sources, 'sources');
  seen(config.destinations, 'destinations');
  seen(config.audiences, 'audiences');
  const keys = new Set<string>();
  config.sources.forEach((s, i) => {
    if (keys.has(s.writeKey)) problems.push(`sources[${i}].writeKey is used by another source`);
    keys.add(s.writeKey);
  });
  return problems;
}

function references(config: ValidConfig): string[] {
  const sourceIds = new Set(config.sources.map((s) => s.id));
  const destinationIds = new Set(config.destinations.map((d) => d.id));
  const problems: string[] = [];
  config.destinations.forEach((d, i) =>
    d.sourceIds.forEach((id, j) => {
      if (!sourceIds.has(id)) problems.push(`destinations[${i}].sourceIds[${j}] "${id}" names no source in this file`);
    }),
  );
  // Same rules as the admin API; field paths are made absolute for the file.
  config.audiences.forEach((a, i) => {
    const world = { sourceIds, destinationIds, others: config.audiences.filter((_, j) => j !== i) };
    problems.push(...audienceProblems(a, world).map((p) => `audiences[${i}].${describeProblem(p)}`));
  });
  return problems;
}
