// Skull: every stack with its face-down count, your own discs, the bid, the flips, the blind
// pick and the lost disc.

import { html, legalOf, plural, seatName } from "./ui.js";

export const HANDLES = new Set(["place", "bid", "pass", "flip", "pick_disc", "discard", "choose_starter"]);

function Disc({ face, label }) {
  const cls = face ? `disc ${face}` : "disc down";
  return html`<span class=${cls} role="img" aria-label=${label || (face ? face : "face-down disc")}>
    ${face === "skull" ? "☠" : face === "flower" ? "✿" : ""}
  </span>`;
}

function Player({ view, p, flips, send, busy }) {
  const flip = legalOf(view.legal_commands, "flip", (c) => c.seat === p.seat)[0];
  const name = seatName(view, p.seat);
  const acting = (view.to_act || []).includes(p.seat);
  const marks = [
    p.seat === view.seat ? "you" : "",
    p.seat === view.bidder ? `bid ${view.bid}` : "",
    p.seat === view.challenger ? "challenger" : "",
    p.passed ? "passed" : "",
    p.eliminated ? "out" : "",
    p.known_skull === false ? "no skull left" : "",
  ].filter(Boolean);
  return html`<li class=${"player" + (acting ? " acting" : "") + (p.eliminated ? " out" : "")}>
    <h4>${name} ${marks.map((m) => html`<span class="tag">${m}</span>`)}</h4>
    <div class="stack" aria-label=${`${name}'s stack: ${p.face_down} face down, ${flips.length} flipped`}>
      ${Array.from({ length: p.face_down }, () => html`<${Disc} />`)}
      ${flips.map((f) => html`<${Disc} face=${f} label=${`flipped ${f}`} />`)}
      <span class="count">${p.face_down} face down</span>
    </div>
    <p class="muted">
      Discs ${p.discs} (${p.hand_size} in hand) · wins ${"★".repeat(p.wins) || "0"}
    </p>
    ${flip
      ? html`<button type="button" disabled=${busy} onClick=${() => send(flip)}>
          Flip ${p.seat === view.seat ? "your own stack" : `${name}'s top disc`}
        </button>`
      : ""}
  </li>`;
}

export function Board({ view, send, busy }) {
  const legal = view.legal_commands || [];
  const flipsBy = (seat) => (view.flipped || []).filter((f) => f.seat === seat).map((f) => f.disc);
  const places = legalOf(legal, "place");
  const bids = legalOf(legal, "bid");
  const pass = legalOf(legal, "pass")[0];
  const picks = legalOf(legal, "pick_disc");
  const discards = legalOf(legal, "discard");
  const starters = legalOf(legal, "choose_starter");
  const own = view.hand != null;
  return html`<div class="board skull">
    <div class="info">
      <span>Round ${view.round}</span><span>Phase: ${view.phase}</span>
      <span>Discs on the table: ${view.table}</span>
      <span>Bid: ${view.bid ? `${view.bid} by ${seatName(view, view.bidder)}` : "none"}</span>
      ${view.skull_owner != null ? html`<span>Skull of ${seatName(view, view.skull_owner)}</span>` : ""}
    </div>
    <ul class="players">
      ${(view.players || []).map(
        (p) => html`<${Player} view=${view} p=${p} flips=${flipsBy(p.seat)} send=${send} busy=${busy} />`,
      )}
    </ul>
    ${view.flipped?.length
      ? html`<p>Flipped: ${view.flipped.map((f) => `${seatName(view, f.seat)} ${f.disc}`).join(", ")}</p>`
      : ""}
    ${own
      ? html`<section class="mine" aria-label="Your discs">
          <h3>Your discs</h3>
          <p>In hand: ${Array.from({ length: view.hand.flower || 0 }, () => html`<${Disc} face="flower" />`)}
            ${Array.from({ length: view.hand.skull || 0 }, () => html`<${Disc} face="skull" />`)}
            (${plural(view.hand.flower ?? 0, "flower")}, ${plural(view.hand.skull ?? 0, "skull")})</p>
          <p>Your stack (bottom first): ${view.stack?.length
            ? view.stack.map((d) => html`<${Disc} face=${d} />`)
            : "empty"}</p>
          ${view.lost?.length ? html`<p>You lost: ${view.lost.join(", ")}</p>` : ""}
        </section>`
      : ""}
    ${places.length || bids.length || pass || picks.length || discards.length || starters.length
      ? html`<section class="actions" aria-label="Your moves">
      ${places.map(
        (c) => html`<button type="button" disabled=${busy} onClick=${() => send(c)}>Place a ${c.disc}</button>`,
      )}
      ${bids.length
        ? html`<div class="bids" role="group" aria-label="Bid">
            <span>Bid:</span>
            ${bids.map(
              (c) => html`<button type="button" disabled=${busy} aria-label=${`Bid ${c.count}`} onClick=${() => send(c)}>${c.count}</button>`,
            )}
          </div>`
        : ""}
      ${pass ? html`<button type="button" disabled=${busy} onClick=${() => send(pass)}>Pass</button>` : ""}
      ${picks.length
        ? html`<div role="group" aria-label="Blind pick">
            <p class="prompt">Take one of ${seatName(view, view.challenger)}'s ${view.pick_from} discs, face down:</p>
            ${picks.map(
              (c) => html`<button type="button" class="disc down pick" disabled=${busy}
                aria-label=${`Take disc ${c.index + 1} of ${view.pick_from}`} onClick=${() => send(c)}>${c.index + 1}</button>`,
            )}
          </div>`
        : ""}
      ${discards.map(
        (c) => html`<button type="button" disabled=${busy} onClick=${() => send(c)}>Discard a ${c.disc}</button>`,
      )}
      ${starters.length
        ? html`<div role="group" aria-label="Choose who starts">
            <p class="prompt">Choose who starts the next round:</p>
            ${starters.map(
              (c) => html`<button type="button" disabled=${busy} onClick=${() => send(c)}>${seatName(view, c.seat)} starts</button>`,
            )}
          </div>`
        : ""}
    </section>`
      : ""}
  </div>`;
}
