import { describeWorkerProcess } from '../../../test/support/process-checks';

describeWorkerProcess(
  'audiences',
  'AUDIENCES_METRICS_PORT',
  { AUDIENCES_METRICS_PORT: 'ninety', AUDIENCES_SYNC_INTERVAL_MS: '5', PROFILE_DAYS_KEPT: '30', AUDIENCES_PAGE_SIZE: 'many' },
  ['AUDIENCES_METRICS_PORT', 'AUDIENCES_SYNC_INTERVAL_MS', 'PROFILE_DAYS_KEPT', 'AUDIENCES_PAGE_SIZE'],
);
