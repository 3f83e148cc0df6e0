import { describeWorkerProcess } from '../../../test/support/service-process';

describeWorkerProcess(
  'router',
  'ROUTER_METRICS_PORT',
  { ROUTER_METRICS_PORT: 'ninety', ROUTER_CONCURRENCY: '0', ROUTER_DEDUPE_WINDOW_S: '-5', EVENTRELAY_PREFIX: 'a:b' },
  ['ROUTER_METRICS_PORT', 'ROUTER_CONCURRENCY', 'ROUTER_DEDUPE_WINDOW_S', 'EVENTRELAY_PREFIX'],
);
