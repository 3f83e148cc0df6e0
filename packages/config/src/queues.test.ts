import { queueCatalog, type QueueKey } from './queues.js';

const entries = Object.entries(queueCatalog) as [QueueKey, (typeof queueCatalog)[QueueKey]][];

describe('queueCatalog', () => {
  it('has queues', () => {
    expect(entries.length).toBeGreaterThan(0);
  });

  // BullMQ joins prefix, queue name and key parts with ":".
  it.each(entries)('%s: neither the queue name nor the job name contains ":"', (_key, queue) => {
    expect(queue.name).not.toContain(':');
    expect(queue.jobName).not.toContain(':');
    expect(queue.name).toMatch(/^[A-Za-z0-9_.-]+$/);
    expect(queue.jobName).toMatch(/^[A-Za-z0-9_.-]+$/);
  });

  it('uses every queue name once', () => {
    const names = entries.map(([, q]) => q.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it.each(entries)('%s: default job options retry with backoff and bound what Redis keeps', (_key, queue) => {
    const o = queue.defaultJobOptions;
    expect(o.attempts).toBeGreaterThan(1);
    expect(o.backoff.type).toBe('exponential');
    expect(o.backoff.delay).toBeGreaterThan(0);
    if (o.removeOnComplete !== true) {
      expect(o.removeOnComplete.age).toBeGreaterThan(0);
      expect(o.removeOnComplete.count).toBeGreaterThan(0);
    }
    expect(o.removeOnFail.age).toBeGreaterThan(0);
  });

  it('names the ingest → router queue "route" and the router → webhook-delivery queue "deliver"', () => {
    expect(queueCatalog.route.name).toBe('route');
    expect(queueCatalog.deliver.name).toBe('deliver');
  });
});
