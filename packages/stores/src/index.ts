// The data the services share through Redis: the config store and its watchers, the call batches
// between intake and delivery, the attempt log and dead letters, the operator logs, the profile
// keys and regulations, the per-minute stats counters. Connections and the rest of the plumbing
// are in @eventrelay/runtime.
export { ConfigStore, applyConfigFile, configKeys, readConfigFile } from './config-store.js';
export { ConfigWatch } from './config-watch.js';
export { DestinationDirectory } from './destination-directory.js';
export { CallBatches } from './call-batches.js';
export { CLAIM_OVERHEAD_BYTES } from './claim-budget.js';
export { AttemptLog, DeadLetterStore, RetryBacklog, isDeadLetterCursor } from './delivery-records.js';
export { AuditLog, SourceEvents } from './operator-logs.js';
export { profileId, profileKeys } from './profile-keys.js';
export { RegulationStore } from './regulation-store.js';
export { purgeUserDeadLetters } from './user-purge.js';
export { ErasureTombstones } from './erasures.js';
export { ShardCounts } from './shard-counts.js';
export { DeletionReceipts, type NoticeOutcome } from './deletion-receipts.js';
export { StatsCounters } from './stats-counters.js';
export { ReplayProgressStore, type ReplayOutcome } from './replay-progress.js';
