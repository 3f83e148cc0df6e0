/**
 * What webhook-delivery itself changes in the config: a URL that answered 410 Gone is disabled,
 * and a destination whose breaker stayed open for its `autoDisableAfterMs` is disabled. Each is one
 * config write that every process picks up at its next reload; the operator events (audit entry,
 * notification) are written by the caller once the write landed.
 */
import type { ConfigStore } from '@eventrelay/stores';

export interface DestinationSwitches {
  /** True when this call disabled the URL (false: already disabled, removed, or the destination is gone). */
  disableUrl(destinationId: string, url: string, reason: string): Promise<boolean>;
  /** True when this call disabled the destination. */
  disableDestination(destinationId: string): Promise<boolean>;
}

export function createDestinationSwitches(store: Pick<ConfigStore, 'update'>): DestinationSwitches {
  return {
    disableUrl: (destinationId, url, reason) =>
      store.update((snapshot) => {
        const destination = snapshot.destinations.get(destinationId);
        const target = destination?.settings.webhooks.find((w) => w.url === url);
        if (!destination || !target || target.disabled) return { changes: [], result: false };
        const webhooks = destination.settings.webhooks.map((w) => (w.url === url ? { ...w, disabled: true, disabledReason: reason } : w));
        return {
          changes: [{ kind: 'put-destination', destination: { ...destination, settings: { ...destination.settings, webhooks } } }],
          result: true,
        };
      }),
    disableDestination: (destinationId) =>
      store.update((snapshot) => {
        const destination = snapshot.destinations.get(destinationId);
        if (!destination?.enabled) return { changes: [], result: false };
        return { changes: [{ kind: 'put-destination', destination: { ...destination, enabled: false } }], result: true };
      }),
  };
}
