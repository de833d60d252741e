/** Store helpers for tests. */
import type { Store } from '../../src/store/store.ts';

/**
 * Every sub-database of `store` as hex `key=value` lines, by name (raw bytes, for byte-exact
 * comparisons of two stores). LMDB keeps the names NUL-terminated; the keys here are without it.
 */
export function dumpStore(store: Store): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const name of [...store.root.getKeys()].map(String)) {
    const db = store.root.openDB({ name, keyEncoding: 'binary', encoding: 'binary' } as never) as unknown as {
      getRange(o: object): Iterable<{ key: Buffer; value: Buffer }>;
    };
    out[name.replace(/\0$/, '')] = [...db.getRange({})].map((e) => `${e.key.toString('hex')}=${e.value.toString('hex')}`);
  }
  return out;
}
