// Spawned by test/prover.native.test.ts (a fresh process: its table sets are empty, so a key's
// tables come from the table file or are built): loads a zkey with a table file, proves a witness
// with fixed r, s and prints {source, note, mib, proof} as JSON on stdout.
// argv: zkey path, table file path, .wtns path, r‖s hex (64 bytes).
import { readFileSync } from 'node:fs';
import { loadNativeKey, proveNative } from '../../src/prover/engine/groth16Native.ts';

const [zkey, tableFile, wtns, rsHex] = process.argv.slice(2) as [string, string, string, string];
const key = loadNativeKey(new Uint8Array(readFileSync(zkey)), zkey, { tableMb: 1024, tableFile });
const { proof } = proveNative(key, new Uint8Array(readFileSync(wtns)), { rs: new Uint8Array(Buffer.from(rsHex, 'hex')), threads: 1 });
process.stdout.write(JSON.stringify({ source: key.tableSource, note: key.tableNote, mib: key.tableBytes / 2 ** 20, proof }));
