// Registered bots: the lobby's list, and a bot's page (#/bots/<id>) with what GET /v1/bots/{id}
// says of it (no key needed): its games, transport, budget, failure policy and `stats` (decisions,
// latency percentiles against its budget, timeouts, illegal answers, errors, fallbacks), and the
// games it sat in (GET /v1/games?bot=: the lobby's games it sits in, then every finished game of
// it in the archive, tournaments' included, by the archive's per-bot index).

import { useEffect, useState } from "preact/hooks";
import { api } from "./api.js";
import { LatencyChart, pct, when } from "./charts.js";
import { TITLES, html } from "./ui.js";

const SCAN_PAGES = 3; // lobby pages of 100 games looked through for the bot's games
const SHOW_GAMES = 20;

/** The lobby's list of registered bots, each linked to its page. */
export function BotList({ refresh }) {
  const [bots, setBots] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    api.bots().then(setBots, setError);
  }, [refresh]);
  return html`<section class="lobby-list" aria-labelledby="h-bots">
    <h2 id="h-bots">Registered bots</h2>
    ${error ? html`<p class="error" role="alert">${error.message}</p>` : ""}
    ${bots == null
      ? html`<p class="muted">Loading…</p>`
      : bots.length === 0
        ? html`<p class="muted">No bot is registered yet (register one with POST /v1/bots).</p>`
        : html`<ul>
            ${bots.map(
              (b) => html`<li data-bot=${b.id}>
                <span><a href=${`#/bots/${encodeURIComponent(b.id)}`}><strong>${b.name}</strong></a>${" "}
                  · ${b.games.map((g) => TITLES[g] || g).join(", ")} · ${b.transport}
                  <span class="muted"> · ${b.id}</span>${b.retired ? html` <span class="tag">retired</span>` : ""}</span>
              </li>`,
            )}
          </ul>`}
  </section>`;
}

/** The bot's games, newest first (GET /v1/games?bot=): [games, how many were looked at]. */
async function gamesOf(botId) {
  const found = [];
  let cursor = null;
  let scanned = 0;
  for (let page = 0; page < SCAN_PAGES && found.length < SHOW_GAMES; page++) {
    const doc = await api.games(cursor, 100, botId);
    scanned += doc.games.length;
    for (const g of doc.games) {
      const seats = (g.seats || []).filter((s) => s.bot_id === botId).map((s) => s.seat);
      if (seats.length) found.push({ ...g, mine: seats });
    }
    cursor = doc.next_cursor;
    if (!cursor) break;
  }
  return [found.slice(0, SHOW_GAMES), scanned];
}

function Stat({ name, value, label, of }) {
  const share = of && value != null ? ` (${pct(value / of)})` : "";
  return html`<div data-stat=${name}><dt>${label}</dt><dd>${value ?? "–"}${share}</dd></div>`;
}

function Stats({ bot }) {
  const s = bot.stats;
  if (!s || !s.decisions) {
    return html`<section class="panel" aria-labelledby="h-bot-stats">
      <h3 id="h-bot-stats">Decisions</h3><p class="muted">No decision yet.</p></section>`;
  }
  const lat = s.latency_ms || {};
  return html`<section class="panel" aria-labelledby="h-bot-stats">
    <h3 id="h-bot-stats">Decisions</h3>
    <dl class="stats">
      <${Stat} name="decisions" label="Decisions" value=${s.decisions} />
      <${Stat} name="p50" label="Latency p50" value=${lat.p50 != null ? `${lat.p50} ms` : null} />
      <${Stat} name="p95" label="Latency p95" value=${lat.p95 != null ? `${lat.p95} ms` : null} />
      <${Stat} name="max" label="Latency max" value=${lat.max != null ? `${lat.max} ms` : null} />
      <${Stat} name="timeouts" label="Timeouts" value=${s.timeouts} of=${s.decisions} />
      <${Stat} name="illegal" label="Illegal answers" value=${s.illegal} of=${s.decisions} />
      <${Stat} name="errors" label="Errors" value=${s.errors} of=${s.decisions} />
      <${Stat} name="fallbacks" label="Fallbacks" value=${s.fallbacks} of=${s.decisions} />
    </dl>
    <p class="muted">Latency: the round trip of each of its last decisions (up to 1000), against
      its budget of ${bot.budget_ms} ms; a fallback is a decision its ${bot.on_failure} policy made
      after a timeout, an illegal or malformed answer, an error or an unreachable bot.</p>
    <${LatencyChart} latency=${lat} budget=${bot.budget_ms} />
  </section>`;
}

function RecentGames({ botId, refresh }) {
  const [found, setFound] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    gamesOf(botId).then(setFound, setError);
  }, [botId, refresh]);
  const [games, scanned] = found || [[], 0];
  return html`<section class="panel" aria-labelledby="h-bot-games">
    <h3 id="h-bot-games">Recent games</h3>
    ${error ? html`<p class="error" role="alert">${error.message}</p>` : ""}
    ${found == null && !error
      ? html`<p class="muted">Looking through the lobby…</p>`
      : html`<p class="muted">Its games, newest first: those being played in the lobby, then
          every finished one (${scanned} shown).</p>
        ${games.length === 0
          ? html`<p class="muted">No game of this bot among them.</p>`
          : html`<ul class="tgames">
              ${games.map(
                (g) => html`<li data-game=${g.id}>
                  <span><strong>${TITLES[g.game] || g.game}</strong> · ${g.seats.map((s) => s.name).join(" vs ")}
                    <span class="muted"> · seat ${g.mine.join(", ")} · ${g.id} · ${g.status}</span></span>
                  ${g.status === "finished"
                    ? html`<a class="button" href=${`#/replay/${encodeURIComponent(g.id)}`} aria-label=${`Replay ${g.id}`}>Replay</a>`
                    : html`<a class="button" href=${`#/watch/${encodeURIComponent(g.id)}`} aria-label=${`Watch ${g.id}`}>Watch</a>`}
                </li>`,
              )}
            </ul>`}`}
  </section>`;
}

/** `#/bots/<id>`: one registered bot. */
export function BotPage({ id }) {
  const [bot, setBot] = useState(null);
  const [error, setError] = useState(null);
  const [refresh, setRefresh] = useState(0);
  useEffect(() => {
    api.bot(id).then(
      (b) => {
        setBot(b);
        setError(null);
      },
      setError,
    );
  }, [id, refresh]);
  if (!bot) {
    return error
      ? html`<p class="error" role="alert">${error.message}</p>`
      : html`<p class="muted">Loading the bot…</p>`;
  }
  return html`<div class="bot" data-decisions=${bot.stats?.decisions ?? 0}>
    <div class="game-head">
      <h2>${bot.name} <span class="muted">${bot.id}</span></h2>
      <span class="tag">${bot.transport}</span>
      ${bot.retired ? html`<span class="tag">retired</span>` : ""}
      <button type="button" onClick=${() => setRefresh(refresh + 1)}>Refresh</button>
    </div>
    ${error ? html`<p class="error" role="alert">Not refreshed: ${error.message}</p>` : ""}
    <dl class="facts">
      <div><dt>Plays</dt><dd>${bot.games.map((g) => TITLES[g] || g).join(", ")}</dd></div>
      <div><dt>Transport</dt><dd>${bot.transport}${bot.url ? html` <code>${bot.url}</code>` : ""}</dd></div>
      <div><dt>Budget</dt><dd>${bot.budget_ms} ms a decision, round trip included</dd></div>
      <div><dt>On failure</dt><dd>${bot.on_failure === "forfeit" ? "the seat resigns" : "a random legal move"} (${bot.on_failure})</dd></div>
      <div><dt>Registered</dt><dd>${when(bot.created_at)}</dd></div>
    </dl>
    <${Stats} bot=${bot} />
    <${RecentGames} botId=${bot.id} refresh=${refresh} />
  </div>`;
}
