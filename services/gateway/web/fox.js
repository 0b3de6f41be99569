// The Fox in the Forest: your hand, the decree card, the trick, the last trick, tricks and
// scores, and the Fox (exchange the decree card) and Woodcutter (return a card) choices.

import { html, legalOf, plural, seatName } from "./ui.js";

export const HANDLES = new Set(["play", "exchange_decree", "keep_decree", "return_card"]);

const SPECIAL = { 1: "Swan", 3: "Fox", 5: "Woodcutter", 7: "Treasure", 9: "Witch", 11: "Monarch" };
const SUIT_MARK = { bells: "♣", keys: "♦", moons: "☾" };

export function cardText(card) {
  const special = SPECIAL[card.rank] ? ` (${SPECIAL[card.rank]})` : "";
  return `${card.rank} of ${card.suit}${special}`;
}

const sameCard = (a, b) => a && b && a.suit === b.suit && a.rank === b.rank;

function Face({ card }) {
  return html`<span class="rank">${card.rank}</span>
    <span class="suit" aria-hidden="true">${SUIT_MARK[card.suit] || ""} ${card.suit}</span>
    ${SPECIAL[card.rank] ? html`<span class="special">${SPECIAL[card.rank]}</span>` : ""}`;
}

/** A card that is only shown. */
export function Card({ card, label }) {
  if (!card) return html`<span class="card back" aria-label="hidden card"></span>`;
  return html`<span class=${`card suit-${card.suit}`} role="img" aria-label=${label || cardText(card)}>
    <${Face} card=${card} />
  </span>`;
}

function Trick({ view, cards, title, winner }) {
  return html`<section class="trick" aria-label=${title}>
    <h3>${title}</h3>
    ${cards && cards.length
      ? html`<ul class="row">
          ${cards.map(
            (p) => html`<li>
              <${Card} card=${p.card} label=${`${seatName(view, p.seat)} played ${cardText(p.card)}`} />
              <span class="who">${seatName(view, p.seat)}</span>
            </li>`,
          )}
        </ul>`
      : html`<p class="muted">No cards.</p>`}
    ${winner != null ? html`<p>Won by ${seatName(view, winner)}.</p>` : ""}
  </section>`;
}

/** Treasure of the game so far: the rounds played (`round_scores`) and this round's (`treasure`,
 * which starts again at 0 each round), as `scores` counts it. */
export function gameTreasure(view, seat) {
  const past = (view.round_scores || []).reduce((sum, r) => sum + (r.treasure?.[seat] ?? 0), 0);
  return past + (view.treasure?.[seat] ?? 0);
}

function Seats({ view }) {
  return html`<table class="seats">
    <caption>Players</caption>
    <thead><tr><th scope="col">Player</th><th scope="col">Cards</th><th scope="col">Tricks</th>
      <th scope="col">Treasure</th><th scope="col">Score</th><th scope="col">Known</th></tr></thead>
    <tbody>
      ${[0, 1].map((s) => {
        const voids = view.voids?.[s] || [];
        const known = view.known_cards?.[s] || [];
        const facts = [
          voids.length ? `no ${voids.join(", ")}` : "",
          known.length ? `holds ${known.map(cardText).join(", ")}` : "",
        ].filter(Boolean);
        return html`<tr class=${(view.to_act || []).includes(s) ? "acting" : ""}>
          <th scope="row">${seatName(view, s)}${s === view.seat ? " (you)" : ""}
            ${s === view.dealer ? html` <span class="tag">dealer</span>` : ""}</th>
          <td>${view.hand_sizes?.[s] ?? "?"}</td>
          <td>${view.tricks_won?.[s] ?? 0}</td>
          <td data-treasure=${gameTreasure(view, s)}>${gameTreasure(view, s)}${view.treasure?.[s]
            ? html` <span class="muted">(${view.treasure[s]} this round)</span>` : ""}</td>
          <td>${view.scores?.[s] ?? 0}</td>
          <td>${facts.join("; ")}</td>
        </tr>`;
      })}
    </tbody>
  </table>`;
}

export function Board({ view, send, busy }) {
  const legal = view.legal_commands || [];
  const hand = view.hand;
  // The action a hand card takes in this phase, if any.
  const actionOf = (card) => {
    for (const type of ["play", "exchange_decree", "return_card"]) {
      const c = legalOf(legal, type, (x) => sameCard(x.card, card))[0];
      if (c) return c;
    }
    return null;
  };
  const verb = { play: "Play", exchange_decree: "Exchange for the decree card:", return_card: "Put under the deck:" };
  const keep = legalOf(legal, "keep_decree")[0];
  let prompt = null;
  if (view.phase === "fox_exchange" && legal.length) {
    prompt = "Your Fox: exchange a card of your hand with the decree card, or keep it.";
  } else if (view.phase === "woodcutter_return" && legal.length) {
    prompt = "Your Woodcutter drew a card: put one card of your hand at the bottom of the deck.";
  }
  return html`<div class="board fox">
    <div class="info">
      <span>Round ${view.round}</span><span>Game to ${view.target}</span>
      <span>Deck: ${view.deck_size}</span><span>Trump: ${view.trump}</span>
    </div>
    <div class="table-row">
      <section class="decree" aria-label="Decree card">
        <h3>Decree</h3>
        <${Card} card=${view.decree} label=${view.decree ? `Decree card: ${cardText(view.decree)}` : "no decree card"} />
      </section>
      <${Trick} view=${view} cards=${view.trick} title="Trick" />
      <${Trick}
        view=${view}
        cards=${view.last_trick?.cards}
        winner=${view.last_trick?.winner}
        title="Last trick"
      />
    </div>
    <${Seats} view=${view} />
    ${hand
      ? html`<section class="hand" aria-label="Your hand">
          <h3>Your hand</h3>
          ${prompt ? html`<p class="prompt">${prompt}</p>` : ""}
          <div class="row">
            ${hand.map((card) => {
              const c = actionOf(card);
              return html`<button
                type="button"
                class=${`card suit-${card.suit}`}
                disabled=${!c || busy}
                aria-label=${c ? `${verb[c.type]} ${cardText(card)}` : cardText(card)}
                onClick=${() => c && send(c)}
              ><${Face} card=${card} /></button>`;
            })}
          </div>
          ${keep
            ? html`<button type="button" disabled=${busy} onClick=${() => send(keep)}>Keep the decree card</button>`
            : ""}
        </section>`
      : ""}
    ${view.round_scores?.length
      ? html`<section aria-label="Rounds"><h3>Rounds</h3><ol>
          ${view.round_scores.map(
            (r) => html`<li>Round ${r.round}: ${[0, 1]
              .map((s) => {
                // A round's points are its tricks' and its Treasure's (the rule book's 7s).
                const total = r.total?.[s] ?? r.points[s] + (r.treasure?.[s] ?? 0);
                const extra = r.treasure?.[s] ? ` (${r.points[s]} for tricks + ${r.treasure[s]} treasure)` : "";
                return `${seatName(view, s)} ${plural(r.tricks[s], "trick")}, ${plural(total, "point")}${extra}`;
              })
              .join("; ")}</li>`,
          )}
        </ol></section>`
      : ""}
  </div>`;
}
