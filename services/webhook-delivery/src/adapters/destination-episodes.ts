/**
 * Marks in Redis that make an operator event happen once per episode across every
 * webhook-delivery process (each process has its own breaker): on the destination's deliver shard,
 * so they share its slot on a cluster.
 * - `breaker-open:<id>`: set by the first process whose breaker opens (its value: when), taken
 *   away by the first whose breaker closes; 7 days at most, in case no process closes it.
 * - `dead-noting:<id>`: the destination dead-lettered calls in the last hour.
 */
import type { Keyspace } from '@eventrelay/config';
import type { RedisClient } from '@eventrelay/runtime';

const BREAKER_MARK_S = 7 * 86_400;
const DEAD_NOTING_S = 3600;

export class DestinationEpisodes {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keyspace,
  ) {}

  /** True when this began the episode of an open breaker (no other process had marked it). */
  async breakerOpened(destinationId: string, at: number): Promise<boolean> {
    return (await this.redis.set(this.key('breaker-open', destinationId), String(at), 'EX', BREAKER_MARK_S, 'NX')) === 'OK';
  }

  /** When the episode began, if this ended it (the first process to close its breaker). */
  async breakerClosed(destinationId: string): Promise<number | undefined> {
    const began = await this.redis.getdel(this.key('breaker-open', destinationId));
    return began === null ? undefined : Number(began);
  }

  /** True when the destination had dead-lettered nothing in the last hour: an episode begins. */
  async deadLettering(destinationId: string): Promise<boolean> {
    return (await this.redis.set(this.key('dead-noting', destinationId), '1', 'EX', DEAD_NOTING_S, 'NX')) === 'OK';
  }

  private key(kind: string, destinationId: string): string {
    return `${this.keys.destinationPrefix(destinationId)}:${kind}:${destinationId}`;
  }
}
