/**
 * The golden normalization fixtures (packages/config/fixtures/normalize, format in the README
 * there) run through interpretBody exactly as the intake would: route from the path, receivedAt and
 * messageIds injected. The Go client tests read the same files, so both sides agree on the contract.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { interpretBody } from './interpret.js';
import { routeFor } from './routes.js';

const FIXTURE_DIR = path.resolve(__dirname, '../../../../packages/config/fixtures/normalize');

interface NormalizeFixture {
  name: string;
  route: string;
  receivedAt: string;
  body: Record<string, unknown>;
  messageIds: string[];
  expected: { accepted: unknown[]; rejected: unknown[] };
}

const files = readdirSync(FIXTURE_DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

function load(file: string): NormalizeFixture {
  return JSON.parse(readFileSync(path.join(FIXTURE_DIR, file), 'utf8')) as NormalizeFixture;
}

/** Hands out the fixture's messageIds in order and fails loudly when it runs out. */
function messageIdsFrom(list: readonly string[]) {
  let next = 0;
  return {
    newMessageId: () => {
      const id = list[next++];
      if (id === undefined) throw new Error(`the fixture lists ${list.length} messageIds; interpretBody asked for more`);
      return id;
    },
    used: () => next,
  };
}

it('finds the fixtures', () => {
  expect(files.length).toBeGreaterThanOrEqual(9);
});

describe.each(files)('%s', (file) => {
  const fixture = load(file);

  it(fixture.name, () => {
    const segment = /^\/v1\/([a-z]+)\/?$/.exec(fixture.route)?.[1];
    if (segment === undefined) throw new Error(`route ${fixture.route} is not an intake path`);
    const route = routeFor(segment);
    if (!route) throw new Error(`route ${fixture.route} is not an intake route`);
    const receivedAt = Date.parse(fixture.receivedAt);
    expect(new Date(receivedAt).toISOString()).toBe(fixture.receivedAt);

    const ids = messageIdsFrom(fixture.messageIds);
    const result = interpretBody(route, structuredClone(fixture.body), {
      measureItems: true,
      receivedAt,
      newMessageId: ids.newMessageId,
    });

    // A JSON round trip: what goes on the queue is the serialized call.
    expect(JSON.parse(JSON.stringify(result))).toEqual(fixture.expected);
    expect(ids.used()).toBe(fixture.messageIds.length);
  });
});
