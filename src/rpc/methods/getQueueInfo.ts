/**
 * getQueueInfo: the size of every queue of the batched (v2) trees (Photon `get_queue_info.rs`).
 * Params `{trees?: [pubkey]}` (absent or null: every indexed V2 tree). Result `{queues: [{tree, queue,
 * queueType, queueSize}], slot}`; queueType is light's `QueueType` (3 InputStateV2, 4 AddressV2,
 * 5 OutputStateV2). A StateV2 tree has two entries (input, then output queue), an AddressV2 tree one.
 */
import { z } from 'zod';
import type { Pubkey } from '../../types.ts';
import { b58, u64 } from '../resultEncoding.ts';
import { RpcError } from '../errors.ts';
import { boundedArray, optional, pubkey } from '../schemas.ts';
import { defineMethod } from './lib/define.ts';
import { optionalRead } from './lib/shared.ts';

/** `getQueueInfo` params (Photon `GetQueueInfoRequest`, unknown keys rejected; absent/null = no filter). */
export const queueInfoParams = z
  .strictObject({ trees: optional(boundedArray(pubkey, 'trees')) }, { error: (iss) => (iss.code === 'unrecognized_keys' ? undefined : 'expected an object {trees?}') })
  .nullish()
  .transform((v): { trees?: Pubkey[] } => v ?? {})
  .meta({ description: 'Optional list of batched tree pubkeys (default: every indexed V2 tree)' });

/** `getQueueInfo` definition (params schema, handler); semantics in the module comment. */
export const getQueueInfo = defineMethod({
  name: 'getQueueInfo',
  summary: 'Queue sizes of the batched (v2) trees',
  params: queueInfoParams,
  async handler(ctx, p) {
    const { value: queues, slot } = await optionalRead(ctx, 'getQueueInfo', p.trees ?? null);
    return {
      queues: queues.map((q) => ({ tree: b58(q.tree), queue: b58(q.queue), queueType: q.queueType, queueSize: u64(q.queueSize) })),
      slot: u64(slot),
    };
  },
});
