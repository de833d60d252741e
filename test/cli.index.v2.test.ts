/**
 * `refract index` (bin/refract.mjs) over the reference's v2 fixtures, as a user runs it: the JSON summary
 * counts the outputs, rejections, Light transactions that yielded no event, root mismatches and held-back
 * batch events. Fixture files are read in place; altered copies go to a temporary directory.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { REFRACT_BIN } from '../src/prover/keys/keyReadiness.ts';
import { tempDir, txDir } from './helpers/photon.ts';
import { runCommand } from './helpers/runCommand.ts';

async function index(...dirs: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, REFRACT_LOG_LEVEL: 'error' };
  delete env.NODE_OPTIONS;
  const args = [REFRACT_BIN, 'index', '--db', tempDir('refract-cli-v2-'), '--no-progress', ...dirs.flatMap((d) => ['--transactions', d])];
  const r = await runCommand(process.execPath, args, { env, timeoutMs: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

/** Copies a fixture folder to a temp dir, passing each file's JSON through `edit`. */
function alteredCopy(name: string, edit: (json: any) => void): string {
  const out = tempDir('refract-cli-v2-tx-');
  for (const f of readdirSync(txDir(name))) {
    const json = JSON.parse(readFileSync(join(txDir(name), f), 'utf8'));
    edit(json);
    writeFileSync(join(out, f), JSON.stringify(json));
  }
  return out;
}

/** Every inner instruction of a getTransaction JSON (data in base58). */
const innerOf = (json: any): { data: string }[] => (json.meta.innerInstructions ?? []).flatMap((g: any) => g.instructions);
const hexOf = (data: string) => Buffer.from(bs58.decode(data)).toString('hex');

describe('refract index over v2 fixtures', () => {
  it('batched_tree_transactions: 100 outputs, nothing rejected or unparsed, 15 batch events applied', async () => {
    const s = await index(txDir('batched_tree_transactions'));
    expect(s).toMatchObject({ transactions: 115, outputs: 100, outputsInserted: 100, accountsSpent: 50, rejected: 0, unparsedLightTransactions: 0, rootMismatches: 0, batchEventsHeld: 0 });
  });

  it('the small v2 folders index their outputs (none did before: they reported 0 outputs, 0 rejected)', async () => {
    // The other folders are covered in process by test/golden.v2.test.ts.
    const expected: Record<string, number> = { four_cpi_events: 4, index_compress_and_close_with_tlv: 5 };
    for (const [name, outputs] of Object.entries(expected)) {
      expect([name, await index(txDir(name))]).toMatchObject([name, { outputs, rejected: 0, unparsedLightTransactions: 0, rootMismatches: 0 }]);
    }
  });

  it('a light-system transaction whose insert_into_queues data is cut short is counted as unparsed, by program', async () => {
    const dir = alteredCopy('four_cpi_events', (json) => {
      for (const ix of innerOf(json)) if (hexOf(ix.data).startsWith('b48f9f99232ef8a3')) ix.data = bs58.encode(bs58.decode(ix.data).subarray(0, 11));
    });
    expect(await index(dir)).toMatchObject({ outputs: 0, rejected: 0, unparsedLightTransactions: 1, unparsedByProgram: { 'light-system': 1 } });
  });

  it('a batch event whose new_root was altered is refused (root mismatch) and the later events are held back', async () => {
    let altered = 0;
    const dir = alteredCopy('batch_append_nullify', (json) => {
      for (const ix of innerOf(json)) {
        const d = bs58.decode(ix.data);
        // BatchAppend (tag 3) with sequence_number 2: flip one byte of new_root (bytes 73..105)
        if (d.length >= 118 && d[0] === 3 && Buffer.from(d).readBigUInt64LE(109) === 2n) {
          d[80] ^= 1;
          ix.data = bs58.encode(d);
          altered++;
        }
      }
    });
    expect(altered).toBe(1);
    expect(await index(dir)).toMatchObject({ rejected: 1, rootMismatches: 1, batchEventsHeld: 2 });
  });
});
