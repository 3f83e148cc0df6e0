/**
 * Types for the old `analytics-node` 6.x (it ships none), limited to what the compatibility tests
 * use; taken from its index.js.
 */
declare module 'analytics-node' {
  namespace Analytics {
    interface Options {
      flushAt?: number;
      flushInterval?: number;
      host?: string;
      path?: string;
      enable?: boolean;
      timeout?: number | string;
      maxQueueSize?: number;
      retryCount?: number;
      axiosConfig?: Record<string, unknown>;
      axiosRetryConfig?: Record<string, unknown>;
      errorHandler?: (err: unknown) => void;
    }
    /** What a flush sent: the callbacks of every call in it receive this. */
    interface FlushedBatch {
      batch: Array<Record<string, unknown>>;
      timestamp: Date;
      sentAt: Date;
    }
    type Callback = (err?: Error, data?: FlushedBatch) => void;
  }
  class Analytics {
    constructor(writeKey: string, options?: Analytics.Options);
    identify(message: Record<string, unknown>, callback?: Analytics.Callback): this;
    track(message: Record<string, unknown>, callback?: Analytics.Callback): this;
    page(message: Record<string, unknown>, callback?: Analytics.Callback): this;
    screen(message: Record<string, unknown>, callback?: Analytics.Callback): this;
    group(message: Record<string, unknown>, callback?: Analytics.Callback): this;
    alias(message: Record<string, unknown>, callback?: Analytics.Callback): this;
    flush(callback?: Analytics.Callback): Promise<Analytics.FlushedBatch | undefined>;
    readonly queue: unknown[];
  }
  export = Analytics;
}
