// Tournaments: the lobby's list with each one's progress, and a tournament's page (#/tournaments/
// <id>): standings with their 95% intervals, every entrant's rating with its interval, the
// pairwise "finished ahead" matrix as a heatmap, an sprt match's log-likelihood ratio against
// its bounds, and its games. Both refresh while a tournament runs (polling: the API has no
// feed of tournaments) and stop once it is finished or cancelled.
// Reading tournaments needs an organizer's or auditor's key: the page asks for one, keeps it in
// localStorage and sends it to the tournament endpoints alone.

import { useEffect, useState } from "preact/hooks";
import { api, heldKey, holdKey } from "./api.js";
import { HeatLegend, IntervalBar, LlrChart, Progress, fmt, heat, inkOn, pct, rgb, when } from "./charts.js";
import { Scroll, TITLES, html, plural } from "./ui.js";

const POLL_MS = 3000;
const LIVE = new Set(["queued", "running"]);
const GAMES_PAGE = 20;
const FORMATS = {
  round_robin: "round robin",
  duplicate: "duplicate",
  gauntlet: "gauntlet",
  sprt: "SPRT match",
};

/**
 * The games a tournament plays: its plan's, or, once it stopped early (an SPRT match decided,
 * or a cancelled one), the games it played: the plan's count is then only a cap.
 */
function planned(t) {
  const done = t.progress?.done ?? 0;
  const total = t.progress?.total ?? 0;
  return LIVE.has(t.status) || done >= total ? total : done;
}

/** The progress to draw: a tournament stopped early is complete at the games it played. */
function progressOf(t) {
  return { done: t.progress?.done ?? 0, total: planned(t) };
}

/** "(stopped early: the SPRT was decided; it would have played up to 400)" or "". */
function stoppedNote(t) {
  const total = t.progress?.total ?? 0;
  if (planned(t) === total) return "";
  const why = t.status === "cancelled" ? "cancelled" : t.format === "sprt" ? "the SPRT was decided" : "finished";
  return `stopped early (${why}; up to ${total} were planned)`;
}

/** The key this browser keeps, and a setter that keeps (or, given "", forgets) it. */
function useKey() {
  const [key, setKey] = useState(heldKey);
  const change = (k) => {
    holdKey(k);
    setKey(k);
  };
  return [key, change];
}

/**
 * Calls `load` now and again every POLL_MS while `more(result)` says the thing still changes;
 * a network failure is retried, a refusal (4xx) is not. Returns [result, error].
 */
function usePolled(load, more, deps) {
  const [result, setResult] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    let stopped = false;
    let timer;
    const tick = () =>
      load().then(
        (r) => {
          if (stopped) return;
          setResult(r);
          setError(null);
          if (more(r)) timer = setTimeout(tick, POLL_MS);
        },
        (e) => {
          if (stopped) return;
          setError(e);
          if (!(e.status >= 400 && e.status < 500)) timer = setTimeout(tick, POLL_MS);
        },
      );
    setResult(null);
    setError(null);
    tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, deps);
  return [result, error];
}

function keyProblem(error) {
  if (error?.status === 401 || error?.status === 403) {
    return "This key is neither an organizer's nor an auditor's: forget it and enter another.";
  }
  return error?.message;
}

/** Asks for the key (when this browser has none) or offers to forget it. */
function KeyForm({ tkey, setKey }) {
  const [draft, setDraft] = useState("");
  if (tkey) {
    return html`<p class="key-held muted">This browser keeps a tournament key (sent only to
      read tournaments). <button type="button" onClick=${() => setKey("")}>Forget the key</button></p>`;
  }
  const submit = (e) => {
    e.preventDefault();
    setKey(draft.trim());
  };
  return html`<form class="key-form" aria-label="Tournament key" onSubmit=${submit}>
    <p>Tournaments are read with an organizer's or auditor's key, and this browser has none.</p>
    <div class="field">
      <label for="tournament-key">Organizer or auditor key</label>
      <input id="tournament-key" type="password" autocomplete="off" value=${draft}
        onInput=${(e) => setDraft(e.currentTarget.value)} />
      <button type="submit" disabled=${!draft.trim()}>Use this key</button>
    </div>
  </form>`;
}

function StatusTag({ status }) {
  return html`<span class=${`tag status-${status}`}>${status}</span>`;
}

/** The lobby's list of tournaments, newest first, each with its progress. */
export function TournamentList() {
  const [tkey, setKey] = useKey();
  const [items, error] = usePolled(
    () => (tkey ? api.tournaments(tkey) : Promise.resolve(null)),
    (list) => !!list?.some((t) => LIVE.has(t.status)),
    [tkey],
  );
  return html`<section class="lobby-list tournaments" aria-labelledby="h-tournaments">
    <h2 id="h-tournaments">Tournaments</h2>
    <${KeyForm} tkey=${tkey} setKey=${setKey} />
    ${error ? html`<p class="error" role="alert">${keyProblem(error)}</p>` : ""}
    ${!tkey || error
      ? ""
      : items == null
        ? html`<p class="muted">Loading…</p>`
        : items.length === 0
          ? html`<p class="muted">No tournament yet.</p>`
          : html`<ul>
              ${items.map(
                (t) => html`<li data-tournament=${t.id}>
                  <span><a href=${`#/tournaments/${encodeURIComponent(t.id)}`}><strong>${TITLES[t.game] || t.game}</strong>
                    ${" "}${FORMATS[t.format] || t.format}</a> · ${(t.entrants || []).join(", ")}
                    <span class="muted"> · ${t.id}</span> <${StatusTag} status=${t.status} /></span>
                  <${Progress} progress=${progressOf(t)} />
                  ${stoppedNote(t) ? html`<span class="muted stopped">${stoppedNote(t)}</span>` : ""}
                </li>`,
              )}
            </ul>`}
  </section>`;
}

// ---- one tournament ---------------------------------------------------------------------------

/** An entrant's name, linked to its bot page when it is a registered bot. */
function EntrantName({ doc, index }) {
  const e = doc.entrants?.[index];
  const name = e?.name ?? `entrant ${index}`;
  const botId = e?.spec?.bot_id;
  const role =
    doc.format === "sprt" ? (index === doc.candidate ? "candidate" : "baseline")
    : doc.format === "gauntlet" && index === doc.candidate ? "candidate"
    : null;
  return html`${botId ? html`<a href=${`#/bots/${encodeURIComponent(botId)}`}>${name}</a>` : name}
    ${e?.label && e.label !== name ? html` <span class="muted">${e.label}</span>` : ""}
    ${role ? html` <span class="tag">${role}</span>` : ""}`;
}

function Standings({ doc }) {
  const rows = doc.standings || [];
  const even = doc.players ? 1 / doc.players : null; // a win rate no better than chance
  return html`<section class="panel" aria-labelledby="h-standings">
    <h3 id="h-standings">Standings</h3>
    <${Scroll} label="Standings"><table class="standings">
      <caption class="muted">Best win rate first; a win shared by k players counts 1/k. Intervals
        are 95%: Wilson's for the win rate, normal for the mean score.${even ? ` The tick marks an even share (${pct(even, 0)}).` : ""}</caption>
      <thead><tr><th scope="col">#</th><th scope="col">Entrant</th><th scope="col">Games</th>
        <th scope="col">Wins</th><th scope="col">Win rate (95% interval)</th>
        <th scope="col">Mean score (95% interval)</th><th scope="col">Mean rank</th></tr></thead>
      <tbody>
        ${rows.map((r, i) => {
          const [lo, hi] = r.win_rate_ci || [];
          const [slo, shi] = r.mean_score_ci || [];
          return html`<tr data-entrant=${r.entrant}>
            <td>${i + 1}</td>
            <th scope="row"><${EntrantName} doc=${doc} index=${r.entrant} /></th>
            <td>${r.games}</td>
            <td>${fmt(r.wins, Number.isInteger(r.wins) ? 0 : 2)}</td>
            <td class="win-rate"><span class="num">${pct(r.win_rate)}</span>
              ${r.win_rate_ci ? html` <span class="ci">(${pct(lo)}–${pct(hi)})</span>` : ""}
              <${IntervalBar} lo=${lo} hi=${hi} mid=${r.win_rate} min=${0} max=${1} mark=${even} /></td>
            <td><span class="num">${fmt(r.mean_score)}</span>
              ${r.mean_score_ci ? html` <span class="ci">(${fmt(slo)}–${fmt(shi)})</span>` : ""}</td>
            <td>${fmt(r.mean_rank)}</td>
          </tr>`;
        })}
      </tbody>
    </table><//>
  </section>`;
}

function Ratings({ doc }) {
  const rows = doc.ratings || [];
  if (!rows.length) return null;
  // mu_ci is mu ± 1.96σ, the 95% the ladder and every other interval of the API use.
  const lo = Math.min(...rows.map((r) => r.mu_ci[0]));
  const hi = Math.max(...rows.map((r) => r.mu_ci[1]));
  return html`<section class="panel" aria-labelledby="h-ratings">
    <h3 id="h-ratings">Ratings</h3>
    <${Scroll} label="Ratings"><table class="ratings">
      <caption class="muted">openskill (Plackett-Luce) skill μ with its 95% interval μ ± 1.96σ,
        ordered by the ordinal μ − 3σ, the conservative estimate the service ranks by; over
        ${" "}${doc.rated_games ?? 0} of ${doc.progress?.done ?? 0} games played.</caption>
      <thead><tr><th scope="col">Entrant</th><th scope="col">μ</th><th scope="col">σ</th>
        <th scope="col">95% interval</th><th scope="col">Ordinal (μ − 3σ)</th></tr></thead>
      <tbody>
        ${rows.map(
          (r) => html`<tr data-entrant=${r.entrant}>
            <th scope="row"><${EntrantName} doc=${doc} index=${r.entrant} /></th>
            <td>${fmt(r.mu)}</td>
            <td>${fmt(r.sigma)}</td>
            <td class="mu-interval"><span class="ci">${fmt(r.mu_ci[0])} to ${fmt(r.mu_ci[1])}</span>
              <${IntervalBar} lo=${r.mu_ci[0]} hi=${r.mu_ci[1]} mid=${r.mu} min=${lo} max=${hi} /></td>
            <td>${fmt(r.ordinal)}</td>
          </tr>`,
        )}
      </tbody>
    </table><//>
  </section>`;
}

/** The pairwise matrix: cell (a, b) is how often a finished ahead of b, coloured on one scale. */
function Heatmap({ doc }) {
  const pairwise = doc.pairwise;
  if (!pairwise?.names?.length) return null;
  const { names, matrix } = pairwise;
  const title = doc.head_to_head ? "Head to head" : "Pairwise";
  return html`<section class="panel" aria-labelledby="h-h2h">
    <h3 id="h-h2h">${title}</h3>
    <p class="muted">Each cell: how often the row's entrant finished ahead of the column's in the
      games they met (level counts half), with the number of games.</p>
    <${Scroll} label=${title}><table class="heatmap">
      <thead><tr><th scope="col"><span class="muted">ahead of →</span></th>
        ${names.map((n) => html`<th scope="col">${n}</th>`)}</tr></thead>
      <tbody>
        ${matrix.map(
          (row, a) => html`<tr>
            <th scope="row">${names[a]}</th>
            ${row.map((c, b) => {
              if (a === b) return html`<td class="self" aria-label="itself">·</td>`;
              if (!c) return html`<td class="none">not met</td>`;
              const colour = heat(c.rate);
              const [lo, hi] = c.rate_ci || [];
              const said = `${names[a]} finished ahead of ${names[b]} in ${fmt(c.ahead, Number.isInteger(c.ahead) ? 0 : 1)} of ${c.games} games: ${pct(c.rate)} (95% interval ${pct(lo)}–${pct(hi)})`;
              return html`<td class="heat" data-rate=${c.rate} title=${said}
                style=${`background: ${rgb(colour)}; color: ${inkOn(colour)}`}>
                <strong>${pct(c.rate, 0)}</strong><small>${fmt(c.ahead, Number.isInteger(c.ahead) ? 0 : 1)}/${c.games}</small>
              </td>`;
            })}
          </tr>`,
        )}
      </tbody>
    </table><//>
    <${HeatLegend} caption="row finished ahead of column (50%: even)" />
  </section>`;
}

function Sprt({ doc }) {
  const s = doc.sprt;
  const cand = doc.entrants?.[doc.candidate ?? 0]?.name ?? "the candidate";
  const base = doc.entrants?.find((_, i) => i !== (doc.candidate ?? 0))?.name ?? "the baseline";
  const verdict =
    s.result === "H1" ? `H1 accepted: ${cand} is stronger than ${base} by at least ${fmt(s.elo1, 1)} Elo.`
    : s.result === "H0" ? `H0 accepted: ${cand} is not stronger than ${base} by more than ${fmt(s.elo0, 1)} Elo.`
    : LIVE.has(doc.status) ? "Undecided so far."
    : "Undecided: the match stopped before the LLR crossed a bound.";
  const penta = s.pentanomial || [];
  return html`<section class="panel sprt" aria-labelledby="h-sprt">
    <h3 id="h-sprt">Sequential test (SPRT)</h3>
    <p class="sprt-result"><strong>${verdict}</strong></p>
    <p>LLR <strong class="llr">${fmt(s.llr)}</strong> after ${plural(s.pairs, "complete pair")}; H0 (Elo ≤ ${fmt(s.elo0, 1)})
      is accepted at or below <span class="llr-lower">${fmt(s.lower)}</span>, H1 (Elo ≥ ${fmt(s.elo1, 1)}) at or
      above <span class="llr-upper">${fmt(s.upper)}</span>; α = ${s.alpha}, β = ${s.beta}.</p>
    <${LlrChart} sprt=${s} capPairs=${Math.floor(planned(doc) / 2)} />
    ${Array.isArray(s.history) && s.history.length
      ? ""
      : html`<p class="muted">Only the current LLR is drawn: this answer has no history of it.</p>`}
    ${penta.length === 5
      ? html`<p class="muted">Pairs by ${cand}'s score (of 2): ${["0", "½", "1", "1½", "2"].map((k, i) => `${k}: ${penta[i]}`).join(" · ")}.</p>`
      : ""}
  </section>`;
}

function Games({ doc, offset, setOffset }) {
  const page = doc.games;
  if (!page?.items?.length) return null;
  // A match stopped early lists its plan's every game: the ones it never played are left out.
  const total = Math.min(page.total, planned(doc));
  const items = page.items.filter((g) => g.index < total);
  if (!items.length) return null;
  const last = page.offset + items.length;
  return html`<section class="panel" aria-labelledby="h-tgames">
    <h3 id="h-tgames">Games ${page.offset + 1}–${last} of ${total}${total < page.total ? " played" : ""}</h3>
    <ul class="tgames">
      ${items.map(
        (g) => html`<li>
          <span>#${g.index + 1} · ${(g.seats || []).join(" vs ")} <span class="muted">· deal ${g.deal}</span></span>
          ${g.finished
            ? html`<a class="button" href=${`#/replay/${encodeURIComponent(g.id)}`} aria-label=${`Replay game ${g.index + 1}`}>Replay</a>`
            : html`<span class="muted">not folded yet</span>`}
        </li>`,
      )}
    </ul>
    <div class="buttons">
      <button type="button" disabled=${offset <= 0} onClick=${() => setOffset(Math.max(0, offset - GAMES_PAGE))}>Earlier games</button>
      <button type="button" disabled=${last >= total} onClick=${() => setOffset(offset + GAMES_PAGE)}>Later games</button>
    </div>
  </section>`;
}

/** `#/tournaments/<id>`: everything the API says of one tournament, live while it runs. */
export function TournamentPage({ id }) {
  const [tkey, setKey] = useKey();
  const [offset, setOffset] = useState(0);
  const [doc, error] = usePolled(
    () => (tkey ? api.tournament(id, tkey, offset, GAMES_PAGE) : Promise.resolve(null)),
    (d) => !!d && LIVE.has(d.status),
    [id, tkey, offset],
  );
  if (!tkey || error?.status === 401 || error?.status === 403) {
    return html`<div class="tournament">
      <h2>Tournament <span class="muted">${id}</span></h2>
      ${error ? html`<p class="error" role="alert">${keyProblem(error)}</p>` : ""}
      <${KeyForm} tkey=${tkey} setKey=${setKey} />
    </div>`;
  }
  if (!doc) {
    return error
      ? html`<p class="error" role="alert">${error.message}</p>`
      : html`<p class="muted">Loading the tournament…</p>`;
  }
  const live = LIVE.has(doc.status);
  const options = Object.entries(doc.options || {}).filter(([, v]) => v != null);
  return html`<div class="tournament" data-status=${doc.status} data-done=${doc.progress?.done ?? 0}>
    <div class="game-head">
      <h2>${TITLES[doc.game] || doc.game}: ${FORMATS[doc.format] || doc.format} <span class="muted">${doc.id}</span></h2>
      <span class=${`feed ${live ? "live" : ""}`}>${live ? `live, every ${POLL_MS / 1000} s` : "final"}</span>
    </div>
    <p class="status" role="status">
      ${{ queued: "Queued", running: "Running", finished: "Finished", cancelled: "Cancelled" }[doc.status] || doc.status}:
      ${" "}${doc.progress?.done ?? 0} of ${planned(doc)} games played${stoppedNote(doc) ? `, ${stoppedNote(doc)}` : ""}.
    </p>
    <${Progress} progress=${progressOf(doc)} label="Tournament progress" />
    ${error ? html`<p class="error" role="alert">Not refreshed: ${error.message}</p>` : ""}
    <p class="info">
      <span>${doc.players} seats a game</span>
      ${options.length ? html`<span>options ${options.map(([k, v]) => `${k} ${JSON.stringify(v)}`).join(", ")}</span>` : ""}
      ${doc.field ? html`<span>field: ${doc.field.bot}</span>` : ""}
      <span>draws ${doc.draws ?? 0}</span>
      <span>started ${when(doc.created_at)}</span>
      ${doc.finished_at ? html`<span>finished ${when(doc.finished_at)}</span>` : ""}
    </p>
    ${doc.sprt ? html`<${Sprt} doc=${doc} />` : ""}
    <${Standings} doc=${doc} />
    <${Ratings} doc=${doc} />
    <${Heatmap} doc=${doc} />
    <${Games} doc=${doc} offset=${offset} setOffset=${setOffset} />
    <${KeyForm} tkey=${tkey} setKey=${setKey} />
  </div>`;
}
