import { describeWorkerProcess } from '../../../test/support/process-checks';

describeWorkerProcess(
  'router',
  'ROUTER_METRICS_PORT',
  { ROUTER_METRICS_PORT: 'ninety', ROUTER_CONCURRENCY: '0', ROUTER_FEED_PROFILES: 'maybe', EVENTRELAY_PREFIX: 'a:b' },
  ['ROUTER_METRICS_PORT', 'ROUTER_CONCURRENCY', 'ROUTER_FEED_PROFILES', 'EVENTRELAY_PREFIX'],
);
