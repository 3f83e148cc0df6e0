/**
 * What webhook-delivery tells operators about a destination (docs/delivery.md, "Operator
 * notifications"): one audit entry (`tokenId` `webhook-delivery`) and one log line per event,
 * and a signed webhook when NOTIFY_WEBHOOK_URL is set. Whatever the event reports has already
 * happened: a failed audit write is logged, never a reason to run a job again.
 */
import type { Logger } from '@eventrelay/runtime';
import type { AuditLog } from '@eventrelay/stores';
import type { OperatorNotifier } from '../adapters/operator-webhook.js';

type OperatorAction =
  | 'destination.breaker_opened'
  | 'destination.breaker_closed'
  | 'destination.auto_disabled'
  | 'destination.url_disabled'
  | 'destination.dead_lettering'
  | 'destination.dead_letters_evicted'
  | 'destination.retry_backlog_capped';

export interface OperatorEvents {
  record(action: OperatorAction, destinationId: string, details: Record<string, unknown>, logEvent: string): Promise<void>;
}

export function createOperatorEvents(deps: {
  readonly audit: Pick<AuditLog, 'record'>;
  readonly notifier: OperatorNotifier;
  readonly logger: Logger;
  readonly clock: () => number;
}): OperatorEvents {
  return {
    async record(action, destinationId, details, logEvent) {
      const at = new Date(deps.clock()).toISOString();
      deps.logger.warn({ destinationId, ...details }, logEvent);
      deps.notifier.notify({ type: action, at, destinationId, details });
      try {
        await deps.audit.record({ at, tokenId: 'webhook-delivery', action, targetId: destinationId, details });
      } catch (err) {
        deps.logger.warn({ destinationId, err: String(err) }, 'audit.write_failed');
      }
    },
  };
}
