/**
 * Column charts drawn on the server as SVG (no script, no library, nothing from a CDN): one column
 * per label and series, a scale with round steps, the exact figure of each column on hover and in a
 * table of the same numbers beside the chart for screen readers and for copying.
 */
import { html, scrollBox, type Html } from './html.ts';

export interface Series {
  readonly name: string;
  readonly values: readonly number[];
}

export interface ColumnChart {
  /** Unique on the page; the chart's title and description are found by it. */
  readonly id: string;
  readonly title: string;
  /** One sentence that says what the chart shows, read by screen readers. */
  readonly description: string;
  readonly labels: readonly string[];
  readonly series: readonly Series[];
  /** A value as people read it ("1,250.00 CAD", "97.5 %", "12"). */
  readonly format: (value: number) => string;
  /** Fix the top of the scale (100 for a share in percent); else rounded up from the data. */
  readonly max?: number;
}

/** The drawing's size and the margins around its plot (scale on the left, labels below), in SVG units. */
const FRAME = { width: 960, height: 260, left: 96, right: 12, top: 14, bottom: 44 } as const;
/** The plot's height, between the margins. */
const PLOT = FRAME.height - FRAME.top - FRAME.bottom;

/** The width of each label's band of columns. */
const bandOf = (chart: ColumnChart) =>
  (FRAME.width - FRAME.left - FRAME.right) / Math.max(1, chart.labels.length);

/** The smallest of 1, 2, 2.5, 5 × 10^n at or above `value`. */
export function niceCeiling(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

/** Labels to print under the axis: about six, always the first and the last. */
function shownLabels(count: number): Set<number> {
  const every = Math.max(1, Math.ceil(count / 6));
  const shown = new Set<number>();
  for (let i = 0; i < count; i += every) shown.add(i);
  if (count > 0) shown.add(count - 1);
  return shown;
}

function columns(chart: ColumnChart, top: number): Html[] {
  const band = bandOf(chart);
  const bar = Math.max(1, (band * 0.8) / Math.max(1, chart.series.length));
  const out: Html[] = [];
  chart.labels.forEach((label, i) => {
    chart.series.forEach((s, k) => {
      const value = s.values[i] ?? 0;
      if (value <= 0) return;
      const h = Math.max(1, (value / top) * PLOT);
      const x = FRAME.left + i * band + band * 0.1 + k * bar;
      out.push(
        html`<rect
          class="bar s${k}"
          x="${x.toFixed(1)}"
          y="${(FRAME.top + PLOT - h).toFixed(1)}"
          width="${bar.toFixed(1)}"
          height="${h.toFixed(1)}"
          data-label="${label}"
          ><title>${label}${chart.series.length > 1 ? ` ${s.name}` : ''}: ${chart.format(value)}</title></rect
        >`,
      );
    });
  });
  return out;
}

function axes(chart: ColumnChart, top: number): Html {
  const band = bandOf(chart);
  const ticks = [0, 0.5, 1].map(
    (f) =>
      html`<g class="tick"
        ><line
          x1="${FRAME.left}"
          x2="${FRAME.width - FRAME.right}"
          y1="${(FRAME.top + PLOT * (1 - f)).toFixed(1)}"
          y2="${(FRAME.top + PLOT * (1 - f)).toFixed(1)}"
        /><text x="${FRAME.left - 6}" y="${(FRAME.top + PLOT * (1 - f) + 4).toFixed(1)}" text-anchor="end"
          >${chart.format(top * f)}</text
        ></g
      >`,
  );
  const shown = shownLabels(chart.labels.length);
  // The last label ends at the right edge, so that a long one is not cut off.
  const last = (i: number) => i > 0 && i === chart.labels.length - 1;
  const labels = chart.labels.flatMap((label, i) =>
    shown.has(i)
      ? [
          html`<text
            class="x"
            x="${(last(i) ? FRAME.left + (i + 1) * band : FRAME.left + i * band + band / 2).toFixed(1)}"
            y="${FRAME.height - FRAME.bottom + 18}"
            text-anchor="${last(i) ? 'end' : 'middle'}"
            >${label}</text
          >`,
        ]
      : [],
  );
  return html`${ticks}${labels}`;
}

function numbersTable(chart: ColumnChart): Html {
  const table = html`<table class="chart-numbers">
    <caption class="visually-hidden">
      ${chart.title}
    </caption>
    <thead>
      <tr>
        <th scope="col"></th>
        ${chart.series.map((s) => html`<th scope="col" class="num">${s.name}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${chart.labels.map(
        (label, i) =>
          html`<tr>
            <th scope="row">${label}</th>
            ${chart.series.map((s) => html`<td class="num">${chart.format(s.values[i] ?? 0)}</td>`)}
          </tr>`,
      )}
    </tbody>
  </table>`;
  return html`<details class="numbers">
    <summary>The numbers</summary>
    ${scrollBox(`${chart.title}: the numbers`, table)}
  </details>`;
}

/** A figure: heading, legend, the SVG chart, and the same numbers as a table that opens. */
export function columnChart(chart: ColumnChart): Html {
  const highest = Math.max(0, ...chart.series.flatMap((s) => s.values));
  const top = chart.max ?? niceCeiling(highest);
  const legend =
    chart.series.length > 1
      ? html`<ul class="legend">
          ${chart.series.map((s, k) => html`<li><span class="swatch s${k}"></span>${s.name}</li>`)}
        </ul>`
      : html``;
  const empty = highest === 0;
  return html`<figure class="chart" id="${chart.id}">
    <figcaption><h2 id="${chart.id}-title">${chart.title}</h2></figcaption>
    ${legend}
    ${
      empty
        ? html`<p class="muted">Nothing to draw for these days.</p>`
        : html`<svg
            class="chart"
            viewBox="0 0 ${FRAME.width} ${FRAME.height}"
            role="img"
            aria-labelledby="${chart.id}-title ${chart.id}-desc"
            preserveAspectRatio="xMidYMid meet"
          >
            <desc id="${chart.id}-desc">${chart.description}</desc>
            ${axes(chart, top)}${columns(chart, top)}
          </svg>`
    }
    ${numbersTable(chart)}
  </figure>`;
}
