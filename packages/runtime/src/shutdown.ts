/**
 * Graceful shutdown on SIGTERM/SIGINT: run the steps in order (stop accepting → close workers →
 * close queues → quit Redis), each bounded, then exit 0. A second signal exits at once.
 */
import type { Logger } from 'pino';

export interface ShutdownStep {
  name: string;
  run: () => Promise<void>;
}

function runSteps(steps: readonly ShutdownStep[], logger: Logger, stepTimeoutMs: number): Promise<void> {
  return steps.reduce(async (previous, step) => {
    await previous;
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), stepTimeoutMs)));
    const outcome = await Promise.race([
      step.run().then(
        () => 'done' as const,
        (err: unknown) => err,
      ),
      timeout,
    ]);
    clearTimeout(timer);
    if (outcome === 'done') logger.info({ step: step.name, ms: Date.now() - started }, 'shutdown.step');
    else
      logger.warn(
        { step: step.name, err: outcome === 'timeout' ? `gave up after ${stepTimeoutMs} ms` : String(outcome) },
        'shutdown.step_failed',
      );
  }, Promise.resolve());
}

/**
 * Installs the handlers. `steps` is read when a signal arrives, so the handlers can be installed
 * before start-up finishes: a signal during start-up (say, while waiting for Redis) then exits 0
 * at once, as nothing was accepted yet.
 */
export function onShutdownSignal(
  steps: () => readonly ShutdownStep[],
  logger: Logger,
  options: { stepTimeoutMs?: number; exit?: (code: number) => void } = {},
): void {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'shutdown.forced');
      exit(1);
      return;
    }
    stopping = true;
    logger.info({ signal }, 'shutdown.begin');
    void runSteps(steps(), logger, options.stepTimeoutMs ?? 10_000).then(() => {
      logger.info('shutdown.done');
      exit(0);
    });
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}
