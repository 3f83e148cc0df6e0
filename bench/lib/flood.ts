/**
 * The noisy neighbour of issue 32: one source's write key flooded as a hostile holder of a public
 * key would, in a process of its own (its CPU is its own, apart from the load generator's), with
 * as many requests open as `connections`, each sent as soon as the last is answered, whatever the
 * answer (Retry-After ignored). Every call has a fresh messageId and a 512-character userId, the
 * costliest shape for Redis. The parent learns, when it stops the flood, every status and error
 * code answered and which bodies were acknowledged.
 */
import path from 'node:path';
import { IpcClient, startChild } from '@eventrelay/testkit';
import { messageIdOf } from './payloads.js';

export interface FloodOptions {
  readonly url: string;
  readonly writeKey: string;
  /** messageIds are messageIdOf(tag, counter, i), as the load generator's own (payloads.ts). */
  readonly tag: string;
  readonly calls: number;
  readonly connections: number;
}

export interface FloodResult {
  readonly requests: number;
  /** Answers by status and error code, e.g. "200", "429 rate_limited", "429 source_over_budget". */
  readonly answers: Readonly<Record<string, number>>;
  /** The counters of the bodies answered 2xx: their calls were acknowledged. */
  readonly acked: readonly number[];
  readonly transportErrors: number;
}

const USER_ID_LENGTH = 512;

/**
 * The flood's bodies: body `counter` holds `calls` track calls, each with a fresh messageId and a
 * unique 512-character userId. Built from a template split at the counter's slots, so that the
 * flood's own CPU goes to sending (it shares the machine with the system it floods).
 */
export function floodBodies(tag: string, calls: number): (counter: number) => string {
  const [ID, PADDED] = ['@@N@@', '@@P@@'];
  const batch = Array.from({ length: calls }, (_, i) => ({
    type: 'track',
    event: 'Flood',
    messageId: messageIdOf(tag, ID, i),
    // The counter in a fixed width of 10 digits, so every userId is USER_ID_LENGTH long.
    userId: `${PADDED}-${i}-`.padEnd(USER_ID_LENGTH - 10 + PADDED.length, 'u'),
  }));
  const pieces = JSON.stringify({ batch }).split(/(@@N@@|@@P@@)/);
  return (counter) => {
    const id = String(counter);
    const padded = id.padStart(10, '0');
    return pieces.map((p) => (p === ID ? id : p === PADDED ? padded : p)).join('');
  };
}

/**
 * Starts the flood's process (its start-up is not in anyone's window); `go` starts flooding, `stop`
 * ends it and answers what it did.
 */
export async function startFlood(
  o: FloodOptions,
): Promise<{ readonly pid: number | undefined; go(): Promise<void>; stop(): Promise<FloodResult> }> {
  let ipc: IpcClient | undefined;
  let ready = false;
  const handle = await startChild({
    name: 'flood',
    args: ['--import', 'tsx', path.join(__dirname, 'flood-process.ts'), JSON.stringify(o)],
    cwd: path.join(__dirname, '..'),
    ipc: true,
    echo: 'prefixed',
    ready: (h) => {
      ipc ??= new IpcClient(h.child, 'flood', (msg) => void (msg.type === 'ready' && (ready = true)));
      return Promise.resolve(ready);
    },
  });
  return {
    pid: handle.pid,
    go: () => (ipc as IpcClient).call('go'),
    async stop() {
      const result = await (ipc as IpcClient).call<FloodResult>('stop', {}, 60_000);
      await handle.stop();
      return result;
    },
  };
}
