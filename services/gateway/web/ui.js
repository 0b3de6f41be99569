// Shared pieces of the page: the htm template tag, seat names, finding a legal command, and the
// generic parts every board uses (status line, clock, result, leftover commands).

import { h } from "preact";
import { useEffect, useState } from "preact/hooks";
import htm from "htm";

export const html = htm.bind(h);

export const TITLES = { fox: "The Fox in the Forest", skull: "Skull", skye: "Isle of Skye" };

/** A seat's display name from a view's `seats` (its index when there is none). */
export function seatName(view, seat) {
  if (seat == null) return "nobody";
  const s = view?.seats?.[seat];
  return s?.name ?? `seat ${seat}`;
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

/** The turn clock, when the game has one: for each human seat its reserve, and a countdown to
 * its deadline (the turn's time, then the reserve) while it is to act. */
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
      const deadline = c.deadline_ms ?? (c.deadline ? Date.parse(c.deadline) : null);
      const left = deadline != null ? fmtMs(deadline - now) : null;
      const reserve = c.reserve_ms != null ? fmtMs(c.reserve_ms) : "–";
      return html`<span class=${"clock-seat" + (left ? " running" : "")}>
        ${seatName(view, c.seat)}: ${left ? html`<strong>${left}</strong> left · ` : ""}reserve ${reserve}
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
