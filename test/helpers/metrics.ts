/**
 * Reading a daemon's Prometheus text (GET /metrics) in tests.
 */
import { expect } from 'vitest';

/**
 * The sum of the values of every sample line of `text` that starts with `series`: a metric name, or a
 * name with its first labels (`'refract_x_total{source="rpc"'` sums that source's lines of every reason).
 */
export function metricSum(text: string, series: string): number {
  let sum = 0;
  for (const l of text.split('\n')) if (l.startsWith(series) && !l.startsWith('#')) sum += Number(l.slice(l.lastIndexOf(' ') + 1));
  return sum;
}

/**
 * A gRPC-following daemon that fell back to the poller `fallbacks` times (its /health `source.fallbacks`)
 * counted each in `refract_ingest_source_changes_total` with its reason, and each ended in a recovery:
 * as many changes to rpc as fallbacks, and as many changes back to grpc (reason recovered). Logs the
 * reasons, since on a quiet machine these tests see no fallback at all.
 */
export function expectFallbacksRecovered(metricsText: string, fallbacks: number): void {
  if (fallbacks === 0) return;
  const changes = metricsText.split('\n').filter((l) => l.startsWith('refract_ingest_source_changes_total'));
  console.log(`gRPC source fell back ${fallbacks}× under load: ${changes.join('; ')}`);
  expect(metricSum(metricsText, 'refract_ingest_source_changes_total{source="grpc",reason="recovered"}')).toBe(fallbacks);
  expect(metricSum(metricsText, 'refract_ingest_source_changes_total{source="rpc"')).toBe(fallbacks);
}
