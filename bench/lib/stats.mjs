// docs/performance.md "Benchmark suite": small helpers shared by the benchmark suite (medians, formatting, the table).

/** The median of `values` (the mean of the middle two for an even count). */
export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** The p-th percentile (0..100) of `values`, nearest rank. */
export function percentile(values, p) {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

export const fmtInt = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
export const fmtMs = (n) => (Number.isFinite(n) ? `${n < 10 ? n.toFixed(1) : Math.round(n)} ms` : '-');
export const fmtPct = (n) => (Number.isFinite(n) ? `${Math.round(n * 100)}%` : '-');

/** A Markdown table with right-aligned numeric columns (every column but the first). */
export function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i] ?? '').length)));
  const line = (r) =>
    `| ${r.map((c, i) => (i ? String(c ?? '').padStart(widths[i]) : String(c ?? '').padEnd(widths[i]))).join(' | ')} |`;
  return [
    line(rows[0]),
    `|${widths.map((w, i) => (i ? '-'.repeat(w + 1) + ':' : '-'.repeat(w + 2))).join('|')}|`,
    ...rows.slice(1).map(line),
  ].join('\n');
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Microseconds from seconds, whole (CPU time per request). */
export const fmtUs = (seconds) =>
  Number.isFinite(seconds) ? `${Math.round(seconds * 1e6).toLocaleString('en-US')} µs` : '-';
