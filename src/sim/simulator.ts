/**
 * `refract simulate`: a local Solana JSON-RPC endpoint serving Light transactions as blocks at a
 * steady slot rate — generated (default) or replayed from getTransaction files (`--replay DIR...`,
 * then generated). Methods: getSlot, getBlock, getTransaction, getHealth, getBlockHeight,
 * getFirstAvailableBlock, getVersion. Blocks are built lazily when their slot is reached and kept.
 */
import { createServer, type Server } from 'node:http';
import bs58 from 'bs58';
import type { Logger } from 'pino';
import { readFileSync } from 'node:fs';
import { listFiles } from '../ingest/files.ts';
import { LightTxGenerator } from './generator.ts';
import { parseTransaction } from '../light/parser.ts';
import { decodeTransactionJson } from '../solana/decode.ts';

/** Simulator options. */
export interface SimulatorOptions {
  port?: number;
  host?: string;
  /** Milliseconds per slot (default 400). */
  slotMs?: number;
  /** Generated transactions per block (default 8). */
  txsPerBlock?: number;
  /** Directories of getTransaction JSON files replayed first, one slot per source slot, in slot order. */
  replay?: string[];
  /** Stop generating after replay (default false: generate forever). */
  replayOnly?: boolean;
  seed?: number;
  owners?: number;
  log?: Logger;
}

interface SimBlock {
  json: Record<string, unknown>;
  transactions: Map<string, Record<string, unknown>>;
}

/** A running simulator. */
export interface Simulator {
  server: Server;
  url: string;
  /** Current slot. */
  slot(): number;
  close(): Promise<void>;
}

const sha = (s: string) => bs58.encode(Buffer.from(s.padEnd(32, '.').slice(0, 32)));

/** Moves the generator's tree past every leaf and seq the replayed transactions used in the same tree. */
function continueAfterReplay(gen: LightTxGenerator, txs: Record<string, unknown>[]): void {
  let nextLeaf = 0;
  let lastSeq = 0n;
  for (const json of txs) {
    let parsed;
    try {
      const d = decodeTransactionJson(json);
      parsed = parseTransaction(d.transaction, d.slot);
    } catch {
      continue;
    }
    for (const ev of parsed.events) {
      if (ev.kind === 'publicTransaction') {
        const e = ev.event;
        const seq = e.sequenceNumbers.find((s) => bs58.encode(s.treePubkey) === gen.treePubkey)?.seq;
        let n = 0n;
        e.outputCompressedAccounts.forEach((o, i) => {
          if (bs58.encode(e.pubkeyArray[o.merkleTreeIndex] ?? new Uint8Array()) !== gen.treePubkey) return;
          nextLeaf = Math.max(nextLeaf, e.outputLeafIndices[i]! + 1);
          if (seq !== undefined && seq + n > lastSeq) lastSeq = seq + n;
          n++;
        });
      } else if (ev.kind === 'nullifier' && bs58.encode(ev.event.tree) === gen.treePubkey) {
        const end = ev.event.seq + BigInt(ev.event.nullifiedLeavesIndices.length) - 1n;
        if (end > lastSeq) lastSeq = end;
      }
    }
  }
  gen.continueTree(nextLeaf, lastSeq);
}

/** Starts the simulator; resolves once it listens. */
export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const gen = new LightTxGenerator({ owners: opts.owners ?? 200, seed: opts.seed ?? 1 });
  const replayTxs = (opts.replay ?? []).flatMap((dir) => listFiles(dir).map((f) => JSON.parse(readFileSync(f, 'utf8')) as Record<string, unknown>));
  replayTxs.sort((a, b) => (a.slot as number) - (b.slot as number));
  const replayBySlot: Record<string, unknown>[][] = [];
  for (const tx of replayTxs) {
    const last = replayBySlot[replayBySlot.length - 1];
    if (last && last[0]!.slot === tx.slot) last.push(tx);
    else replayBySlot.push([tx]);
  }
  continueAfterReplay(gen, replayTxs);
  const blocks = new Map<number, SimBlock>();
  let builtUpTo = 0;
  const started = Date.now();
  const slotMs = opts.slotMs ?? 400;
  const currentSlot = () => 1 + Math.floor((Date.now() - started) / slotMs);

  const build = (slot: number): SimBlock | null => {
    let b = blocks.get(slot);
    if (b) return b;
    for (let s = builtUpTo + 1; s <= slot; s++) {
      builtUpTo = s;
      const replay = replayBySlot[s - 1];
      let json: Record<string, unknown>;
      if (replay) {
        json = {
          blockHeight: s, blockTime: Math.floor(Date.now() / 1000), blockhash: sha(`b${s}`), parentSlot: s - 1, previousBlockhash: sha(`b${s - 1}`), rewards: [],
          transactions: replay.map((t) => ({ transaction: t.transaction, meta: t.meta, version: t.version })),
        };
      } else if (opts.replayOnly) {
        json = { blockHeight: s, blockTime: Math.floor(Date.now() / 1000), blockhash: sha(`b${s}`), parentSlot: s - 1, previousBlockhash: sha(`b${s - 1}`), rewards: [], transactions: [] };
      } else {
        json = gen.block(s, opts.txsPerBlock ?? 8).json;
      }
      const transactions = new Map<string, Record<string, unknown>>();
      for (const t of json.transactions as { transaction: [string, string]; meta: unknown; version: unknown }[]) {
        const wire = Buffer.from(t.transaction[0], 'base64');
        const sig = bs58.encode(wire.subarray(1, 65));
        transactions.set(sig, { slot: s, blockTime: json.blockTime, ...t });
      }
      blocks.set(s, { json, transactions });
    }
    b = blocks.get(slot);
    return b ?? null;
  };

  const handle = (method: string, params: unknown[]): unknown => {
    const slot = currentSlot();
    switch (method) {
      case 'getSlot':
      case 'getBlockHeight':
        return slot;
      case 'getFirstAvailableBlock':
        return 1;
      case 'getGenesisHash':
        return sha('refract-simulator-genesis');
      case 'getHealth':
        return 'ok';
      case 'getVersion':
        return { 'solana-core': 'refract-simulator', 'feature-set': 0 };
      case 'getBlock': {
        const s = Number(params[0]);
        if (!Number.isInteger(s) || s < 1 || s > slot) throw Object.assign(new Error(`Block not available for slot ${s}`), { code: -32004 });
        return build(s)!.json;
      }
      case 'getTransaction': {
        const sig = String(params[0]);
        build(slot);
        for (const b of blocks.values()) {
          const t = b.transactions.get(sig);
          if (t) return t;
        }
        return null;
      }
      default:
        throw Object.assign(new Error(`Method not found: ${method}`), { code: -32601 });
    }
  };

  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      let id: unknown = null;
      let out: Record<string, unknown>;
      try {
        const msg = JSON.parse(body) as { id?: unknown; method?: string; params?: unknown[] };
        id = msg.id ?? null;
        out = { jsonrpc: '2.0', id, result: handle(String(msg.method), msg.params ?? []) };
      } catch (err) {
        const e = err as Error & { code?: number };
        out = { jsonrpc: '2.0', id, error: { code: e.code ?? -32700, message: e.message } };
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(out));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 8899, opts.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port ?? 8899;
  const url = `http://${opts.host ?? '127.0.0.1'}:${port}`;
  opts.log?.info({ url, slotMs, replaySlots: replayBySlot.length }, 'Solana RPC simulator listening');
  return { server, url, slot: currentSlot, close: () => new Promise<void>((r) => server.close(() => r())) };
}
