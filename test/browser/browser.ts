/**
 * Debian's Chromium driven by playwright-core, for the console's browser tests. Playwright starts
 * it with a fresh temporary profile (user-data dir) each time and removes it on close; the flags
 * keep it quiet and offline apart from the pages under test.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM_FLAGS, CHROMIUM_PATH, REPO_ROOT } from '@eventrelay/testkit';

export const LAPTOP = { width: 1280, height: 800 } as const;

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH))
    throw new Error(`${CHROMIUM_PATH} is missing: install Debian's chromium package (apt-get install chromium)`);
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: [...CHROMIUM_FLAGS] });
}

/** The console must have been built (`pnpm build` builds it with the services). */
export function assertConsoleBuilt(): void {
  const index = path.join(REPO_ROOT, 'packages', 'console', 'dist', 'index.html');
  if (!existsSync(index)) throw new Error(`${index} is missing: run \`pnpm build\` first (it builds the console with vite)`);
}

/** docs/console/ with CONSOLE_SCREENSHOTS=1 (the README shows them), else under .eventrelay/. */
const SCREENSHOT_DIR =
  process.env['CONSOLE_SCREENSHOTS'] === '1'
    ? path.join(REPO_ROOT, 'docs', 'console')
    : path.join(REPO_ROOT, '.eventrelay', 'console-screenshots');

/** The viewport, or with `fullPage` the whole page (the Overview's charts run below the fold). */
export async function screenshot(page: Page, name: string, { fullPage = false } = {}): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage });
  return file;
}
