/** Small statistics for benchmarks: medians and percentiles over samples, ratios against a baseline. */
import { cpus, loadavg } from 'node:os';

/** The p-quantile (0..1) by linear interpolation; NaN for no samples. */
export function quantile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const s = [...samples].sort((a, b) => a - b);
  const pos = (s.length - 1) * Math.min(1, Math.max(0, p));
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo);
}

/** The median (p50). */
export function median(samples: readonly number[]): number {
  return quantile(samples, 0.5);
}

/** `candidate / baseline` of two medians, rounded to 3 digits (throughput: >1 is better). */
export function ratio(candidate: number, baseline: number): number {
  return Math.round((candidate / baseline) * 1000) / 1000;
}

/**
 * The machine's 1/5/15-minute load averages as text, for every recorded result: the benchmarks
 * run on a shared 2-core machine, where absolute numbers move with the load and ratios less so.
 */
export function loadAverage(): string {
  return `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ')} (1/5/15 min), ${cpus().length} CPUs`;
}
