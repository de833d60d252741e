/**
 * The ingest metrics of the v2 path: root mismatches per tree and Light transactions without an event
 * per program, from the ingest loop's batch events (src/ingest/progress.ts) into prom-client.
 */
import { describe, expect, it } from 'vitest';
import { recordIngestEvent } from '../src/ingest/progress.ts';
import { Metrics } from '../src/metrics.ts';

describe('v2 ingest metrics', () => {
  it('refract_ingest_root_mismatch_total{tree} and refract_ingest_unparsed_light_transactions_total{program} count what a batch reports', async () => {
    const m = new Metrics({ defaultMetrics: false });
    const batch = { kind: 'batch' as const, lastSlot: 5, lag: 0, blocks: 1, transactions: 1, outputs: 0, rejected: 1, unknownTrees: [], seconds: 0.01, heapUsedBytes: 1 };
    recordIngestEvent(m, { ...batch, rootMismatches: [['HLKs5NJ8FXkJg8BrzJt56adFYYuwg5etzDtBbQYTsixu', 1]], unparsed: [['light-system', 2], ['obsolete-account-compression', 1]] });
    recordIngestEvent(m, { ...batch, rootMismatches: [['HLKs5NJ8FXkJg8BrzJt56adFYYuwg5etzDtBbQYTsixu', 2]] });
    recordIngestEvent(m, batch);
    const text = await m.registry.metrics();
    expect(text).toContain('refract_ingest_root_mismatch_total{tree="HLKs5NJ8FXkJg8BrzJt56adFYYuwg5etzDtBbQYTsixu"} 3');
    expect(text).toContain('refract_ingest_unparsed_light_transactions_total{program="light-system"} 2');
    expect(text).toContain('refract_ingest_unparsed_light_transactions_total{program="obsolete-account-compression"} 1');
  });
});
