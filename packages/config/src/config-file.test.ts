import { readFileSync } from 'node:fs';
import path from 'node:path';
import { checkConfig, parseConfigText } from './config-file.js';
import { ConfigError } from './errors.js';

const REPO_ROOT = path.resolve(__dirname, '../../..');

type Json = Record<string, unknown>;
const source = (id: string, writeKey: string, extra: Json = {}): Json => ({ id, name: `Source ${id}`, type: 'server', writeKey, ...extra });
const webhook = (url: string, headers?: Record<string, string>): Json => (headers ? { url, headers } : { url });
const destination = (id: string, sourceIds: string[], webhooks: Json[], extra: Json = {}): Json => ({
  id,
  name: 'Webhooks',
  enabled: true,
  sourceIds,
  settings: { webhooks },
  ...extra,
});

const valid = (): Json => ({
  sources: [source('web', 'write-key-web-0001'), source('api', 'write-key-api-0001', { rateLimitPerSecond: 50 })],
  destinations: [
    destination(
      'hooks',
      ['web', 'api'],
      [
        webhook('https://hooks.example.com/in', { Authorization: 'Bearer abc', 'X-Team': 'growth' }),
        webhook('http://10.0.0.5:8080/events'),
      ],
      {
        settings: { webhooks: [webhook('https://hooks.example.com/in', { Authorization: 'Bearer abc' })], sharedSecret: 'whsec_1' },
      },
    ),
  ],
  audiences: [
    {
      id: 'trial',
      name: 'Trial Users',
      sourceIds: ['web'],
      destinationIds: ['hooks'],
      condition: { trait: { key: 'plan', equals: 'trial' } },
    },
  ],
});

function rejection(config: unknown): ConfigError {
  try {
    parseConfigText(typeof config === 'string' ? config : JSON.stringify(config), 'eventrelay.config.json');
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected the config to be refused');
}

function problems(config: unknown): string {
  const err = rejection(config);
  expect(err.code).toBe('invalid_config');
  expect(err.retryable).toBe(false);
  expect(err.message.startsWith('eventrelay.config.json: ')).toBe(true);
  return err.message;
}

describe('parseConfigText', () => {
  it('accepts examples/eventrelay.config.json', () => {
    const file = path.join(REPO_ROOT, 'examples/eventrelay.config.json');
    const config = parseConfigText(readFileSync(file, 'utf8'), file);
    expect(config.sources.length).toBeGreaterThan(0);
    expect(config.sources[0]).toMatchObject({ id: 'demo-web', type: 'web' });
  });

  it('accepts a full valid file and returns its lists', () => {
    const config = parseConfigText(JSON.stringify(valid()), 'x.json');
    expect(config.sources.map((s) => s.id)).toEqual(['web', 'api']);
    expect(config.destinations.map((d) => d.id)).toEqual(['hooks']);
    expect(config.audiences.map((a) => a.id)).toEqual(['trial']);
    expect(config.destinations[0]?.settings.sharedSecret).toBe('whsec_1');
  });

  it('fills absent lists with empty ones', () => {
    expect(parseConfigText('{}', 'x.json')).toEqual({ sources: [], destinations: [], audiences: [] });
    expect(parseConfigText('{"$schema": "./schema.json"}', 'x.json')).toEqual({ sources: [], destinations: [], audiences: [] });
  });

  it.each([[''], ['{'], ['{"sources": [}'], ["{'sources': []}"]])('refuses invalid JSON %j, naming the file', (text) => {
    expect(problems(text)).toMatch(/^eventrelay\.config\.json: not valid JSON \(/);
  });

  it('refuses an audience condition nested 5,000 levels deep by the nesting limit, without overflowing the stack', () => {
    const condition = '{"not":'.repeat(5_000) + '{"trait":{"key":"plan","equals":"pro"}}' + '}'.repeat(5_000);
    const text = `{"audiences":[{"id":"a","name":"A","sourceIds":[],"destinationIds":[],"condition":${condition}}]}`;
    expect(problems(text)).toBe('eventrelay.config.json: nests objects and arrays deeper than 64 levels');
  });

  it.each([['[]'], ['null'], ['"text"'], ['3']])('refuses a top level of %s', (text) => {
    expect(problems(text)).toBe('eventrelay.config.json: (root) must be object');
  });

  describe('schema errors name the path', () => {
    it('a bad writeKey', () => {
      const config = valid();
      (config['sources'] as Json[])[0] = source('web', 'short');
      expect(problems(config)).toContain('sources[0].writeKey must be 8 to 128 letters, digits, _ or -');
    });

    it('a missing field, an unknown field and a bad enum together', () => {
      const config = valid();
      (config['sources'] as Json[])[1] = { id: 'api', name: 'API', type: 'tv', writeKey: 'write-key-api-0001', colour: 'red' };
      (config['audiences'] as Json[])[0] = { id: 'trial', name: 'Trial', sourceIds: [], destinationIds: [] };
      const message = problems(config);
      expect(message).toContain('sources[1].colour is not a known field');
      expect(message).toContain('sources[1].type must be one of "web", "mobile", "server"');
      expect(message).toContain('audiences[0].condition is required');
    });

    it('an unknown top-level field', () => {
      expect(problems({ ...valid(), destinationz: [] })).toContain('destinationz is not a known field');
    });

    it('a bad id', () => {
      const config = valid();
      (config['sources'] as Json[])[0] = source('has space', 'write-key-web-0001');
      expect(problems(config)).toContain('sources[0].id must be 1 to 64 letters, digits, _ or -');
    });

    it('a destination that is not Webhooks', () => {
      const config = valid();
      (config['destinations'] as Json[])[0] = { ...destination('hooks', ['web'], [webhook('https://a.example.com')]), name: 'Mixpanel' };
      expect(problems(config)).toContain('destinations[0].name must be one of "Webhooks"');
    });
  });

  describe('consistency', () => {
    it('refuses duplicate source, destination and audience ids', () => {
      const config = valid();
      (config['sources'] as Json[]).push(source('web', 'write-key-web-0002'));
      (config['destinations'] as Json[]).push(destination('hooks', ['web'], [webhook('https://b.example.com')]));
      const audience = (config['audiences'] as Json[])[0] as Json;
      (config['audiences'] as Json[]).push({ ...audience });
      const message = problems(config);
      expect(message).toContain('sources[2].id "web" is used twice');
      expect(message).toContain('destinations[1].id "hooks" is used twice');
      expect(message).toContain('audiences[1].id "trial" is used twice');
    });

    it('refuses a write key used by two sources', () => {
      const config = valid();
      (config['sources'] as Json[]).push(source('mobile', 'write-key-web-0001'));
      expect(problems(config)).toBe('eventrelay.config.json: sources[2].writeKey is used by another source');
    });

    it('refuses a destination that references an unknown source', () => {
      const config = valid();
      (config['destinations'] as Json[]).push(destination('hooks-2', ['web', 'ghost'], [webhook('https://b.example.com')]));
      expect(problems(config)).toBe('eventrelay.config.json: destinations[1].sourceIds[1] "ghost" names no source in this file');
    });

    it('refuses an audience that references an unknown source or destination', () => {
      const config = valid();
      (config['audiences'] as Json[])[0] = {
        id: 'a',
        name: 'A',
        sourceIds: ['nope'],
        destinationIds: ['hooks', 'gone'],
        condition: { event: { name: 'Signed Up' } },
      };
      const message = problems(config);
      expect(message).toContain('audiences[0].sourceIds[0] names no source ("nope")');
      expect(message).toContain('audiences[0].destinationIds[1] names no destination ("gone")');
    });

    it('reports every problem of the file at once', () => {
      const config = valid();
      (config['sources'] as Json[]).push(source('web', 'write-key-web-0001'));
      (config['destinations'] as Json[]).push(destination('d2', ['ghost'], [webhook('https://a.example.com', { Host: 'x' })]));
      expect(problems(config).split('; ')).toHaveLength(4);
    });
  });

  describe('webhooks', () => {
    const withHeaders = (headers: Record<string, string>) => {
      const config = valid();
      (config['destinations'] as Json[])[0] = destination(
        'hooks',
        ['web'],
        [webhook('https://a.example.com'), webhook('https://b.example.com', headers)],
      );
      return config;
    };

    it.each([
      ['X-Signature'],
      ['x-signature'],
      ['X-SIGNATURE'],
      ['Host'],
      ['host'],
      ['Content-Length'],
      ['content-LENGTH'],
      ['User-Agent'],
      ['Content-Type'],
      ['X-Eventrelay-Message-Id'],
      ['x-eventrelay-attempt'],
      ['Transfer-Encoding'],
      ['Connection'],
      ['Keep-Alive'],
      ['Upgrade'],
      ['Expect'],
    ])('refuses the reserved static header %s', (name) => {
      expect(problems(withHeaders({ [name]: 'value' }))).toBe(
        `eventrelay.config.json: destinations[0].settings.webhooks[1].headers.${name} may not be set: eventrelay or the HTTP connection controls that header`,
      );
    });

    it.each([['a\r\nX-Injected: 1'], ['line\nbreak'], ['carriage\rreturn'], ['nul\0'], ['euro €'], ['bell\u0007']])(
      'refuses the header value %j',
      (value) => {
        expect(problems(withHeaders({ 'X-Team': value }))).toBe(
          'eventrelay.config.json: destinations[0].settings.webhooks[1].headers.X-Team may hold only printable Latin-1 text (no control characters such as CR or LF, nor characters beyond U+00FF)',
        );
      },
    );

    it('accepts tabs and Latin-1 in header values', () => {
      expect(() => parseConfigText(JSON.stringify(withHeaders({ 'X-Team': 'caf\u00e9\tteam' })), 'x.json')).not.toThrow();
    });

    it('refuses a webhook URL with a user name or password', () => {
      const config = JSON.parse(JSON.stringify(withHeaders({}))) as { destinations: { settings: { webhooks: { url: string }[] } }[] };
      config.destinations[0]!.settings.webhooks[1]!.url = 'https://user:secret@hooks.example.com/in';
      expect(problems(config)).toBe(
        'eventrelay.config.json: destinations[0].settings.webhooks[1].url may not hold a user name or password; send credentials in a static Authorization header',
      );
    });

    it.each([['Bad Header'], ['X-Ünicode'], ['colon:'], ['']])('refuses the header name %j', (name) => {
      expect(problems(withHeaders({ [name]: 'v' }))).toContain(
        `destinations[0].settings.webhooks[1].headers.${name} is not a valid HTTP header name`,
      );
    });

    it('accepts ordinary static headers', () => {
      expect(() =>
        parseConfigText(JSON.stringify(withHeaders({ Authorization: 'Basic abc', 'X-Api-Key': 'k', 'X-Signature-Extra': 'ok' })), 'x.json'),
      ).not.toThrow();
    });

    it('accepts five webhooks and refuses six', () => {
      const urls = (n: number) => Array.from({ length: n }, (_, i) => webhook(`https://r${i}.example.com/hook`));
      const five = valid();
      (five['destinations'] as Json[])[0] = destination('hooks', ['web'], urls(5));
      expect(parseConfigText(JSON.stringify(five), 'x.json').destinations[0]?.settings.webhooks).toHaveLength(5);
      const six = valid();
      (six['destinations'] as Json[])[0] = destination('hooks', ['web'], urls(6));
      expect(problems(six)).toContain('destinations[0].settings.webhooks must NOT have more than 5 items');
    });

    it('refuses a destination without webhooks', () => {
      const config = valid();
      (config['destinations'] as Json[])[0] = destination('hooks', ['web'], []);
      expect(problems(config)).toContain('destinations[0].settings.webhooks must NOT have fewer than 1 items');
    });

    it.each([['ftp://files.example.com/in'], ['file:///etc/passwd'], ['hooks.example.com/in'], ['/relative'], ['javascript:alert(1)']])(
      'refuses the URL %s',
      (url) => {
        const config = valid();
        (config['destinations'] as Json[])[0] = destination('hooks', ['web'], [webhook(url)]);
        expect(problems(config)).toContain('destinations[0].settings.webhooks[0].url');
      },
    );

    it('refuses an http URL that does not parse, naming it', () => {
      const config = valid();
      (config['destinations'] as Json[])[0] = destination('hooks', ['web'], [webhook('https://ok.example.com'), webhook('http://[::1')]);
      expect(problems(config)).toBe(
        'eventrelay.config.json: destinations[0].settings.webhooks[1].url must be an absolute http or https URL',
      );
    });

    it('accepts http and https in any case', () => {
      const config = valid();
      (config['destinations'] as Json[])[0] = destination(
        'hooks',
        ['web'],
        [webhook('HTTPS://A.EXAMPLE.COM/x'), webhook('Http://127.0.0.1:9000')],
      );
      expect(() => parseConfigText(JSON.stringify(config), 'x.json')).not.toThrow();
    });
  });
});

describe('checkConfig', () => {
  it('checks an already parsed value the same way', () => {
    expect(checkConfig(valid(), 'api').sources).toHaveLength(2);
    expect(() => checkConfig({ sources: 'none' }, 'api')).toThrow('api: sources must be array');
  });
});

describe('filters and mappings in a config file', () => {
  const withShaping = (extra: Json): Json => {
    const config = valid();
    const [d] = config['destinations'] as Json[];
    Object.assign(d!, extra);
    return config;
  };

  it('accepts valid filters, a mapping and batching', () => {
    const config = withShaping({
      filters: [{ name: 'orders', only: { field: { path: 'event', matches: 'Order *' } } }, { dropFields: ['context.ip'] }],
    });
    const [d] = config['destinations'] as { settings: Json }[];
    Object.assign(d!.settings, { mapping: { event: { '@path': 'event' } }, batching: { maxCalls: 50 } });
    expect(parseConfigText(JSON.stringify(config), 'eventrelay.config.json').destinations[0]!.filters).toHaveLength(2);
  });

  it('refuses rules and templates that are wrong, naming where', () => {
    const config = withShaping({ filters: [{ drop: { field: { path: 'a..b', equals: 1 } } }, { dropFields: ['userId'] }] });
    const [d] = config['destinations'] as { settings: Json }[];
    Object.assign(d!.settings, { mapping: { x: { '@nope': 1 } } });
    const message = problems(config);
    expect(message).toContain('destinations[0].filters[0].drop.field.path');
    expect(message).toContain('destinations[0].filters[1].dropFields[0]');
    expect(message).toContain('destinations[0].settings.mapping.x');
  });
});
