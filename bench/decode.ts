/**
 * Block decoding benchmark: µs of CPU per transaction for `decodeBlockJson` on a real block
 * (test/fixtures/photon/blocks/get_lanon_voting_signatures/270893658: 57 transactions, 11 votes, no Light
 * transaction), with the skim (default: transactions naming neither the account-compression nor the
 * vote program are read for signature and error only) and without it (`skim: null`, every message
 * decoded in full), in interleaved rounds; the ratio is the median of per-round ratios. The same
 * block with every Light fixture transaction appended is reported too (those are always decoded in
 * full). JSON.parse is not included (the poller parses once either way).
 * Writes bench/results/decode.json.
 *
 * Usage: npm run bench:decode [-- --rounds 7 --passes 400]
 */
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { decodeBlockJson } from '../src/solana/decode.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '7' }, passes: { type: 'string', default: '400' } } });
const rounds = Number(values.rounds);
const passes = Number(values.passes);
const root = new URL('..', import.meta.url).pathname;
const photon = join(root, 'test/fixtures/photon');
const raw = JSON.parse(readFileSync(join(photon, 'blocks/get_lanon_voting_signatures/270893658'), 'utf8'));
const block = raw.result ?? raw;
const light = readdirSync(join(photon, 'transactions')).flatMap((d) =>
  readdirSync(join(photon, 'transactions', d)).map((f) => JSON.parse(readFileSync(join(photon, 'transactions', d, f), 'utf8'))),
);
const mixed = { ...block, transactions: [...block.transactions, ...light.map((t) => ({ transaction: t.transaction, meta: t.meta }))] };

/** CPU µs per transaction of `passes` decodes of `b`. */
function measure(b: { transactions: unknown[] }, skim: boolean): number {
  const t0 = process.cpuUsage();
  for (let i = 0; i < passes; i++) (skim ? decodeBlockJson(b, 1) : decodeBlockJson(b, 1, null));
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / passes / b.transactions.length;
}
const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
const cases = { realBlock: block, realBlockWithLightFixtures: mixed } as const;
const out: Record<string, unknown> = {};
for (const [name, b] of Object.entries(cases)) {
  measure(b, true);
  measure(b, false);
  const full: number[] = [];
  const skim: number[] = [];
  for (let r = 0; r < rounds; r++) {
    full.push(measure(b, false));
    skim.push(measure(b, true));
  }
  const decoded = decodeBlockJson(b, 1);
  const skimmed = decoded.transactions.filter((t) => t.groups.length === 0).length;
  out[name] = {
    transactions: b.transactions.length,
    votes: decoded.transactions.filter((t) => t.isVote).length,
    skimmed,
    fullUsPerTx: +median(full).toFixed(2),
    skimUsPerTx: +median(skim).toFixed(2),
    speedup: +median(full.map((f, i) => f / skim[i]!)).toFixed(2),
  };
  console.log(name, JSON.stringify(out[name]));
}
mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(
  join(root, 'bench/results/decode.json'),
  `${JSON.stringify({ bench: 'decode', date: new Date().toISOString(), machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version }, params: { rounds, passes }, results: out }, null, 2)}\n`,
);
