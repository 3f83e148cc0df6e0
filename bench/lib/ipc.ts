/**
 * Request/response over a child's IPC channel, for the bench's helper processes (receiver,
 * baseline producer): the parent calls, the child answers `{ type: 'reply', id, body | error }`;
 * any other message from the child is an event.
 */
import type { ChildProcess } from 'node:child_process';

export interface IpcRequest {
  readonly id: number;
  readonly type: string;
}

interface Reply {
  readonly type: 'reply';
  readonly id: number;
  readonly body?: unknown;
  readonly error?: string;
}

interface Waiting {
  resolve(body: unknown): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

export class IpcClient {
  private nextId = 1;
  private readonly waiting = new Map<number, Waiting>();

  constructor(
    private readonly child: ChildProcess,
    private readonly name: string,
    onEvent: (msg: { type: string } & Record<string, unknown>) => void = () => undefined,
  ) {
    child.on('message', (raw) => {
      const msg = raw as { type: string } & Record<string, unknown>;
      if (msg.type !== 'reply') return onEvent(msg);
      const reply = msg as unknown as Reply;
      const w = this.waiting.get(reply.id);
      if (!w) return;
      this.waiting.delete(reply.id);
      clearTimeout(w.timer);
      if (reply.error !== undefined) w.reject(new Error(`${this.name}: ${reply.error}`));
      else w.resolve(reply.body);
    });
    child.once('exit', () => {
      for (const w of this.waiting.values()) {
        clearTimeout(w.timer);
        w.reject(new Error(`${this.name} exited`));
      }
      this.waiting.clear();
    });
  }

  /** The caller states the shape of the answer it relies on. */
  call<T>(type: string, args: Record<string, unknown> = {}, timeoutMs = 10_000): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`${this.name}: no answer to "${type}" within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(id, { resolve, reject, timer });
      this.child.send({ ...args, id, type }, (err) => {
        if (!err) return;
        this.waiting.delete(id);
        clearTimeout(timer);
        reject(err);
      });
    });
  }
}

/** In a child: answers the parent's calls with `handler`'s result (or its error). */
export function serveIpc(handler: (msg: IpcRequest & Record<string, unknown>) => unknown): void {
  const send = process.send?.bind(process);
  if (!send) throw new Error('no IPC channel: start this script from the bench');
  process.on('message', (raw) => {
    const msg = raw as IpcRequest & Record<string, unknown>;
    Promise.resolve()
      .then(() => handler(msg))
      .then(
        (body) => send({ type: 'reply', id: msg.id, body }),
        (err: unknown) => send({ type: 'reply', id: msg.id, error: err instanceof Error ? err.message : String(err) }),
      );
  });
  // The parent going away ends the child too.
  process.on('disconnect', () => process.exit(0));
}

/** In a child: an event to the parent (not an answer). */
export function emitIpc(msg: { type: string } & Record<string, unknown>): void {
  process.send?.(msg);
}
