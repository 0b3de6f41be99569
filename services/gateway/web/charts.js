// Small drawings of the tournament and bot pages, in SVG or CSS: no chart library, nothing
// fetched. Every drawing repeats what the text beside it says, so each is either hidden from
// screen readers (the text is read) or an image named by a summary of what it shows.

import { html } from "./ui.js";

/** A number with `digits` decimals and a true minus sign ("–" for a missing number). */
export function fmt(x, digits = 2) {
  if (x == null || !Number.isFinite(x)) return "–";
  const text = Math.abs(x).toFixed(digits);
  return x < 0 && Number(text) !== 0 ? `−${text}` : text;
}

/** A time the API gives (ISO 8601, UTC) to the second: "2026-01-02 10:11:12 UTC". */
export function when(iso) {
  return iso ? `${iso.replace("T", " ").replace(/\.\d+Z$|Z$/, "")} UTC` : "–";
}

/** A rate as a percentage ("–" for a missing one). */
export function pct(x, digits = 1) {
  return x == null ? "–" : `${(x * 100).toFixed(digits)}%`;
}

/** "done of total games" with a native progress bar (read out as a percentage). */
export function Progress({ progress, label = "Games played" }) {
  const done = progress?.done ?? 0;
  const total = progress?.total ?? 0;
  return html`<span class="progress">
    <progress max=${Math.max(1, total)} value=${done} aria-label=${label}></progress>
    <span class="progress-text">${done} of ${total} games</span>
  </span>`;
}

/** An interval [lo, hi] with its estimate `mid` on the scale [min, max] (and a reference
 * `mark`, such as an even share), as one row of a forest plot. */
export function IntervalBar({ lo, hi, mid, min, max, mark }) {
  if (lo == null || hi == null || !(max > min)) return null;
  const x = (v) => 2 + ((Math.min(max, Math.max(min, v)) - min) / (max - min)) * 116;
  return html`<svg class="interval" viewBox="0 0 120 14" aria-hidden="true" focusable="false">
    <line class="axis" x1="2" y1="7" x2="118" y2="7" />
    ${mark != null ? html`<line class="mark" x1=${x(mark)} y1="1" x2=${x(mark)} y2="13" />` : ""}
    <line class="range" x1=${x(lo)} y1="7" x2=${x(hi)} y2="7" />
    ${mid != null ? html`<circle class="mid" cx=${x(mid)} cy="7" r="3" />` : ""}
  </svg>`;
}

// A diverging scale for "how often the row finished ahead": red below an even share, blue
// above (ColorBrewer's RdBu, readable with the common colour blindnesses), white at 50%.
const RAMP = ["#b2182b", "#ef8a62", "#fddbc7", "#f7f7f7", "#d1e5f0", "#67a9cf", "#2166ac"];

function rgbOf(hex) {
  return [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
}

/** The heatmap's colour of rate `t` (0..1) as [r, g, b]. */
export function heat(t) {
  const x = Math.min(1, Math.max(0, t)) * (RAMP.length - 1);
  const i = Math.min(RAMP.length - 2, Math.floor(x));
  const [a, b] = [rgbOf(RAMP[i]), rgbOf(RAMP[i + 1])];
  return a.map((v, k) => Math.round(v + (b[k] - v) * (x - i)));
}

export const rgb = (c) => `rgb(${c.join(",")})`;

/** Black or white, whichever reads better on colour `c` (WCAG's relative luminance). */
export function inkOn(c) {
  const [r, g, b] = c.map((v) => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.18 ? "#111" : "#fff";
}

/** The heatmap's legend: the same scale, 0% to 100%. */
export function HeatLegend({ caption }) {
  const stops = [0, 0.25, 0.5, 0.75, 1].map((t) => `${rgb(heat(t))} ${t * 100}%`).join(", ");
  return html`<div class="legend">
    <span>0%</span>
    <span class="ramp" style=${`background: linear-gradient(to right, ${stops})`} aria-hidden="true"></span>
    <span>100%</span>
    <span class="muted">${caption}</span>
  </div>`;
}

/**
 * An SPRT's log-likelihood ratio over complete pairs, with its bounds: H0 is accepted at or
 * below `lower`, H1 at or above `upper`. `history` ([pairs, llr] points) when the service
 * gives it; else only the current point (the test starts at 0 with no pair).
 */
export function LlrChart({ sprt, capPairs }) {
  const history = Array.isArray(sprt.history) && sprt.history.length ? sprt.history : null;
  const points = history
    ? history[0][0] > 0
      ? [[0, 0], ...history]
      : history
    : [[sprt.pairs, sprt.llr]];
  const [W, H] = [560, 240];
  const m = { l: 52, r: 92, t: 14, b: 38 };
  const xMax = Math.max(1, capPairs || 0, ...points.map((p) => p[0]));
  const ys = points.map((p) => p[1]);
  let yLo = Math.min(sprt.lower, 0, ...ys);
  let yHi = Math.max(sprt.upper, 0, ...ys);
  const pad = (yHi - yLo) * 0.08 || 1;
  yLo -= pad;
  yHi += pad;
  const x = (p) => m.l + (p / xMax) * (W - m.l - m.r);
  const y = (v) => m.t + ((yHi - v) / (yHi - yLo)) * (H - m.t - m.b);
  const last = points[points.length - 1];
  const verdict = { H0: "H0 accepted", H1: "H1 accepted" }[sprt.result] ?? "undecided";
  const summary =
    `Log-likelihood ratio over pairs: ${fmt(sprt.llr)} after ${sprt.pairs} pairs` +
    ` (${verdict}); bounds ${fmt(sprt.lower)} (H0) and ${fmt(sprt.upper)} (H1)` +
    (history ? `, ${history.length} points` : ", current value only");
  const xTicks = [...new Set([0, Math.round(xMax / 2), xMax])];
  const bound = (v, name, cls) => html`<g class=${`llr-bound ${cls}`}>
    <line x1=${m.l} x2=${W - m.r} y1=${y(v)} y2=${y(v)} />
    <text x=${W - m.r + 6} y=${y(v) + 4}>${name} ${fmt(v)}</text>
  </g>`;
  return html`<svg class="llr-chart" viewBox=${`0 0 ${W} ${H}`} role="img" aria-label=${summary}>
    <rect class="plot" x=${m.l} y=${m.t} width=${W - m.l - m.r} height=${H - m.t - m.b} />
    <line class="zero" x1=${m.l} x2=${W - m.r} y1=${y(0)} y2=${y(0)} />
    ${bound(sprt.upper, "H1", "upper")}
    ${bound(sprt.lower, "H0", "lower")}
    ${[sprt.lower, 0, sprt.upper].map(
      (v) => html`<text class="tick" x=${m.l - 6} y=${y(v) + 4} text-anchor="end">${fmt(v, 1)}</text>`,
    )}
    ${xTicks.map(
      (p) => html`<text class="tick" x=${x(p)} y=${H - m.b + 16} text-anchor="middle">${p}</text>`,
    )}
    <text class="axis-name" x=${(m.l + W - m.r) / 2} y=${H - 4} text-anchor="middle">complete pairs</text>
    <text class="axis-name" x="12" y=${(m.t + H - m.b) / 2} text-anchor="middle"
      transform=${`rotate(-90 12 ${(m.t + H - m.b) / 2})`}>LLR</text>
    ${points.length > 1
      ? html`<polyline class="llr-line" points=${points.map(([p, v]) => `${x(p)},${y(v)}`).join(" ")} />`
      : ""}
    <circle class="llr-now" cx=${x(last[0])} cy=${y(last[1])} r="4.5" />
  </svg>`;
}

/** A bot's latency percentiles as bars against its budget (the round trip it is allowed). */
export function LatencyChart({ latency, budget }) {
  const rows = [
    ["p50", latency?.p50],
    ["p95", latency?.p95],
    ["max", latency?.max],
  ];
  if (rows.every(([, v]) => v == null)) return null;
  const top = Math.max(budget || 0, ...rows.map(([, v]) => v ?? 0), 1);
  const [W, left, right] = [420, 44, 70];
  const x = (v) => left + (v / top) * (W - left - right);
  const summary =
    `Latency: ${rows.map(([k, v]) => `${k} ${v ?? "–"} ms`).join(", ")}` +
    (budget ? `, against a budget of ${budget} ms` : "");
  return html`<svg class="latency-chart" viewBox=${`0 0 ${W} 108`} role="img" aria-label=${summary}>
    ${rows.map(
      ([k, v], i) => html`<g class="bar">
        <text x=${left - 6} y=${22 + i * 24} text-anchor="end">${k}</text>
        <rect x=${left} y=${10 + i * 24} width=${Math.max(1, x(v ?? 0) - left)} height="16" />
        <text class="value" x=${x(v ?? 0) + 4} y=${22 + i * 24}>${v ?? "–"} ms</text>
      </g>`,
    )}
    ${budget
      ? html`<g class="budget"><line x1=${x(budget)} x2=${x(budget)} y1="4" y2="86" />
          <text x=${x(budget)} y="102" text-anchor="end">budget ${budget} ms</text></g>`
      : ""}
  </svg>`;
}
