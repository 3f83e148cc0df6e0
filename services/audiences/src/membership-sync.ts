/**
 * Evaluates users against audiences and delivers what changed: the one path shared by calls as
 * they arrive, backfills and the periodic sync. Evaluation is pure (domain/); the commit is the
 * membership store's compare-and-set; then the identify calls are queued and the outbox cleared.
 */
import { randomUUID } from 'node:crypto';
import type { Audience, Destination } from '@eventrelay/config';
import { desiredMembership, membershipDeliveries, type Transition } from './domain/membership.js';
import { parseProfile } from './domain/profile.js';
import type { DeliveryQueue } from './adapters/delivery-queue.js';
import type { MembershipStore } from './adapters/membership-store.js';
import type { ProfileStore } from './adapters/profile-store.js';

export interface MembershipSyncDeps {
  readonly membership: Pick<MembershipStore, 'commit' | 'clear'>;
  readonly profiles: Pick<ProfileStore, 'read'>;
  readonly deliveries: Pick<DeliveryQueue, 'enqueue'>;
  readonly config: { audience(id: string): Audience | undefined; readonly destinations: ReadonlyMap<string, Destination> };
  readonly clock: () => number;
  readonly newTransitionId?: () => string;
}

/** How often a user whose profile moved during the evaluation is read and evaluated again. */
const MAX_TRIES = 5;

export class MembershipSync {
  private readonly newTransitionId: () => string;

  constructor(private readonly deps: MembershipSyncDeps) {
    this.newTransitionId = deps.newTransitionId ?? randomUUID;
  }

  /**
   * Evaluates each user (with the profile fields already read) against the audiences, commits
   * the changes and queues their calls. Returns the changes.
   */
  async settle(
    users: readonly { userId: string; fields: Record<string, string> }[],
    audiences: readonly Audience[],
  ): Promise<Transition[]> {
    if (audiences.length === 0 || users.length === 0) return [];
    const transitions = (await Promise.all(users.map((u) => this.settleOne(u.userId, u.fields, audiences)))).flat();
    await this.deliver(transitions);
    return transitions;
  }

  /** Queues the changes' identify calls (to the audience's enabled destinations), then clears the outbox. */
  async deliver(transitions: readonly Transition[]): Promise<void> {
    if (transitions.length === 0) return;
    const { config } = this.deps;
    await this.deps.deliveries.enqueue(
      transitions.flatMap((t) => {
        const audience = config.audience(t.audienceId);
        return audience ? membershipDeliveries(audience, t, config.destinations) : [];
      }),
    );
    await this.deps.membership.clear(transitions);
  }

  private async settleOne(userId: string, firstFields: Record<string, string>, audiences: readonly Audience[]): Promise<Transition[]> {
    let fields = firstFields;
    for (let attempt = 1; ; attempt++) {
      const profile = parseProfile(userId, fields);
      if (!profile) return []; // erased meanwhile
      const now = this.deps.clock();
      const proposals = desiredMembership(profile, audiences, now).map((d) => ({ ...d, transitionId: this.newTransitionId() }));
      const committed = await this.deps.membership.commit(userId, profile.version, proposals, now);
      if (committed) return committed;
      // A call moved the profile meanwhile. Its own evaluation covers the audiences of its source
      // only, so these are evaluated again on the newer profile.
      if (attempt >= MAX_TRIES) throw new Error(`audiences: the profile of a user kept changing during ${MAX_TRIES} evaluations`);
      [fields = {}] = await this.deps.profiles.read([userId]);
    }
  }
}
