// The public ladder (#/ladder?game=<name>): GET /v1/ratings of the chosen game, one row per bot
// spec, best ordinal first, each with its skill μ, its 95% interval drawn on one scale for the
// whole table, its ordinal and its rated games. Built-in specs are rated over every finished
// all-bot game, live and in tournaments; a registered bot is listed only if it opted in. No key
// is needed; the table is read again on each visit, on a reload and with Refresh.

import { useEffect, useState } from "preact/hooks";
import { api } from "./api.js";
import { IntervalBar, fmt } from "./charts.js";
import { Scroll, TITLES, html } from "./ui.js";

/** A row's name: a registered bot's, linked to its page, with its label; else the label. */
function BotName({ row }) {
  if (!row.bot_id) return html`<code>${row.bot}</code>`;
  return html`<a href=${`#/bots/${encodeURIComponent(row.bot_id)}`}>${row.name}</a>
    ${" "}<span class="muted">${row.bot}</span> <span class="tag">registered</span>`;
}

function Table({ doc }) {
  const rows = doc.ratings;
  if (!rows.length) {
    return html`<p class="muted" data-empty="true">No rated game of ${TITLES[doc.game] || doc.game} yet:
      the ladder fills as all-bot games and tournaments finish.</p>`;
  }
  // One scale for every bar, so intervals compare across rows.
  const lo = Math.min(...rows.map((r) => r.mu_ci[0]));
  const hi = Math.max(...rows.map((r) => r.mu_ci[1]));
  return html`<${Scroll} label="Ladder"><table class="ratings ladder">
    <caption class="muted">openskill (Plackett–Luce) skill μ with its 95% interval μ ± 1.96σ
      (the bars share one scale, from ${fmt(lo)} to ${fmt(hi)}), ranked by the ordinal μ − 3σ,
      a conservative estimate: a bot with few games has a wide interval and ranks low until
      its games narrow it.</caption>
    <thead><tr><th scope="col">#</th><th scope="col">Bot</th><th scope="col">Games</th>
      <th scope="col">μ</th><th scope="col">95% interval</th>
      <th scope="col">Ordinal (μ − 3σ)</th></tr></thead>
    <tbody>
      ${rows.map(
        (r) => html`<tr data-bot=${r.bot} data-rank=${r.rank}>
          <td>${r.rank}</td>
          <th scope="row"><${BotName} row=${r} /></th>
          <td class="games">${r.games}</td>
          <td>${fmt(r.mu)} <span class="ci">σ ${fmt(r.sigma)}</span></td>
          <td class="mu-interval"><span class="ci">${fmt(r.mu_ci[0])} to ${fmt(r.mu_ci[1])}</span>
            <${IntervalBar} lo=${r.mu_ci[0]} hi=${r.mu_ci[1]} mid=${r.mu} min=${lo} max=${hi} /></td>
          <td>${fmt(r.ordinal)}</td>
        </tr>`,
      )}
    </tbody>
  </table><//>`;
}

/** `#/ladder?game=<name>`: the ladder of one game, chosen with a selector. */
export function LadderPage({ game, setGame }) {
  const [types, setTypes] = useState(null);
  const [doc, setDoc] = useState(null);
  const [error, setError] = useState(null);
  const [refresh, setRefresh] = useState(0);
  useEffect(() => {
    api.gameTypes().then(setTypes, setError);
  }, []);
  const names = types ? types.map((t) => t.name) : Object.keys(TITLES);
  const chosen = names.includes(game) ? game : names[0];
  useEffect(() => {
    if (!chosen) return;
    let stopped = false;
    setDoc(null);
    api.ratings(chosen).then(
      (d) => {
        if (stopped) return;
        setDoc(d);
        setError(null);
      },
      (e) => !stopped && setError(e),
    );
    return () => {
      stopped = true;
    };
  }, [chosen, refresh]);
  const title = (name) => types?.find((t) => t.name === name)?.title || TITLES[name] || name;
  return html`<section class="ladder-page" aria-labelledby="h-ladder" data-game=${chosen}>
    <div class="game-head">
      <h2 id="h-ladder">Ladder</h2>
      <label>Game <select value=${chosen} onChange=${(e) => setGame(e.currentTarget.value)}>
        ${names.map((n) => html`<option value=${n}>${title(n)}</option>`)}
      </select></label>
      <button type="button" onClick=${() => setRefresh(refresh + 1)}>Refresh</button>
    </div>
    <p class="muted">Every built-in bot spec, each setting apart
      (<code>ismcts:budget_ms=100</code> and <code>ismcts:budget_ms=200</code> are two rows),
      rated over the finished games seating bots alone, live games and tournaments of every
      format; registered bots that opted in (<code>"ladder": true</code>) are rated with them.
      A game with a human seat is not rated.</p>
    ${error ? html`<p class="error" role="alert">${error.message}</p>` : ""}
    ${doc && doc.game === chosen
      ? html`<${Table} doc=${doc} />`
      : !error ? html`<p class="muted">Loading the ladder…</p>` : ""}
  </section>`;
}
