/** Bar charts of the report page as inline SVG (no external resources). */
import { esc } from './html-table.ts';

export const PALETTE = [
  '#1f77b4',
  '#ff7f0e',
  '#2ca02c',
  '#d62728',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
  '#17becf',
  '#393b79',
  '#637939',
  '#8c6d31',
  '#843c39',
];

export interface Series {
  name: string;
  color: string;
  values: number[];
  /** Said in the legend after the name, when the name alone is not enough. */
  note?: string;
}

/**
 * The vertical scale of a bar chart whose bar totals are `totals`. A few outlier bars must not flatten
 * the others: a bar more than OUTLIER_FACTOR times the 75th percentile of the non-zero bars (at least
 * three of them) is an outlier; the axis then stops at the highest normal bar and outliers are drawn
 * cut at the top, marked, with their true value written above them.
 */
export function chartScale(totals: readonly number[]): { top: number; outliers: Set<number> } {
  const nonZero = totals.filter((v) => v > 0).sort((a, b) => a - b);
  const outliers = new Set<number>();
  if (nonZero.length >= 3) {
    const p75 = nonZero[Math.ceil(0.75 * nonZero.length) - 1]!;
    totals.forEach((v, i) => {
      if (v > OUTLIER_FACTOR * p75) outliers.add(i);
    });
  }
  const top = Math.max(1, ...totals.filter((_, i) => !outliers.has(i)));
  return { top, outliers };
}

/** A bar above this many times the 75th percentile of the chart's non-zero bars is an outlier. */
export const OUTLIER_FACTOR = 3;

/**
 * A stacked vertical bar chart as inline SVG, with axis labels and a legend. Each bar is a
 * `<g class="bar" data-category>`; an outlier bar (see {@link chartScale}) has the class `outlier`.
 */
export function barChart(
  title: string,
  categories: string[],
  series: Series[],
  format: (v: number) => string,
  options: { outliers?: boolean } = {},
): string {
  const width = 860;
  const height = 320;
  const left = 90;
  const bottom = 60;
  const top = 40;
  const plotH = height - top - bottom;
  const plotW = width - left - 20;
  const totals = categories.map((_, i) => series.reduce((n, s) => n + (s.values[i] ?? 0), 0));
  const scale =
    options.outliers === false
      ? { top: Math.max(1, ...totals), outliers: new Set<number>() }
      : chartScale(totals);
  // Gridlines at round values (1, 2 or 5 times a power of ten), so that every label is exact.
  const raw = scale.top / 4;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const tick = Math.max(1, [1, 2, 5, 10].map((m) => m * magnitude).find((v) => v >= raw) ?? raw);
  const max = tick * 4;
  const step = plotW / Math.max(1, categories.length);
  const barW = Math.min(48, Math.max(2, step * 0.7));
  const parts: string[] = [];
  for (let t = 0; t <= 4; t++) {
    const v = tick * t;
    const y = top + plotH - (plotH * t) / 4;
    parts.push(`<line x1="${left}" x2="${width - 20}" y1="${y}" y2="${y}" stroke="#ddd"/>`);
    parts.push(
      `<text x="${left - 6}" y="${y + 4}" text-anchor="end" font-size="11">${esc(format(Math.round(v)))}</text>`,
    );
  }
  const labelEvery = Math.ceil(categories.length / 16);
  categories.forEach((cat, i) => {
    const outlier = scale.outliers.has(i);
    const x = left + i * step + (step - barW) / 2;
    const cx = (x + barW / 2).toFixed(1);
    const bar: string[] = [];
    let used = 0; // the height drawn so far; an outlier's segments stop at the top of the plot
    for (const s of series) {
      const v = s.values[i] ?? 0;
      if (v <= 0) continue;
      const h = Math.min((plotH * v) / max, plotH - used);
      if (h <= 0) break;
      used += h;
      bar.push(
        `<rect x="${x.toFixed(1)}" y="${(top + plotH - used).toFixed(1)}" width="${barW.toFixed(1)}" height="${h.toFixed(1)}" fill="${s.color}"><title>${esc(cat)} ${esc(s.name)}: ${esc(format(v))}</title></rect>`,
      );
    }
    if (outlier) {
      // A white break across the cut bar, a red outline and the true total above it.
      const yb = top + 10;
      bar.push(
        `<rect x="${x.toFixed(1)}" y="${top}" width="${barW.toFixed(1)}" height="${plotH}" fill="none" stroke="#c0392b" stroke-width="1.5"/>`,
        `<path d="M${(x - 2).toFixed(1)} ${yb + 4} L${cx} ${yb - 2} L${(x + barW + 2).toFixed(1)} ${yb + 4}" stroke="#fff" stroke-width="4" fill="none"/>`,
        `<text class="outlier-value" x="${cx}" y="${top - 6}" text-anchor="middle" font-size="10" font-weight="600" fill="#c0392b">▲ ${esc(format(totals[i]!))}</text>`,
      );
    }
    parts.push(
      `<g class="bar${outlier ? ' outlier' : ''}" data-category="${esc(cat)}" data-total="${totals[i]}"><title>${esc(cat)}: ${esc(format(totals[i]!))}${outlier ? ' (outlier, beyond the scale)' : ''}</title>${bar.join('')}</g>`,
    );
    if (i % labelEvery === 0) {
      parts.push(
        `<text x="${cx}" y="${top + plotH + 14}" text-anchor="end" font-size="10" transform="rotate(-35 ${cx} ${top + plotH + 14})">${esc(cat)}</text>`,
      );
    }
  });
  const legend = series
    .map(
      (s) =>
        `<span class="key"><span class="swatch" style="background:${s.color}"></span>${esc(s.name)}${s.note ? `<span class="key-note">: ${esc(s.note)}</span>` : ''}</span>`,
    )
    .join(' ');
  const outlierNote = scale.outliers.size
    ? `<p class="outlier-note">▲ ${scale.outliers.size === 1 ? '1 bar is an outlier' : `${scale.outliers.size} bars are outliers`} (more than ${OUTLIER_FACTOR} times the 75th percentile of the bars): the scale stops at the highest normal bar, outliers are cut at the top, outlined in red, and their true total is written above them (${esc(
        [...scale.outliers].map((i) => `${categories[i]}: ${format(totals[i]!)}`).join('; '),
      )}).</p>`
    : '';
  return `<figure><figcaption>${esc(title)}</figcaption><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-label="${esc(title)}">${parts.join('')}</svg><div class="legend">${legend}</div>${outlierNote}</figure>`;
}
