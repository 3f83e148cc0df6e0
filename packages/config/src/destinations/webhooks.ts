/**
 * The Webhooks destination type (docs/spec.md §4): its settings schema and the checks a schema
 * cannot express (URL parsing, header rules). Everything that accepts settings (the config file,
 * the admin API) checks them here, so the rules cannot drift apart.
 */
import webhookSettingsSchema from '../../schemas/webhook-settings.schema.json';
import type { FieldProblem } from '../field-problems.js';
import type { PreviousSecret, WebhookSettings, WebhookTarget } from '../generated/contracts.js';
import { mappingProblems } from '../mapping/mapping-rules.js';
import { isMalformedWhsec } from '../standard-webhooks.js';
import { webhookHeaderProblems } from '../webhook-headers.js';

export const webhooksDestinationType = {
  name: 'Webhooks',
  description: 'Signed HTTP POSTs of every call to up to five URLs, with static headers, retries for up to 4 hours and dead letters.',
  settingsSchema: webhookSettingsSchema,
  settingsProblems: webhookSettingsProblems,
} as const;

/**
 * A rotation's previous secret while it still signs (until its `expiresAt`, never after); an
 * expiresAt that does not parse (settings refuse it) gives NaN, and NaN > now is false: ignored.
 * Delivery signs with it; a write drops one that has expired.
 */
export function previousSecretInForce(previous: PreviousSecret | undefined, nowMs: number): PreviousSecret | undefined {
  return previous !== undefined && Date.parse(previous.expiresAt) > nowMs ? previous : undefined;
}

/** Problems beyond the schema; `at` is the path of the settings object, e.g. `settings`. */
function webhookSettingsProblems(settings: WebhookSettings, at: string): FieldProblem[] {
  const problems = settings.webhooks.flatMap((target, i) => webhookTargetProblems(target, `${at}.webhooks[${i}]`));
  const urls = settings.webhooks.map((w) => w.url);
  urls.forEach((url, i) => {
    if (urls.indexOf(url) !== i) problems.push({ field: `${at}.webhooks[${i}].url`, message: `repeats webhooks[${urls.indexOf(url)}]` });
  });
  if (settings.standardWebhooks && settings.sharedSecret !== undefined && isMalformedWhsec(settings.sharedSecret))
    problems.push({
      field: `${at}.sharedSecret`,
      message: 'starts with whsec_ but is not base64 after it: Standard Webhooks libraries would decode it and never verify',
    });
  if (settings.mapping !== undefined) problems.push(...mappingProblems(settings.mapping, `${at}.mapping`));
  if (settings.previousSecret !== undefined) {
    if (settings.sharedSecret === undefined)
      problems.push({
        field: `${at}.previousSecret`,
        message: 'needs a sharedSecret: a previous secret only signs next to the current one',
      });
    if (Number.isNaN(Date.parse(settings.previousSecret.expiresAt)))
      problems.push({ field: `${at}.previousSecret.expiresAt`, message: 'must be an ISO 8601 date-time' });
  }
  return problems;
}

function webhookTargetProblems(target: WebhookTarget, at: string): FieldProblem[] {
  const problems = webhookHeaderProblems(target.headers, at);
  const url = parseHttpUrl(target.url);
  if (!url) problems.push({ field: `${at}.url`, message: 'must be an absolute http or https URL' });
  else if (url.username !== '' || url.password !== '')
    problems.push({
      field: `${at}.url`,
      message: 'may not hold a user name or password; send credentials in a static Authorization header',
    });
  return problems;
}

function parseHttpUrl(text: string): URL | undefined {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' ? url : undefined;
  } catch {
    return undefined;
  }
}
