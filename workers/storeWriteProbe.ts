/**
 * Process entry point (not a thread: an LMDB assertion aborts the whole process) of
 * src/store/writeProbe.ts `probeStoreWritable`: opens the store at argv[2] without the write map
 * (which would grow the data file to the map size; a broken free-page list aborts either way,
 * issue #31) and runs the store's write probe (`Store.writeProbe`). Exit 0 when every
 * transaction committed; an exception prints its message on stderr and exits 1; an LMDB abort ends
 * the process by a signal, which the caller reports.
 */
import { Store } from '../src/store/store.ts';

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: storeWriteProbe <store directory>\n');
  process.exit(2);
}
try {
  const store = new Store({ path: dir, writemap: false });
  store.writeProbe();
  await store.close();
} catch (e) {
  process.stderr.write(`${(e as Error).message}\n`);
  process.exit(1);
}
