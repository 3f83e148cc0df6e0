/** The chaos receiver's environment: defaults, and an error naming the variable for each bad value. */
import { loadChaosEnv } from './env';
import { thrown } from '../../test/support/thrown';

const noFile = (file: string): string => {
  throw new Error(`ENOENT: ${file}`);
};
const errorOf = (f: () => unknown): string => thrown(Error, f).message;

describe('loadChaosEnv', () => {
  it('defaults to one HTTP listener on a free port, no TLS, no plan, no secret', () => {
    expect(loadChaosEnv({}, noFile)).toEqual({ httpPorts: [0], httpsPort: null, plan: { routes: {} }, planFile: null, secret: null });
  });

  it('reads listeners, fixed ports, TLS, the plan file and the secret', () => {
    expect(loadChaosEnv({ CHAOS_LISTENERS: '3' }, noFile).httpPorts).toEqual([0, 0, 0]);
    const env = loadChaosEnv(
      { CHAOS_PORTS: '8081, 8082', CHAOS_TLS: '1', CHAOS_TLS_PORT: '8443', CHAOS_PLAN: '/p.json', SHARED_SECRET: 's3cret' },
      () => '{"seed":5,"routes":{"d0":{"fail500":0.5}}}',
    );
    expect(env).toEqual({
      httpPorts: [8081, 8082],
      httpsPort: 8443,
      plan: { seed: 5, routes: { d0: { fail500: 0.5 } } },
      planFile: '/p.json',
      secret: 's3cret',
    });
    expect(loadChaosEnv({ CHAOS_TLS: '1' }, noFile).httpsPort).toBe(0);
    expect(Object.isFrozen(env)).toBe(true);
  });

  it.each<[string, NodeJS.ProcessEnv, string]>([
    ['listeners zero', { CHAOS_LISTENERS: '0' }, 'CHAOS_LISTENERS must be a whole number between 1 and 256, got "0"'],
    ['listeners not a number', { CHAOS_LISTENERS: 'two' }, 'CHAOS_LISTENERS must be a whole number between 1 and 256, got "two"'],
    ['a bad port', { CHAOS_PORTS: '8081,x' }, 'CHAOS_PORTS must hold ports between 0 and 65535, got "x"'],
    ['an empty port', { CHAOS_PORTS: '8081,' }, 'CHAOS_PORTS must hold ports between 0 and 65535, got ""'],
    ['a port too high', { CHAOS_PORTS: '70000' }, 'CHAOS_PORTS must hold ports between 0 and 65535, got "70000"'],
    [
      'listeners and ports disagree',
      { CHAOS_PORTS: '1,2', CHAOS_LISTENERS: '3' },
      'CHAOS_LISTENERS (3) disagrees with the 2 ports of CHAOS_PORTS; set one of them',
    ],
    ['TLS not 0 or 1', { CHAOS_TLS: 'yes' }, 'CHAOS_TLS must be 1 or 0, got "yes"'],
    ['TLS port without TLS', { CHAOS_TLS_PORT: '8443' }, 'CHAOS_TLS_PORT is set but CHAOS_TLS is not 1'],
    ['plan file missing', { CHAOS_PLAN: '/nope.json' }, 'CHAOS_PLAN: cannot read /nope.json: ENOENT: /nope.json'],
  ])('rejects %s', (_label, source, message) => {
    expect(errorOf(() => loadChaosEnv(source, noFile))).toBe(message);
  });

  it('names the plan file and the field for a bad plan', () => {
    expect(errorOf(() => loadChaosEnv({ CHAOS_PLAN: '/p.json' }, () => '{"routes":{"d3":{"fail500":3}}}'))).toBe(
      'CHAOS_PLAN (/p.json): routes.d3.fail500 must be a number between 0 and 1',
    );
    expect(errorOf(() => loadChaosEnv({ CHAOS_PLAN: '/p.json' }, () => '{routes'))).toMatch(/^CHAOS_PLAN \(\/p\.json\): .*JSON/);
  });
});
