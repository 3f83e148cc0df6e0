/** Closes what a test opened, newest first, after each test: `scope.track(await startX())`. */
interface Closable {
  close(): Promise<void>;
}

export function testScope(): { track<T extends Closable>(thing: T): T } {
  const open: Closable[] = [];
  afterEach(async () => {
    for (const o of open.reverse()) await o.close();
    open.length = 0;
  });
  return {
    track(thing) {
      open.push(thing);
      return thing;
    },
  };
}
