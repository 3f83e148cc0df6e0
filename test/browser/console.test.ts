/**
 * The web console in a real headless Chromium against the real built services and Redis: sign in
 * (and a wrong token refused), create a source (its write key shown once), set up a Webhooks
 * destination with two URLs and headers (a bad URL's error shown next to it, fixed, saved),
 * enable it, test send and see the attempt, then send calls with @segment/analytics-node and
 * watch them in the live debugger, the delivery log and at the receivers; make the receivers
 * refuse, see the dead letters, replay them in bulk once they recover and watch them delivered;
 * and find it all counted in the Overview's charts; then change a delivery setting and rotate the
 * shared secret with an overlap; then preview a new destination's drop filter and mapping before
 * saving it. Locators are by role and label, so they also test the labelling.
 */
import { Analytics } from '@segment/analytics-node';
import type { Browser, Page } from 'playwright-core';
import {
  deletePrefix,
  eventually,
  sleep,
  SHARED_REDIS_URL,
  startReceiver,
  startStack,
  uniquePrefix,
  type ReceivedRequest,
  type Receiver,
} from '@eventrelay/testkit';
import { LAPTOP, assertConsoleBuilt, launchChromium, screenshot } from './browser';

const TOKEN = 'browser-admin-token-0123456789';
// Browser steps wait for the pipeline; Playwright's own default is 30 s, too long to learn of a failure.
const STEP_MS = 10_000;
const CONFIG_PROPAGATION_MS = 2_500;
// Waits on the stats: the services flush their counters once a second, the Overview reads every 5 s.
const OVERVIEW_MS = 30_000;
const SECRET = 'whsec_console_browser_0001';
type Reply = ReturnType<Parameters<Receiver['respond']>[0]>;
const ANSWER: Reply = { status: 200, headers: { 'content-type': 'application/json' }, body: '{"received":true}' };
const REFUSAL: Reply = { status: 400, headers: { 'content-type': 'application/json' }, body: '{"error":"unknown plan"}' };

/** axe-core's browser bundle, added to each screen to audit it. */
const AXE_SCRIPT = require.resolve('axe-core/axe.min.js');
interface AxeViolation {
  id: string;
  impact?: string | null;
  /** The first three elements, as CSS selectors. */
  nodes: string[];
}

const messageIdOf = (r: ReceivedRequest): string => String(r.headers['x-eventrelay-message-id']);

describe('web console in Chromium', () => {
  const prefix = uniquePrefix('console-browser');
  let stack: Awaited<ReturnType<typeof startStack>>;
  let browser: Browser;
  let page: Page;
  let hookA: Receiver;
  let hookB: Receiver;
  let consoleUrl: string;
  const pageProblems: string[] = [];

  beforeAll(async () => {
    assertConsoleBuilt();
    // Both check every X-Signature against the destination's shared secret.
    [hookA, hookB] = await Promise.all([
      startReceiver({ secret: SECRET, responder: () => ANSWER }),
      startReceiver({ secret: SECRET, responder: () => ANSWER }),
    ]);
    stack = await startStack({
      redisUrl: SHARED_REDIS_URL,
      prefix,
      adminToken: TOKEN,
      services: ['webhook-delivery', 'router', 'admin', 'ingest'],
      // Ingest flushes what it accepted at once, so the debugger and the receivers see calls quickly.
      env: { LOG_LEVEL: 'warn' },
    });
    consoleUrl = `${stack.url('admin')}/console/`;
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: LAPTOP });
    context.setDefaultTimeout(STEP_MS);
    page = await context.newPage();
    // A CSP violation or an uncaught error in the page fails the run (checked by the last test).
    page.on('console', (m) => void (m.type() === 'error' && pageProblems.push(m.text())));
    page.on('pageerror', (err) => void pageProblems.push(err.message));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    await Promise.all([hookA?.close(), hookB?.close()]);
    await deletePrefix(SHARED_REDIS_URL, prefix);
  });

  const heading = (name: string) => page.getByRole('heading', { level: 1, name });

  it('refuses a wrong token with a clear message', async () => {
    await page.goto(consoleUrl);
    await page.getByLabel('Admin token').fill('not-the-token-0123456789');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'That token was refused' }).waitFor();
    await screenshot(page, 'sign-in-refused');
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
  });

  it('signs in with the admin token and shows the overview', async () => {
    await page.getByLabel('Admin token').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading('Overview').waitFor();
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents()).toEqual([
      'Overview',
      'Sources',
      'Destinations',
      'Audiences',
      'Regulations',
      'Audit log',
    ]);
  });

  let writeKey = '';

  it('creates a source and shows its write key once', async () => {
    await page.getByRole('link', { name: 'Sources' }).click();
    await heading('Sources').waitFor();
    await page.getByLabel('Name').fill('Web shop');
    await page.getByRole('button', { name: 'Create source' }).click();
    const key = page.getByLabel('Write key');
    await key.waitFor();
    writeKey = (await key.textContent()) ?? '';
    expect(writeKey).toMatch(/^wk_[A-Za-z0-9_-]{20,}$/);
    await page.getByRole('link', { name: 'Web shop', exact: true }).waitFor();
    // The list itself never shows keys.
    expect(await page.getByRole('table').textContent()).not.toContain(writeKey);
    await screenshot(page, 'sources');
  });

  it('sets up a Webhooks destination with two URLs and headers, showing the bad URL’s error next to it', async () => {
    await page.getByRole('link', { name: 'Destinations' }).click();
    await page.getByRole('link', { name: 'New destination' }).click();
    await heading('New destination').waitFor();
    expect(await page.getByRole('radio', { name: /Webhooks/ }).isChecked()).toBe(true);
    await page.getByRole('checkbox', { name: /Web shop/ }).check();

    await page.getByLabel('URL 1', { exact: true }).fill(`${hookA.url}/a`);
    await page.getByRole('button', { name: 'Add header to URL 1' }).click();
    await page.getByLabel('URL 1 header 1 name').fill('X-Team');
    await page.getByLabel('URL 1 header 1 value').fill('growth');
    await page.getByRole('button', { name: 'Add URL' }).click();
    await page.getByLabel('URL 2', { exact: true }).fill('ftp://not-a-webhook');
    await page.getByRole('button', { name: 'Add header to URL 2' }).click();
    await page.getByLabel('URL 2 header 1 name').fill('Authorization');
    await page.getByLabel('URL 2 header 1 value').fill('Bearer receiver-b-0001');
    await page.getByLabel('Shared secret').fill(SECRET);
    await page.getByRole('button', { name: 'Save destination' }).click();

    const url2 = page.getByLabel('URL 2', { exact: true });
    await eventually(async () => expect(await url2.getAttribute('aria-invalid')).toBe('true'), STEP_MS);
    const errorId = await url2.getAttribute('aria-describedby');
    const message = await page.locator(`[id="${errorId}"]`).textContent();
    expect(message).toMatch(/must match|http/);
    expect(await page.getByLabel('URL 1', { exact: true }).getAttribute('aria-invalid')).toBeNull();
    // The keyboard lands on the field to fix.
    await eventually(async () => expect(await url2.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true), STEP_MS);
    await screenshot(page, 'destination-form-error');

    await url2.fill(`${hookB.url}/b`);
    await page.getByRole('button', { name: 'Save destination' }).click();
    await page.getByRole('heading', { level: 1, name: /Webhooks dst_/ }).waitFor();
  });

  it('enables the destination', async () => {
    await page.getByRole('status').filter({ hasText: 'Nothing is delivered while it is disabled' }).waitFor();
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('status').filter({ hasText: 'Calls from its sources are delivered' }).waitFor();
    await page.getByRole('button', { name: 'Disable' }).waitFor();
  });

  it('test sends one call of a chosen type and shows its attempt when it lands', async () => {
    // A change made through the API reaches every process within 2 s (docs/spec.md §6): a call
    // sent sooner may find the router still without the newly enabled route.
    await sleep(CONFIG_PROPAGATION_MS);
    await page.getByLabel('Call type').selectOption('identify');
    await page.getByRole('button', { name: 'Send test call' }).click();
    const result = page.getByLabel('Test send result');
    await result.waitFor({ timeout: 20_000 });

    const messageId = (await result.getByRole('link', { name: /^test-/ }).textContent()) ?? '';
    const text = (await result.textContent()) ?? '';
    expect(text).toContain('Outcomesuccess HTTP 200');
    expect(text).toMatch(/Latency\d+ ms/);
    expect(text).toContain('Response{"received":true}');
    // One attempt per URL; both carry the same body, so the same signature.
    expect(
      await result
        .getByRole('definition')
        .filter({ hasText: /^http:\/\/127\.0\.0\.1:\d+\/hook\/[ab]$/ })
        .count(),
    ).toBe(2);
    const signature =
      (await result
        .getByText(/^[0-9a-f]{40}$/)
        .first()
        .textContent()) ?? '';

    // The attempt shown is one the receivers really got: an identify whose signature verified.
    const got = [...hookA.requests, ...hookB.requests].filter((r) => messageIdOf(r) === messageId);
    expect(got).toHaveLength(2);
    expect(got.map((r) => (JSON.parse(r.body.toString('utf8')) as { type: string }).type)).toEqual(['identify', 'identify']);
    expect(got.every((r) => r.signatureValid === true)).toBe(true);
    expect(got.map((r) => r.headers['x-signature'])).toContain(signature);
    await screenshot(page, 'destination');
  });

  it('shows calls sent with @segment/analytics-node in the live debugger, and they reach both URLs', async () => {
    await page.getByRole('link', { name: 'Sources' }).click();
    await page.getByRole('link', { name: 'Live debugger of Web shop' }).click();
    await heading('Live events').waitFor();

    const analytics = new Analytics({ writeKey, host: stack.url('ingest'), flushAt: 1, maxRetries: 0 });
    analytics.identify({ userId: 'browser-user', traits: { plan: 'pro' } });
    analytics.track({ userId: 'browser-user', event: 'Console Tested', properties: { step: 6 } });
    await analytics.closeAndFlush({ timeout: STEP_MS });

    const events = page.getByRole('list', { name: 'Calls, newest first' });
    await events.getByRole('button', { name: /track Console Tested/ }).waitFor();
    await events.getByRole('button', { name: /identify browser-user/ }).waitFor();
    await events.getByRole('button', { name: /track Console Tested/ }).click();
    const json = await page.getByLabel('The call as JSON').textContent();
    expect(JSON.parse(json ?? '{}')).toMatchObject({
      outcome: 'accepted',
      call: { type: 'track', event: 'Console Tested', userId: 'browser-user' },
    });
    await screenshot(page, 'debugger');

    // Each receiver has the test send and the two calls.
    const [a, b] = await Promise.all([hookA.waitFor(3, STEP_MS), hookB.waitFor(3, STEP_MS)]);
    expect(a.map((r) => r.headers['x-team'])).toEqual(['growth', 'growth', 'growth']);
    expect(b.map((r) => r.headers['authorization'])).toEqual(Array(3).fill('Bearer receiver-b-0001'));
  });

  it('pauses the debugger', async () => {
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByRole('status').filter({ hasText: 'Paused.' }).waitFor();
    await page.getByRole('button', { name: 'Resume' }).waitFor();
  });

  it('shows the attempts in the delivery log and filters them by outcome in the URL', async () => {
    await page.getByRole('link', { name: 'Destinations' }).click();
    await page.getByRole('link', { name: 'Deliveries' }).click();
    await heading('Delivery log').waitFor();
    // The test send and the two calls, each at both URLs.
    await page.getByRole('status').filter({ hasText: '6 attempts on this page' }).waitFor();
    await page.getByLabel('Outcome').selectOption('failed');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('status').filter({ hasText: '0 attempts on this page' }).waitFor();
    expect(page.url()).toContain('deliveries?status=failed');
    await page.getByLabel('Outcome').selectOption('');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('status').filter({ hasText: '6 attempts on this page' }).waitFor();

    // An attempt opens to the request as sent (static header values hidden) and the answer.
    const row = page
      .getByRole('button', { name: /success HTTP 200/ })
      .filter({ hasText: `${hookA.url}/a` })
      .first();
    await row.click();
    expect(await row.getAttribute('aria-expanded')).toBe('true');
    const headers = JSON.parse((await page.getByLabel('Request headers').textContent()) ?? '{}') as Record<string, string>;
    expect(headers).toMatchObject({ 'x-team': '[write-only]', 'x-signature': expect.stringMatching(/^[0-9a-f]{40}$/) });
    expect(JSON.parse((await page.getByLabel('Request body').textContent()) ?? '{}')).toMatchObject({ type: expect.any(String) });
    expect(await page.getByLabel('Response body').textContent()).toBe('{"received":true}');
    await screenshot(page, 'deliveries');
  });

  let refused: string[] = [];

  it('lists the calls a refusing receiver dead-lettered, with their last error, reached from the Overview', async () => {
    hookA.respond(() => REFUSAL);
    hookB.respond(() => REFUSAL);
    const before = hookA.requests.length;
    const analytics = new Analytics({ writeKey, host: stack.url('ingest'), flushAt: 1, maxRetries: 0 });
    for (const orderId of ['o-1', 'o-2', 'o-3'])
      analytics.track({ userId: 'browser-user', event: 'Checkout Failed', properties: { orderId } });
    analytics.track({ userId: 'browser-user', event: 'Refund Failed', properties: { orderId: 'o-0' } });
    await analytics.closeAndFlush({ timeout: STEP_MS });
    // A 400 is final: each call is dead-lettered after its first round.
    refused = (await hookA.waitFor(before + 4, STEP_MS)).slice(before).map(messageIdOf);
    expect(new Set(refused).size).toBe(4);

    // The on-call path: the Overview shows the destination's dead letters, one click away.
    await page.getByRole('link', { name: 'Overview' }).click();
    await heading('Overview').waitFor();
    await page.getByRole('link', { name: '4 dead-lettered: open the dead letters' }).click({ timeout: OVERVIEW_MS });
    await heading('Dead letters').waitFor();
    const rows = page.getByRole('checkbox', { name: /^Select (?!every)/ });
    // The stats may count a round a moment before its dead letters are written: look again then.
    await eventually(async () => {
      if ((await rows.count()) < 4) await page.reload();
      await page.getByRole('checkbox', { name: `Select ${refused[0]}` }).waitFor({ timeout: 2_000 });
      expect(await rows.count()).toBe(4);
    }, STEP_MS);
    for (const m of refused) {
      const row = page.getByRole('row').filter({ has: page.getByRole('checkbox', { name: `Select ${m}` }) });
      expect(await row.getByRole('cell').nth(2).textContent()).toMatch(/400/);
    }
  }, 60_000);

  it('replays dead letters in bulk once the receivers recover, and shows them delivered', async () => {
    hookA.respond(() => ANSWER);
    hookB.respond(() => ANSWER);
    const beforeA = hookA.requests.length;
    const beforeB = hookB.requests.length;
    const [checkouts, refund] = [refused.slice(0, 3), refused[3]!];

    // Every one on the page selected, then one left out: three replayed together.
    await page.getByRole('checkbox', { name: 'Select every dead letter on this page' }).check();
    await page.getByRole('checkbox', { name: `Select ${refund}` }).uncheck();
    await page.getByRole('button', { name: 'Replay selected (3)' }).click();
    await page.getByRole('status').filter({ hasText: 'Replaying 3 selected dead letters.' }).waitFor();
    await page.getByRole('status').filter({ hasText: '3 delivered, 0 dead-lettered again, 0 pending of 3.' }).waitFor({ timeout: 20_000 });
    expect(await page.getByRole('progressbar', { name: 'Replay progress' }).getAttribute('value')).toBe('3');
    // The one left out is still listed, with its error.
    await eventually(async () => expect(await page.getByRole('checkbox', { name: /^Select (?!every)/ }).count()).toBe(1), STEP_MS);
    await page.getByRole('checkbox', { name: `Select ${refund}` }).waitFor();
    await screenshot(page, 'dead-letters');

    // The rest by a filter: everything that matches, not only what the page shows.
    await page.getByLabel('Search').fill('Refund');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    expect(page.url()).toContain('dead-letters?q=Refund');
    await page.getByRole('button', { name: 'Replay all matching the filter' }).click();
    await page.getByRole('status').filter({ hasText: '1 delivered, 0 dead-lettered again, 0 pending of 1.' }).waitFor({ timeout: 20_000 });
    await page.getByText('No dead letters match the filter.').waitFor();

    // Both receivers got all four again, and answered 200 this time.
    const [a, b] = await Promise.all([hookA.waitFor(beforeA + 4, STEP_MS), hookB.waitFor(beforeB + 4, STEP_MS)]);
    expect(a.slice(beforeA).map(messageIdOf).sort()).toEqual([...checkouts, refund].sort());
    expect(b.slice(beforeB).map(messageIdOf).sort()).toEqual([...checkouts, refund].sort());
  }, 60_000);

  it('counts it all in the Overview: the destination’s outcomes and the source’s calls, drawn as charts', async () => {
    await page.getByRole('link', { name: 'Overview' }).click();
    await heading('Overview').waitFor();
    const card = page.getByRole('article', { name: /Webhooks dst_/ });
    // Delivered: the test send, the two calls and the four replayed; dead-lettered: the four refused.
    // Accepted at intake: the six calls sent with the SDK (a test send starts past intake).
    await card
      .getByRole('img', { name: 'Outcomes per minute: 7 delivered, 0 retrying, 4 dead-lettered' })
      .waitFor({ timeout: OVERVIEW_MS });
    await page.getByRole('img', { name: 'Web shop: calls: 6 accepted, 0 rejected' }).waitFor({ timeout: OVERVIEW_MS });
    const source = page.getByRole('row', { name: /Web shop/ });
    expect(await source.getByRole('cell').nth(2).textContent()).toBe('6');

    // uPlot drew each series on its canvas: the delivered (green) and dead-lettered (red) lines.
    const colours = await card.getByRole('img', { name: /^Outcomes per minute/ }).evaluate((el) => {
      const canvas = el.querySelector('canvas')!;
      const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
      let green = 0;
      let red = 0;
      for (let i = 0; i < data.length; i += 4) {
        const [r, g, b, alpha] = [data[i]!, data[i + 1]!, data[i + 2]!, data[i + 3]!];
        if (alpha > 200 && g > 100 && r < 80 && b < 100) green++;
        if (alpha > 200 && r > 180 && g < 80 && b < 80) red++;
      }
      return { green, red };
    });
    expect(colours.green).toBeGreaterThan(0);
    expect(colours.red).toBeGreaterThan(0);
    expect(await page.locator('figure.chart canvas').count()).toBe(4);
    await screenshot(page, 'overview', { fullPage: true });
  }, 60_000);

  it('changes a delivery setting, refusing one out of bounds, and rotates the shared secret, showing the new one once', async () => {
    await page.getByRole('link', { name: 'Destinations' }).click();
    await page.getByRole('link', { name: /Webhooks dst_/ }).click();
    const title = page.getByRole('heading', { level: 1, name: /Webhooks dst_/ });
    const id = /dst_[A-Za-z0-9_-]+/.exec((await title.textContent()) ?? '')![0];
    const stored = async () => {
      const res = await fetch(`${stack.url('admin')}/admin/v1/destinations/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      return ((await res.json()) as { settings: Record<string, unknown> }).settings;
    };

    // 45 s is past the schema's 30 s: the message shows next to the field, and nothing is sent.
    const timeout = page.getByLabel('Request timeout (seconds)');
    await timeout.fill('45');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await eventually(async () => expect(await timeout.getAttribute('aria-invalid')).toBe('true'), STEP_MS);
    const errorId = (await timeout.getAttribute('aria-describedby'))!.split(' ')[0];
    expect(await page.locator(`[id="${errorId}"]`).textContent()).toBe('enter a number between 1 second and 30 seconds');

    await timeout.fill('2.5');
    await page.getByLabel('Retry window unit').selectOption('minutes');
    await page.getByLabel('Retry window', { exact: true }).fill('90');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await eventually(async () => expect(await stored()).toMatchObject({ timeoutMs: 2_500, retryWindowMs: 5_400_000 }), STEP_MS);
    // The form, read again, shows what was stored in the units typed.
    await eventually(async () => expect(await page.getByLabel('Retry window', { exact: true }).inputValue()).toBe('90'), STEP_MS);
    expect(await page.getByLabel('Retry window unit').inputValue()).toBe('minutes');

    await page.getByLabel('Overlap').selectOption('1h');
    const before = Date.now();
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const secret = (await page.getByLabel('New shared secret').textContent()) ?? '';
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
    await page.getByRole('status').filter({ hasText: 'The previous secret stops signing at' }).waitFor();
    // The reload shows the overlap: the old secret (…0001) signs for an hour more, the new one's hint.
    await page.getByText(/The previous secret \(…0001\) still signs next to it until/).waitFor();
    const settings = await stored();
    expect(settings['sharedSecret']).toEqual({ set: true, last4: secret.slice(-4) });
    const previous = settings['previousSecret'] as { last4: string; expiresAt: string };
    expect(previous.last4).toBe('0001');
    expect(Date.parse(previous.expiresAt) - before).toBeGreaterThan(3_500_000);
    expect(Date.parse(previous.expiresAt) - before).toBeLessThanOrEqual(3_600_000 + STEP_MS);
    await screenshot(page, 'destination-secret-rotated');
  });

  it('lists the changes in the audit log', async () => {
    await page.getByRole('link', { name: 'Audit log' }).click();
    await heading('Audit log').waitFor();
    for (const action of ['source.create', 'destination.create', 'destination.update', 'destination.test_send', 'destination.replay'])
      await page.getByRole('cell', { name: action, exact: true }).first().waitFor();
    await screenshot(page, 'audit');
  });

  it('fits a phone screen: no sideways scrolling on the destination page', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('link', { name: 'Destinations' }).click();
    await page.getByRole('link', { name: /Webhooks dst_/ }).click();
    await page.getByRole('button', { name: 'Disable' }).waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    await screenshot(page, 'destination-phone');
    await page.setViewportSize(LAPTOP);
  });

  it('has no serious or critical accessibility problem on any screen (axe-core, WCAG 2 A and AA)', async () => {
    const admin = async <T>(path: string): Promise<T> => {
      const res = await fetch(`${stack.url('admin')}/admin/v1${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      return (await res.json()) as T;
    };
    const [source] = await admin<{ id: string }[]>('/sources');
    const [destination] = await admin<{ id: string }[]>('/destinations');
    // A context of its own that lets axe's script in past the CSP; the main page keeps the policy.
    const context = await browser.newContext({ viewport: LAPTOP, bypassCSP: true });
    context.setDefaultTimeout(STEP_MS);
    await context.addInitScript({ content: `sessionStorage.setItem('eventrelay.console.token', ${JSON.stringify(TOKEN)})` });
    const audit = await context.newPage();
    const screens: [string, string][] = [
      ['', 'Overview'],
      ['sources', 'Sources'],
      [`sources/${source!.id}`, 'Web shop'],
      [`sources/${source!.id}/debugger`, 'Live events'],
      ['destinations', 'Destinations'],
      ['destinations/new', 'New destination'],
      [`destinations/${destination!.id}`, 'Webhooks'],
      [`destinations/${destination!.id}/deliveries`, 'Delivery log'],
      [`destinations/${destination!.id}/dead-letters`, 'Dead letters'],
      ['audiences', 'Audiences'],
      ['regulations', 'Regulations'],
      ['audit', 'Audit log'],
    ];
    const problems: string[] = [];
    for (const [route, title] of screens) {
      await audit.goto(`${consoleUrl}#/${route}`);
      await audit.getByRole('heading', { level: 1, name: title }).waitFor();
      await audit.waitForLoadState('networkidle');
      await audit.addScriptTag({ path: AXE_SCRIPT });
      // A string, as the page runs it: this project's test code is typed without the DOM.
      const violations = await audit.evaluate<AxeViolation[]>(`axe
        .run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })
        .then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) })))`);
      for (const v of violations)
        if (v.impact === 'serious' || v.impact === 'critical') problems.push(`#/${route}: ${v.id} (${v.impact}) at ${v.nodes.join(', ')}`);
    }
    await context.close();
    expect(problems).toEqual([]);
  }, 60_000);

  // Last but one: the screens above, and their audit, expect a single destination.
  it('previews a drop filter and a mapping before saving them, and saves both', async () => {
    const FILTERS = [{ name: 'no tests', drop: { field: { path: 'properties.test', equals: true } } }];
    const MAPPING = {
      event: { '@path': 'event' },
      order: { '@template': 'Order {{properties.orderId}}' },
      total: { '@path': 'properties.total' },
    };
    const call = (test: boolean) =>
      JSON.stringify({ type: 'track', event: 'Order Completed', userId: 'u-1', properties: { orderId: 'o-7', total: 30, test } });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Destinations' }).click();
    await page.getByRole('link', { name: 'New destination' }).click();
    await heading('New destination').waitFor();
    await page.getByLabel('URL 1', { exact: true }).fill(`${hookA.url}/shaped`);

    // JSON that does not parse is shown next to its editor, and nothing is sent.
    const filters = page.getByLabel('Filters', { exact: true });
    await filters.fill('[{"drop": ');
    const preview = page.getByRole('button', { name: 'Preview', exact: true });
    await preview.click();
    await eventually(async () => expect(await filters.getAttribute('aria-invalid')).toBe('true'), STEP_MS);
    const errorId = (await filters.getAttribute('aria-describedby'))!.split(' ')[0];
    expect(await page.locator(`[id="${errorId}"]`).textContent()).toMatch(/^not valid JSON/);

    await filters.fill(JSON.stringify(FILTERS));
    await page.getByLabel('Mapping', { exact: true }).fill(JSON.stringify(MAPPING));
    const sample = page.getByLabel('Sample call');
    const result = page.getByRole('region', { name: 'Preview result' });
    await sample.fill(call(true));
    await preview.click();
    await result.getByText('Not sent: rule 1 (no tests) — drop', { exact: true }).waitFor();
    expect(await result.getByRole('region', { name: /^Request / }).count()).toBe(0);

    await sample.fill(call(false));
    await preview.click();
    await result.getByText('Sent', { exact: true }).waitFor();
    // The exact bytes the mapping renders: its keys in the template's order, no spaces.
    expect(await page.getByLabel('Request 1 body', { exact: true }).textContent()).toBe(
      '{"event":"Order Completed","order":"Order o-7","total":30}',
    );
    expect(await page.getByLabel('Request 1 headers').textContent()).toContain('content-type: application/json');
    expect(await result.getByText(`${hookA.url}/shaped`).count()).toBe(1);

    await page.getByRole('button', { name: 'Save destination' }).click();
    const title = page.getByRole('heading', { level: 1, name: /Webhooks dst_/ });
    await title.waitFor();
    const id = /dst_[A-Za-z0-9_-]+/.exec((await title.textContent()) ?? '')![0];
    const res = await fetch(`${stack.url('admin')}/admin/v1/destinations/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const stored = (await res.json()) as { filters?: unknown; settings: { mapping?: unknown; batching?: unknown } };
    expect(stored.filters).toEqual(FILTERS);
    expect(stored.settings.mapping).toEqual(MAPPING);
    expect(stored.settings.batching).toBeUndefined();
    // The settings form, read again, shows what was stored.
    expect(JSON.parse(await page.getByLabel('Filters', { exact: true }).inputValue())).toEqual(FILTERS);
    expect(JSON.parse(await page.getByLabel('Mapping', { exact: true }).inputValue())).toEqual(MAPPING);
  });

  it('ran without a CSP violation or an error in the page', () => {
    // Answers the flows provoke on purpose (401 for the wrong token, 400 for the bad URL, 404 from
    // an endpoint this build may lack) are logged by Chromium as failed loads; anything else is not expected.
    expect(pageProblems.filter((p) => !p.startsWith('Failed to load resource: the server responded with a status of'))).toEqual([]);
    expect(pageProblems.some((p) => /Content Security Policy/i.test(p))).toBe(false);
  });
});
