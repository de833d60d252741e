/**
 * Worker module for test/ingest.thread.test.ts: one thread of the ingest thread protocol
 * (src/ingest/threads/thread.ts `serveThread`), doing what `workerData.mode` says:
 * - `echo`: posts `{type: 'echo', n}` for every `{type: 'ping', n}`, until `stop`, then `{type: 'stopped'}`;
 * - `throw`: throws RangeError('leaf index 99 is outside the tree') (posted as `failed`);
 * - `exit`: leaves with process.exit(3) (no message).
 */
import { serveThread } from '../../src/ingest/threads/thread.ts';

type Message = { type: 'echo'; n: number } | { type: 'stopped' };
type Command = { type: 'ping'; n: number };

await serveThread<{ mode: 'echo' | 'throw' | 'exit' }, Message, Command>(async ({ data, post, signal, onCommand }) => {
  if (data.mode === 'throw') throw new RangeError('leaf index 99 is outside the tree');
  if (data.mode === 'exit') process.exit(3);
  onCommand((c) => {
    if (c.type === 'ping') post({ type: 'echo', n: c.n });
  });
  await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  post({ type: 'stopped' });
});
