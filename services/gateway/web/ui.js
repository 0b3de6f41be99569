// Shared pieces of the page: the htm template tag, seat names, finding a legal command, and the
// generic parts every board uses (status line, clock, result, leftover commands).

import { h } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import htm from "htm";

export const html = htm.bind(h);

export const TITLES = { fox: "The Fox in the Forest", skull: "Skull", skye: "Isle of Skye" };

/** A seat's display name from a view's `seats` (its index when there is none). */
export function seatName(view, seat) {
  if (seat == null) return "nobody";
  const s = view?.seats?.[seat];
  return s?.name ?? `seat ${seat}`;
}

/** "1 point", "2 points": a count with its noun in the right number. */
export function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

/** A text whose Markdown code spans (`like this`) are shown as code, the backticks dropped. */
export function withCode(text) {
  const parts = String(text ?? "").split("`");
  if (parts.length < 3) return text; // no pair of backticks: the text as it is
  // An odd backtick left at the end stays as it was written.
  const paired = parts.length % 2 === 1 ? parts : [...parts.slice(0, -2), parts.slice(-2).join("`")];
  return paired.map((p, i) => (i % 2 ? html`<code>${p}</code>` : p));
}

/**
 * A wide table's frame at a narrow width: it scrolls sideways, and says so (a line above it and
 * a shadow on the side with more) whenever its content is wider than the screen.
 */
export function Scroll({ label, children }) {
  const ref = useRef(null);
  const [more, setMore] = useState({ wide: false, left: false, right: false });
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return undefined;
    const measure = () => {
      const wide = el.scrollWidth > el.clientWidth + 1;
      const left = wide && el.scrollLeft > 1;
      const right = wide && el.scrollLeft + el.clientWidth < el.scrollWidth - 1;
      setMore((old) => (old.wide === wide && old.left === left && old.right === right ? old : { wide, left, right }));
    };
    measure();
    el.addEventListener("scroll", measure, { passive: true });
    const seen = typeof ResizeObserver === "function" ? new ResizeObserver(measure) : null;
    seen?.observe(el);
    if (el.firstElementChild) seen?.observe(el.firstElementChild);
    return () => {
      el.removeEventListener("scroll", measure);
      seen?.disconnect();
    };
  }, []);
  const edges = `${more.left ? " more-left" : ""}${more.right ? " more-right" : ""}`;
  return html`<div class=${`scroll-frame${more.wide ? " wide" : ""}${edges}`}>
    ${more.wide ? html`<p class="scroll-hint" aria-hidden="true">Scroll sideways for more ⇆</p>` : ""}
    <div class="scroll-body"><div class="scroll" ref=${ref} tabindex=${more.wide ? "0" : undefined}
      role=${more.wide ? "region" : undefined}
      aria-label=${more.wide ? `${label || "Table"} (scrolls sideways)` : undefined}>${children}</div></div>
  </div>`;
}

/** JSON with sorted keys: two commands are the same when their canonical texts are. */
export function canon(value) {
  if (Array.isArray(value)) return `[${value.map(canon).join(",")}]`;
  if (value && typeof value === "object") {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canon(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** The legal commands of `type` (optionally matching `where`). */
export function legalOf(legal, type, where = () => true) {
  return (legal || []).filter((c) => c.type === type && where(c));
}

/** "Your turn" / "Waiting for ana, bob" / the outcome, read out when it changes. */
export function Status({ view, mySeat, feed }) {
  let text;
  if (!view) text = feed === "closed" ? "Not connected." : "Connecting…";
  else if (view.outcome) {
    const winners = (view.outcome.winners || []).map((s) => seatName(view, s));
    text = `Game over: ${winners.join(" and ") || "nobody"} won.`;
  } else if (view.phase === "waiting") {
    const open = (view.seats || []).filter((s) => s.open).map((s) => s.name);
    text = open.length ? `Waiting for players: ${open.join(", ")}.` : "Waiting for the deal.";
  } else if (mySeat != null && (view.to_act || []).includes(mySeat)) text = "Your turn.";
  else {
    const who = (view.to_act || []).map((s) => seatName(view, s));
    text = who.length ? `Waiting for ${who.join(", ")}.` : "…";
  }
  return html`<p class="status" role="status" aria-live="polite">${text}</p>`;
}

function fmtMs(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/**
 * A running seat's time, from its clock fields: the deadline is armed at the turn's start plus
 * the turn's time plus the reserve (shared/match/clock.py), so the countdown to the deadline
 * already holds the reserve. Split it: the turn's own time first, then the reserve.
 * Returns {turn, reserve} in ms (reserve_ms alone when the seat is not to act).
 */
export function clockLeft(c, now) {
  const deadline = c.deadline_ms ?? (c.deadline ? Date.parse(c.deadline) : null);
  const reserve = c.reserve_ms ?? null;
  if (deadline == null) return { turn: null, reserve };
  const left = Math.max(0, deadline - now);
  const kept = reserve ?? 0;
  return { turn: Math.max(0, left - kept), reserve: Math.min(kept, left) };
}

/** The turn clock, when the game has one: for each human seat its reserve, and while it is to
 * act the turn's time left, then (once the turn's time is spent) its reserve counting down. */
export function Clock({ view }) {
  const clock = view?.clock;
  const [now, setNow] = useState(Date.now());
  const running = !!clock && !view.outcome;
  useEffect(() => {
    if (!running) return undefined;
    const t = setInterval(() => setNow(Date.now()), 500); // the display ticks; nothing is fetched
    return () => clearInterval(t);
  }, [running]);
  if (!clock || !Array.isArray(clock.seats)) return null;
  return html`<div class="clock" aria-label="Turn clock">
    ${clock.seats.filter((c) => !view.seats?.[c.seat]?.bot).map((c) => {
      const { turn, reserve } = clockLeft(c, now);
      const reserveText = reserve != null ? fmtMs(reserve) : "–";
      const who = seatName(view, c.seat);
      if (turn == null) {
        return html`<span class="clock-seat">${who}: reserve ${reserveText}</span>`;
      }
      if (turn > 0) {
        return html`<span class="clock-seat running">
          ${who}: <strong>${fmtMs(turn)}</strong> left this turn · then reserve ${reserveText}
        </span>`;
      }
      return html`<span class="clock-seat running in-reserve">
        ${who}: turn time spent · reserve <strong>${reserveText}</strong> left
      </span>`;
    })}
  </div>`;
}

/** The scores and winners once the game is over. */
export function Result({ view }) {
  if (!view?.outcome) return null;
  // Scores are null when a game ends by resignation before the engine's end.
  const { scores, winners = [], ranks = [], resigned = [], ended_by: endedBy } = view.outcome;
  const seats = (ranks.length ? ranks : scores || []).map((_, seat) => seat);
  return html`<section class="result" aria-label="Result">
    <h3>Result${endedBy === "resignation" ? " (by resignation)" : ""}</h3>
    <ol>
      ${seats
        .sort((a, b) => (ranks[a] ?? 0) - (ranks[b] ?? 0))
        .map(
          (seat) => html`<li>
            ${seatName(view, seat)}${scores ? `: ${scores[seat]}` : ""}
            ${(winners || []).includes(seat) ? " (winner)" : ""}${(resigned || []).includes(seat) ? " (resigned)" : ""}
          </li>`,
        )}
    </ol>
  </section>`;
}

/** A short text for a command (for generic buttons). */
export function describe(command) {
  const rest = Object.entries(command)
    .filter(([k]) => k !== "type")
    .map(([k, v]) => `${k} ${typeof v === "object" ? JSON.stringify(v) : v}`);
  return [command.type.replaceAll("_", " "), ...rest].join(", ");
}

/** Buttons for the legal commands no board part shows (e.g. resigning, a client seed). */
export function OtherCommands({ commands, send, busy }) {
  if (!commands.length) return null;
  return html`<section class="other" aria-label="Other moves">
    <h3>Other moves</h3>
    ${commands.map(
      (c) => html`<button type="button" disabled=${busy} onClick=${() => send(c)}>${describe(c)}</button>`,
    )}
  </section>`;
}
