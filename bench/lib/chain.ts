/** Starts one process of the baseline chain (bench/baselines/bullmq-chain.ts), ready once it says so over IPC. */
import path from 'node:path';
import { BENCH_DIR, REPO_ROOT } from './deps.js';
import { IpcClient } from './ipc.js';
import { startChild, type ChildHandle } from './proc.js';
import { SERVICE_NODE_FLAGS } from './stack.js';

export async function startChainProcess(name: string, role: 'producer' | 'worker', env: NodeJS.ProcessEnv): Promise<{ handle: ChildHandle; ipc: IpcClient }> {
  let ready = false;
  let ipc: IpcClient | undefined;
  const handle = await startChild({
    name,
    // The services' Node flags, so that the comparison is of the code alone.
    args: [...SERVICE_NODE_FLAGS, '--import', 'tsx', path.join(BENCH_DIR, 'baselines', 'bullmq-chain.ts'), role],
    cwd: REPO_ROOT,
    env,
    ipc: true,
    ready: (h) => {
      ipc ??= new IpcClient(h.child, name, (msg) => {
        if (msg.type === 'ready') ready = true;
      });
      return Promise.resolve(ready);
    },
  });
  return { handle, ipc: ipc as IpcClient };
}
