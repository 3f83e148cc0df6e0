/**
 * Debian's Chromium (`apt-get install chromium`) as the console's browser tests and its bench
 * start it through playwright-core: headless, and quiet on a machine without internet (without
 * the background-networking flags it keeps trying Google's hosts at every start).
 */
export const CHROMIUM_PATH = '/usr/bin/chromium';

export const CHROMIUM_FLAGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
