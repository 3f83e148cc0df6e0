import { runServiceToExit } from '@eventrelay/testkit';
import { describeWorkerProcess } from '../../../test/support/process-checks';

describeWorkerProcess(
  'webhook-delivery',
  'DELIVERY_METRICS_PORT',
  {
    DELIVERY_TIMEOUT_MS: 'soon',
    RETRY_WINDOW_MS: '0',
    WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0/8, not-a-network, 300.1.1.1/8',
    DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION: '0',
  },
  [
    'DELIVERY_TIMEOUT_MS',
    'RETRY_WINDOW_MS',
    'WEBHOOK_ALLOWED_NETWORKS',
    'not-a-network',
    '300.1.1.1/8',
    'DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION',
  ],
);

describe('the webhook-delivery process, CA file', () => {
  it('refuses to start when WEBHOOK_CA_FILE cannot be read or holds no certificate', async () => {
    const missing = await runServiceToExit('webhook-delivery', { WEBHOOK_CA_FILE: '/nonexistent/ca.pem' });
    expect(missing.code).toBe(1);
    expect(missing.output).toContain('WEBHOOK_CA_FILE');
    const notPem = await runServiceToExit('webhook-delivery', { WEBHOOK_CA_FILE: __filename });
    expect(notPem.code).toBe(1);
    expect(notPem.output).toMatch(/WEBHOOK_CA_FILE: .* holds no PEM certificate/);
  });
});
