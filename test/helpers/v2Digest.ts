/**
 * The observable v2 state of a store, for crash tests that compare a crashed-and-restarted run with a
 * clean one: per batched tree (the simulator's HLKs5 state tree and EzKE8 address tree), the last
 * applied batch event (seq, root, root index, next indices), the output, input and address queues
 * (indices and hashes), and the held-back batch events.
 */
import bs58 from 'bs58';
import { DEFAULT_V2_ADDRESS_TREE, DEFAULT_V2_TREE } from '../../src/sim/generator.ts';
import type { ReadView } from '../../src/store/store.ts';

/** A JSON-comparable digest of the v2 state of the simulator's batched trees (hex hashes, decimal indices). */
export function v2Digest(r: ReadView) {
  const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
  return [DEFAULT_V2_TREE, DEFAULT_V2_ADDRESS_TREE].map((t) => {
    const tree = bs58.decode(t);
    const b = r.batchTree(tree);
    return {
      tree: t,
      lastBatch: b ? { seq: String(b.seq), root: hex(b.root), rootIndex: b.rootIndex, nextIndex: String(b.nextIndex), nullifiedNextIndex: String(b.nullifiedNextIndex) } : null,
      outputQueue: [...r.outputQueue(tree)].map((e) => `${e.leafIndex}:${hex(e.hash)}`),
      inputQueue: [...r.inputQueue(tree)].map((e) => `${e.queueIndex}:${hex(e.hash)}`),
      addressQueue: [...r.addressQueue(tree)].map((e) => `${e.queueIndex}:${hex(e.address)}`),
      heldBatchEvents: [...r.pendingBatchEvents(tree)].length,
    };
  });
}
