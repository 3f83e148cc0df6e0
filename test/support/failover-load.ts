/**
 * What the Redis failover and cluster tests share: a steady load of /v1/batch requests (ten track
 * calls each, one request at a time with a pause between) that counts the answers and every call
 * answered 200, and how a test explains a failure (what each process said last).
 */
import { sleep } from '@eventrelay/testkit';

export interface BatchLoad {
  /** messageIds of the calls in requests answered 200. */
  readonly acknowledged: Set<string>;
  /** Requests by HTTP status (0: the connection failed). */
  readonly answers: Record<number, number>;
  /** Requests answered 200 since `markKill`. */
  servedAfterKill(): number;
  /** Notes now as the moment Redis was killed. */
  markKill(): void;
  /** Stops sending once the request in flight is answered. */
  stop(): Promise<void>;
}

export function startBatchLoad(
  ingestUrl: string,
  options: { readonly writeKeyOf: (request: number) => string; readonly messageIdPrefix: string; readonly pauseMs: number },
): BatchLoad {
  const acknowledged = new Set<string>();
  const answers: Record<number, number> = {};
  let sent = 0;
  let running = true;
  let killedAt = Infinity;
  let servedAfterKill = 0;
  const loop = (async () => {
    while (running) {
      const writeKey = options.writeKeyOf(sent);
      const batch = Array.from({ length: 10 }, (_, i) => ({
        type: 'track',
        userId: `u-${sent}`,
        event: 'Failover Tested',
        messageId: `${options.messageIdPrefix}-${sent}-${i}`,
      }));
      sent++;
      const status = await fetch(`${ingestUrl}/v1/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}` },
        body: JSON.stringify({ batch }),
      }).then(
        (res) => res.status,
        () => 0,
      );
      answers[status] = (answers[status] ?? 0) + 1;
      if (status === 200) {
        for (const c of batch) acknowledged.add(c.messageId);
        if (Date.now() > killedAt) servedAfterKill++;
      }
      await sleep(options.pauseMs);
    }
  })();
  return {
    acknowledged,
    answers,
    servedAfterKill: () => servedAfterKill,
    markKill: () => void (killedAt = Date.now()),
    async stop() {
      running = false;
      await loop;
    },
  };
}

/** For `.catch` after a wait: prints what each process said last, then rethrows. */
export function explainWith(processes: () => readonly { service: string; output(): string }[], chars: number): (err: unknown) => never {
  return (err) => {
    console.log(
      processes()
        .map((p) => `${p.service}:\n${p.output().slice(-chars)}`)
        .join('\n\n'),
    );
    throw err;
  };
}
