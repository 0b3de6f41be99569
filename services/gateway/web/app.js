// The page: a lobby, a form to start a game, a board to play or watch each game live, a
// replay of a finished game with the audit's verifier run in the page, a tournament's page and
// a registered bot's, and the public ladder. Routes live in the URL's fragment (#/play/<id>,
// #/join/<id> (an invite: the play page, offering the open seats), #/watch/<id>, #/replay/<id>, #/tournaments/<id>, #/bots/<id>, #/ladder?game=<name>), so a
// reload keeps the page.

import { render } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import {
  api,
  dropSeat,
  follow,
  heldSeat,
  heldSeats,
  holdSeat,
  keepHead,
  keptHeads,
  playerName,
  setPlayerName,
} from "./api.js";
import { Clock, OtherCommands, Result, Status, TITLES, html, plural, seatName, withCode } from "./ui.js";
import { BotList, BotPage } from "./bots.js";
import { LadderPage } from "./ladder.js";
import { TournamentList, TournamentPage } from "./tournaments.js";
import * as fox from "./fox.js";
import * as skull from "./skull.js";
import * as skye from "./skye.js";

const BOARDS = { fox, skull, skye };

// ---- routing ----------------------------------------------------------------------------------

function parseRoute() {
  const [path, query = ""] = location.hash.replace(/^#\/?/, "").split("?");
  const parts = path.split("/").filter(Boolean);
  return { name: parts[0] || "lobby", args: parts.slice(1), query: new URLSearchParams(query) };
}

function go(hash) {
  location.hash = hash;
}

function useRoute() {
  const [route, setRoute] = useState(parseRoute);
  useEffect(() => {
    const on = () => setRoute(parseRoute());
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}

// ---- the lobby --------------------------------------------------------------------------------

// One line each, for the landing page: what a newcomer is about to play.
const PITCHES = {
  fox: "Trick-taking for two where greed loses: win some tricks, but not too many.",
  skull: "Bluff with flowers and a skull: bid how many flowers you can turn up, then turn them.",
  skye: "Set your own prices, buy tiles and build a Scottish kingdom scored on changing goals.",
};

// A game started from this page has a turn clock: a seat whose player left is played by a bot
// once its time is out, so the others never wait for ever.
const DEFAULT_CLOCK = { turn_seconds: 60, reserve_seconds: 300, on_timeout: "bot" };

/** "5 min ago": how long ago an ISO time of the API was ("" when there is none). */
function ago(iso) {
  const at = iso ? Date.parse(iso) : NaN;
  if (Number.isNaN(at)) return "";
  const s = Math.max(0, Math.round((Date.now() - at) / 1000));
  if (s < 60) return "just now";
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.round(m / 60);
  if (h < 48) return plural(h, "hour") + " ago";
  return plural(Math.round(h / 24), "day") + " ago";
}

/** A lobby row's age and progress in words ("opened 2 min ago", "started 1 hour ago · 243
 * events"): a game's version is the number of events in its log, not a move count. */
function progressText(g, status) {
  const when = ago(g.created_at);
  if (status === "waiting") return when ? `opened ${when}` : "waiting";
  const events = plural(g.version ?? 0, "event");
  return status === "finished" ? events : when ? `started ${when} · ${events} so far` : `${events} so far`;
}

function seatsText(g) {
  return g.seats.map((s) => (s.open ? "open seat" : s.bot ? `${s.name} (bot)` : s.name)).join(", ");
}

/** Create a game with a seat for this browser and go to its board. */
async function startGame(body, name) {
  const seats = [{ name: name.trim() || "player" }, ...body.seats];
  const created = await api.create({ ...body, seats, clock: DEFAULT_CLOCK });
  holdSeat(created.id, 0, created.tokens[0], body.game);
  go(`#/play/${created.id}`);
}

/** The three games, each with a one-line pitch and the two quickest ways to a table. */
function GameCards({ name, setName }) {
  const [types, setTypes] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    api.gameTypes().then(setTypes, setError);
  }, []);
  const start = async (type, kind) => {
    setBusy(true);
    setError(null);
    const others = Array.from({ length: Math.max(1, type.seats.min - 1) }, () =>
      kind === "bots" ? { bot: "heuristic" } : { open: true },
    );
    try {
      await startGame({ game: type.name, seats: others }, name);
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  return html`<section class="game-cards" aria-labelledby="h-games">
    <h2 id="h-games">The games</h2>
    <p class="muted">tabletop hosts three board games: play one against bots now, or open a table
      and send its link to friends.</p>
    <div class="your-name field">
      <label for="your-name">Your name</label>
      <input id="your-name" value=${name} maxlength="40" autocomplete="nickname" placeholder="player"
        onInput=${(e) => setName(e.currentTarget.value)} />
      <small>What the other players see at the table (and in the lobby).</small>
    </div>
    ${error ? html`<p class="error" role="alert">${error.message}</p>` : ""}
    ${types == null
      ? html`<p class="muted">Loading the games…</p>`
      : html`<ul class="cards">
          ${types.map(
            (t) => html`<li class="game-card" data-game-type=${t.name}>
              <h3>${t.title}</h3>
              <p class="players">${t.seats.min === t.seats.max ? t.seats.min : `${t.seats.min}–${t.seats.max}`} players</p>
              <p class="pitch">${PITCHES[t.name] || ""}</p>
              <span class="buttons">
                <button type="button" class="primary" disabled=${busy} aria-label=${`Play ${t.title} against bots`}
                  onClick=${() => start(t, "bots")}>Play against bots</button>
                <button type="button" disabled=${busy} aria-label=${`Open a table of ${t.title}`}
                  onClick=${() => start(t, "open")}>Open a table</button>
              </span>
            </li>`,
          )}
        </ul>`}
  </section>`;
}

/** The seats this browser holds (kept in localStorage), each with a link back to its board. */
function MyGames({ refresh }) {
  const [seats, setSeats] = useState(heldSeats);
  useEffect(() => setSeats(heldSeats()), [refresh]);
  if (!seats.length) return null;
  const forget = (id) => {
    dropSeat(id);
    setSeats(heldSeats());
  };
  return html`<section class="lobby-list my-games" aria-labelledby="h-mine">
    <h2 id="h-mine">My games</h2>
    <ul>
      ${seats.map(
        (s) => html`<li data-game=${s.id}>
          <span><strong>${TITLES[s.game] || s.game || "a game"}</strong> · seat ${s.seat}
            <span class="muted"> · ${s.id}${s.at ? ` · ${new Date(s.at).toLocaleString()}` : ""}</span></span>
          <span class="buttons">
            <a class="button" href=${`#/play/${s.id}`}>Resume seat ${s.seat}</a>
            <button type="button" aria-label=${`Forget game ${s.id}`} onClick=${() => forget(s.id)}>Forget</button>
          </span>
        </li>`,
      )}
    </ul>
  </section>`;
}

const EMPTY = {
  waiting: "No table is waiting for players: open one above.",
  active: "No game is being played right now.",
  finished: "No game has finished yet.",
};

function GameList({ status, title, name, game, refresh }) {
  const [games, setGames] = useState(null);
  const [next, setNext] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    setGames(null);
    api.lobby(status, { game }).then((doc) => {
      setGames(doc.games);
      setNext(doc.next_cursor);
    }, setError);
  }, [status, game, refresh]);
  const more = async () => {
    setBusy(true);
    try {
      const doc = await api.lobby(status, { game, cursor: next });
      setGames([...games, ...doc.games]);
      setNext(doc.next_cursor);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const join = async (g, seat) => {
    const who = name.trim() || "player";
    try {
      const joined = await api.join(g.id, seat, who);
      holdSeat(g.id, joined.seat, joined.token, g.game);
      go(`#/play/${g.id}`);
    } catch (e) {
      setError(e);
    }
  };
  return html`<section class="lobby-list" aria-labelledby=${`h-${status}`}>
    <h2 id=${`h-${status}`}>${title}</h2>
    ${error ? html`<p class="error" role="alert">${error.message}</p>` : ""}
    ${games == null
      ? html`<p class="muted">Loading…</p>`
      : games.length === 0
        ? html`<p class="muted">${EMPTY[status]}</p>`
        : html`<ul>
            ${games.map((g) => {
              const held = heldSeat(g.id);
              return html`<li data-game=${g.id}>
                <span><strong>${TITLES[g.game] || g.game}</strong> · ${seatsText(g)}
                  <span class="muted"> · ${progressText(g, status)} · ${g.id}</span></span>
                <span class="buttons">
                  ${status === "waiting" &&
                  g.seats.filter((s) => s.open).map(
                    (s) => html`<button type="button" onClick=${() => join(g, s.seat)}>Join seat ${s.seat}</button>`,
                  )}
                  ${held && status !== "finished"
                    ? html`<a class="button" href=${`#/play/${g.id}`}>Resume seat ${held.seat}</a>`
                    : ""}
                  ${status !== "finished" ? html`<a class="button" href=${`#/watch/${g.id}`}>Watch</a>` : ""}
                  ${status === "finished" ? html`<a class="button" href=${`#/replay/${g.id}`}>Replay</a>` : ""}
                </span>
              </li>`;
            })}
          </ul>`}
    ${next ? html`<button type="button" disabled=${busy} aria-label=${`More: ${title.toLowerCase()}`} onClick=${more}>More</button>` : ""}
  </section>`;
}

function Lobby() {
  const [name, setNameState] = useState(playerName());
  const setName = (value) => {
    setNameState(value);
    setPlayerName(value);
  };
  const [refresh, setRefresh] = useState(0);
  const [game, setGame] = useState("");
  return html`<div class="lobby">
    <${GameCards} name=${name} setName=${setName} />
    <div class="lobby-bar">
      <label>Show <select value=${game} onChange=${(e) => setGame(e.currentTarget.value)}>
        <option value="">every game</option>
        ${Object.entries(TITLES).map(([k, t]) => html`<option value=${k}>${t}</option>`)}
      </select></label>
      <a class="button primary" href="#/new">New game</a>
      <button type="button" onClick=${() => setRefresh(refresh + 1)}>Refresh</button>
    </div>
    <${MyGames} refresh=${refresh} />
    <${GameList} status="waiting" title="Waiting for players" name=${name} game=${game} refresh=${refresh} />
    <${GameList} status="active" title="Being played" name=${name} game=${game} refresh=${refresh} />
    <${GameList} status="finished" title="Finished" name=${name} game=${game} refresh=${refresh} />
    <${TournamentList} />
    <${BotList} refresh=${refresh} />
  </div>`;
}

// ---- a new game -------------------------------------------------------------------------------

const SEAT_KINDS = [
  ["you", "You"],
  ["open", "Open seat (someone joins)"],
  ["random", "Random bot"],
  ["heuristic", "Heuristic bot"],
  ["ismcts", "Search bot (ISMCTS, 200 ms)"],
];

function seatSpec(kind, name) {
  switch (kind) {
    case "you":
      return { name: name || "you" };
    case "open":
      return { open: true };
    case "ismcts":
      return { bot: "ismcts", budget_ms: 200 };
    default:
      return { bot: kind };
  }
}

// The options' names and choices in words; an option not named here reads its own name.
const OPTION_LABELS = {
  target: "Points to win",
  first_dealer: "First dealer",
  first_player: "First player",
  next_starter: "After a challenge",
  scoring_tiles: "Scoring tiles",
  advanced_variant: "Advanced variant",
};
const CHOICE_TEXTS = {
  next_starter: { czech: "the challenger starts (Czech rule book)", english: "the loser starts (English rule book)" },
};
const SEAT_OPTIONS = new Set(["first_dealer", "first_player"]); // a seat number: offered by seat

/** An option's name as a label: "first_player" reads "First player". */
function optionLabel(name) {
  const text = OPTION_LABELS[name] ?? name.replaceAll("_", " ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A schema's description without its notes for machines ("null: drawn" is the choice
 * "drawn at random" here). */
function optionHint(description) {
  return (description || "")
    .replace(/;?\s*null:\s*drawn( at random)?/gi, "")
    .replace(/\bids or indices 0\.\.15\b/, "names such as sheep, or numbers 0 to 15")
    .replace(/\bA\.\.D\b/, "A to D")
    .trim();
}

/** One choice of an option in words. */
function choiceText(name, value, seatLabels = []) {
  if (value === null) return "drawn at random";
  if (SEAT_OPTIONS.has(name) && Number.isInteger(value)) {
    return seatLabels[value] ? `seat ${value}: ${seatLabels[value]}` : `seat ${value}`;
  }
  const said = CHOICE_TEXTS[name]?.[value];
  if (said) return said;
  const text = String(value).replaceAll("_", " ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// One input per option of the catalogue's JSON Schema; organizer-only objects are left out. A
// seat number (who deals or starts first) is chosen among the seats, by what sits there.
function OptionField({ name, schema, value, onChange, seats, seatLabels }) {
  const id = `opt-${name}`;
  const label = html`<label for=${id}>${optionLabel(name)}</label>`;
  const said = optionHint(schema.description);
  const hint = said ? html`<small>${said}</small>` : "";
  const types = [].concat(schema.type || []);
  const seatChoice = SEAT_OPTIONS.has(name) && (schema.enum || types.includes("integer"));
  if (schema.enum || seatChoice) {
    const choices = seatChoice
      ? [null, ...Array.from({ length: seats }, (_, i) => i)].filter((v) => !schema.enum || schema.enum.includes(v))
      : schema.enum;
    // A select's value is text: a choice's own text (a seat's number reads "0"), null as "".
    const key = (v) => (v === null ? "" : typeof v === "string" ? v : JSON.stringify(v));
    const chosen = value !== undefined ? value : schema.default ?? null;
    return html`<div class="field">${label}
      <select id=${id} value=${key(chosen)}
        onChange=${(e) => onChange(choices.find((v) => key(v) === e.currentTarget.value) ?? null)}>
        ${choices.map((v) => html`<option value=${key(v)}>${choiceText(name, v, seatLabels)}</option>`)}
      </select>${hint}</div>`;
  }
  if (types.includes("boolean")) {
    return html`<div class="field check"><input id=${id} type="checkbox" checked=${value ?? schema.default ?? false}
      onChange=${(e) => onChange(e.currentTarget.checked)} />${label}${hint}</div>`;
  }
  if (types.includes("integer")) {
    const nullable = types.includes("null");
    return html`<div class="field">${label}
      <input id=${id} type="number" min=${schema.minimum} max=${schema.maximum} placeholder=${nullable ? "drawn at random" : ""}
        value=${value ?? schema.default ?? ""}
        onInput=${(e) => onChange(e.currentTarget.value === "" ? null : Number(e.currentTarget.value))} />${hint}</div>`;
  }
  if (name === "scoring_tiles") {
    return html`<div class="field">${label}
      <input id=${id} placeholder="drawn at random (or 4 ids, comma-separated)" value=${(value || []).join(", ")}
        onInput=${(e) => {
          const ids = e.currentTarget.value.split(",").map((s) => s.trim()).filter(Boolean);
          onChange(ids.length ? ids : null);
        }} />${hint}</div>`;
  }
  return null; // e.g. `deal`: organizer only, not for this page
}

function NewGame() {
  const [types, setTypes] = useState(null);
  const [game, setGame] = useState("fox");
  const [kinds, setKinds] = useState(["you", "random"]);
  const [options, setOptions] = useState({});
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [name, setName] = useState(playerName() || "player");
  const [clock, setClock] = useState(DEFAULT_CLOCK); // null: no turn clock
  const clockField = (key, value) => setClock({ ...clock, [key]: value });
  useEffect(() => {
    api.gameTypes().then(setTypes, setError);
  }, []);
  const type = types?.find((t) => t.name === game);
  const pickGame = (name) => {
    const t = types.find((x) => x.name === name);
    setGame(name);
    setOptions({});
    setKinds(["you", ...Array(Math.max(1, t.seats.min - 1)).fill("random")]);
  };
  const setCount = (n) => setKinds(Array.from({ length: n }, (_, i) => kinds[i] || "random"));
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const opts = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== null && v !== undefined));
    try {
      const body = { game, seats: kinds.map((k) => seatSpec(k, name.trim())), options: opts };
      if (clock) body.clock = clock;
      const created = await api.create(body);
      const mine = kinds.indexOf("you");
      if (mine >= 0) {
        holdSeat(created.id, mine, created.tokens[mine], game);
        go(`#/play/${created.id}`);
      } else go(`#/watch/${created.id}`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  if (!types) return html`<p>${error ? error.message : "Loading the games…"}</p>`;
  const props = type.options?.properties || {};
  // What sits at each seat, for the options that name one (who deals or starts first).
  const seatLabels = kinds.map((k) => {
    if (k === "you") return `you (${name.trim() || "player"})`;
    const text = SEAT_KINDS.find(([v]) => v === k)?.[1] ?? k;
    return text.charAt(0).toLowerCase() + text.slice(1);
  });
  return html`<form class="new-game" onSubmit=${submit} aria-labelledby="h-new">
    <h2 id="h-new">New game</h2>
    <div class="field"><label for="game">Game</label>
      <select id="game" value=${game} onChange=${(e) => pickGame(e.currentTarget.value)}>
        ${types.map((t) => html`<option value=${t.name}>${t.title}</option>`)}
      </select></div>
    <div class="field"><label for="my-name">Your name</label>
      <input id="my-name" value=${name} maxlength="40" autocomplete="nickname"
        onInput=${(e) => { setName(e.currentTarget.value); setPlayerName(e.currentTarget.value); }} /></div>
    <div class="field"><label for="seat-count">Players</label>
      <select id="seat-count" value=${kinds.length} onChange=${(e) => setCount(Number(e.currentTarget.value))}>
        ${Array.from({ length: type.seats.max - type.seats.min + 1 }, (_, i) => type.seats.min + i).map(
          (n) => html`<option value=${n}>${n}</option>`,
        )}
      </select></div>
    <fieldset><legend>Seats</legend>
      ${kinds.map(
        (k, i) => html`<div class="field"><label for=${`seat-${i}`}>Seat ${i}</label>
          <select id=${`seat-${i}`} value=${k} onChange=${(e) => {
            const next = kinds.map((x, j) => (j === i ? e.currentTarget.value : x === "you" && e.currentTarget.value === "you" ? "random" : x));
            setKinds(next);
          }}>
            ${SEAT_KINDS.map(([v, text]) => html`<option value=${v}>${text}</option>`)}
          </select></div>`,
      )}
    </fieldset>
    <fieldset><legend>Options</legend>
      ${Object.entries(props).map(
        ([name, schema]) => html`<${OptionField} name=${name} schema=${schema} value=${options[name]} seats=${kinds.length}
          seatLabels=${seatLabels}
          onChange=${(v) => setOptions({ ...options, [name]: v })} />`,
      )}
    </fieldset>
    <fieldset><legend>Turn clock</legend>
      <div class="field check"><input id="clock-on" type="checkbox" checked=${!!clock}
        onChange=${(e) => setClock(e.currentTarget.checked ? DEFAULT_CLOCK : null)} />
        <label for="clock-on">Play with a turn clock</label></div>
      ${clock
        ? html`<div class="field"><label for="clock-turn">seconds a turn</label>
            <input id="clock-turn" type="number" min="1" value=${clock.turn_seconds}
              onInput=${(e) => clockField("turn_seconds", Number(e.currentTarget.value))} /></div>
          <div class="field"><label for="clock-reserve">reserve seconds</label>
            <input id="clock-reserve" type="number" min="0" value=${clock.reserve_seconds}
              onInput=${(e) => clockField("reserve_seconds", Number(e.currentTarget.value))} /></div>
          <div class="field"><label for="clock-timeout">on time-out</label>
            <select id="clock-timeout" value=${clock.on_timeout} onChange=${(e) => clockField("on_timeout", e.currentTarget.value)}>
              <option value="bot">a bot moves for the seat</option>
              <option value="forfeit">the seat resigns</option>
            </select></div>`
        : ""}
    </fieldset>
    ${error ? html`<p class="error" role="alert">${error.message}</p>` : ""}
    <button type="submit" class="primary" disabled=${busy}>Start the game</button>
  </form>`;
}

// ---- playing and watching ---------------------------------------------------------------------

/** The log's title: which events it lists of how many ("Events 204–243 of 243"): the page
 * keeps the last 40 it was sent. */
function logTitle(log, view) {
  if (!log.length) return "Events: none yet";
  const first = log[0].version;
  const last = log[log.length - 1].version;
  const total = Math.max(last, view?.version ?? 0);
  return first === last ? `Event ${first} of ${total}` : `Events ${first}–${last} of ${total}`;
}

function eventLine(e) {
  const data = e.data ? JSON.stringify(e.data) : "";
  return `v${e.version} ${e.type}${e.seat != null ? ` (seat ${e.seat})` : ""} ${data.length > 160 ? data.slice(0, 160) + "…" : data}`;
}

/** Resigning, asked twice: a slip of the keyboard must not end a game. */
function Resign({ send, busy }) {
  const [asking, setAsking] = useState(false);
  if (!asking) return html`<button type="button" class="resign" disabled=${busy} onClick=${() => setAsking(true)}>Resign…</button>`;
  return html`<span role="group" aria-label="Confirm resigning">Resign this game?
    <button type="button" disabled=${busy} onClick=${() => send({ type: "resign" })}>Yes, resign</button>
    <button type="button" onClick=${() => setAsking(false)}>No</button></span>`;
}

/** Seats that resigned or that a bot took over (after time-outs or a resignation). */
function SeatStates({ view }) {
  const marked = (view?.seats || []).filter((s) => s.resigned || s.taken_over);
  if (!marked.length) return null;
  return html`<p class="seat-states">${marked.map(
    (s) => html`<span class="tag">${s.name}: ${s.resigned ? "resigned" : ""}${s.resigned && s.taken_over ? ", " : ""}${s.taken_over ? `played by a bot (${s.taken_over})` : ""}</span>`,
  )}</p>`;
}

function Problem({ error }) {
  if (!error) return null;
  const p = error.problem || {};
  return html`<div class="error" role="alert">
    <strong>${error.status === 409 ? "Not now: " : error.status === 422 ? "Not allowed: " : "Error: "}</strong>
    ${p.detail || error.message}${p.rule ? html` <span class="muted">(rule ${p.rule})</span>` : ""}
  </div>`;
}

/** The address to send friends: whoever opens it is offered the table's open seats. */
function inviteUrl(id) {
  return `${location.origin}${location.pathname}#/join/${id}`;
}

/** On the page of a table waiting for players: the link to send them, to copy. */
function Invite({ id, view }) {
  const [copied, setCopied] = useState(null);
  const open = (view.seats || []).filter((s) => s.open).length;
  const url = inviteUrl(id);
  const copy = async (e) => {
    const field = e.currentTarget.closest(".invite").querySelector("input");
    field.select();
    try {
      await navigator.clipboard.writeText(url);
      setCopied("Copied: paste it to your friends.");
    } catch {
      setCopied("Selected: copy it with Ctrl+C (or ⌘C)."); // no clipboard here (plain http)
    }
  };
  return html`<section class="invite" aria-labelledby="h-invite">
    <h3 id="h-invite">Invite friends</h3>
    <p>This table waits for ${plural(open, "more player")}. Send them this link: it offers them the
      open ${open === 1 ? "seat" : "seats"}, and the game starts once every seat is taken.</p>
    <p class="seated">At the table: ${(view.seats || []).map((s, i) => (s.open ? `seat ${i} open` : `${s.name}${s.bot ? " (bot)" : ""}`)).join(", ")}</p>
    <div class="invite-link">
      <input readonly value=${url} aria-label="Invite link" onFocus=${(e) => e.currentTarget.select()} />
      <button type="button" class="primary" onClick=${copy}>Copy link</button>
    </div>
    ${copied ? html`<p class="muted" role="status">${copied}</p>` : ""}
  </section>`;
}

/** For a browser without a seat at a table that waits for players: its open seats to take. */
function JoinOffer({ id, view, onJoined }) {
  const [name, setName] = useState(playerName());
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const open = (view.seats || []).map((s, seat) => ({ ...s, seat })).filter((s) => s.open);
  if (!open.length) return null;
  const taken = (view.seats || []).filter((s) => !s.open).map((s) => s.name);
  const join = async (seat) => {
    setBusy(true);
    setError(null);
    try {
      const joined = await api.join(id, seat, name.trim() || "player");
      holdSeat(id, joined.seat, joined.token, view.game);
      onJoined(joined);
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  return html`<section class="join-offer" aria-labelledby="h-join">
    <h3 id="h-join">Join this table</h3>
    <p>${TITLES[view.game] || view.game}${taken.length ? ` with ${taken.join(", ")}` : ""}:
      ${`${plural(open.length, "seat")} ${open.length === 1 ? "is" : "are"} open.`} Pick a name and take a seat.</p>
    <div class="field"><label for="join-name">Your name</label>
      <input id="join-name" value=${name} maxlength="40" autocomplete="nickname" placeholder="player"
        onInput=${(e) => { setName(e.currentTarget.value); setPlayerName(e.currentTarget.value); }} /></div>
    <${Problem} error=${error} />
    <span class="buttons">
      ${open.map(
        (s) => html`<button type="button" class="primary" disabled=${busy} onClick=${() => join(s.seat)}>Join seat ${s.seat}</button>`,
      )}
    </span>
  </section>`;
}

/** A game's board, live: the seat's view (play) or the spectator's (watch) from the feed. A
 * play page without a seat in this browser (a friend's invite link) shows the spectator's view
 * and, while the table waits for players, its open seats to join. */
function GamePage({ id, mode }) {
  const [held, setHeld] = useState(() => (mode === "play" ? heldSeat(id) : null));
  const token = held?.token ?? null; // watching never sends a token
  const [view, setView] = useState(null);
  const [log, setLog] = useState([]);
  const [feed, setFeed] = useState("connecting");
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const newer = useCallback((v) => {
    keepHead(id, v); // every hash shown is kept: "Verify this game" checks the export against them
    setView((old) => (!old || v.version >= old.version ? v : old));
  }, [id]);
  const seatGame = view?.game;
  useEffect(() => {
    // A seat taken by a link has no game type yet: "my games" names it once a view shows it.
    if (held && seatGame && !held.game) holdSeat(id, held.seat, held.token, seatGame);
  }, [id, seatGame]);
  useEffect(() => {
    setView(null);
    setLog([]);
    return follow(
      id,
      token,
      (data) => {
        newer(data.view);
        if (data.events?.length) setLog((old) => [...old, ...data.events].slice(-40));
        setFeed(data.view.outcome != null ? "ended" : "live");
      },
      (state) => {
        setFeed(state);
        // EventSource says nothing of why it failed: ask once for the view, whose problem
        // body does (no such game, a token that is no longer this seat's...).
        if (state === "closed") api.view(id, token).catch(setError);
      },
    );
  }, [id, token]);
  const send = useCallback(
    async (command) => {
      setBusy(true);
      setError(null);
      try {
        // Pinned to the version shown, so a move made on a stale board is refused, not misread;
        // resigning stands whatever the version.
        const pin = view && command.type !== "resign";
        const body = pin ? { ...command, expected_version: view.version } : command;
        const next = await api.command(id, token, body);
        if (next) newer(next);
      } catch (e) {
        setError(e);
      } finally {
        setBusy(false);
      }
    },
    [id, token, view],
  );
  const seated = mode === "play" && !!token;
  const joined = () => {
    if (mode === "play") setHeld(heldSeat(id));
    else go(`#/play/${id}`);
  };
  const waiting = view?.phase === "waiting" && !view.outcome;
  const Board = view && BOARDS[view.game]?.Board;
  const handled = view ? BOARDS[view.game]?.HANDLES || new Set() : new Set();
  const others = (view?.legal_commands || []).filter((c) => !handled.has(c.type));
  const mySeat = seated ? held.seat : null;
  return html`<div class="game" data-version=${view?.version ?? 0} data-phase=${view?.phase ?? ""}>
    <div class="game-head">
      <h2>${view ? TITLES[view.game] : "Game"} <span class="muted">${id}</span></h2>
      <span class=${`feed ${feed}`} aria-label=${`live feed ${feed}`}>${feed}</span>
      ${seated
        ? html`<span class="tag">playing as ${view ? seatName(view, mySeat) : `seat ${mySeat}`}</span>`
        : html`<span class="tag">spectator</span>`}
    </div>
    ${mode === "play" && !seated && view && !waiting
      ? html`<p class="muted">This browser holds no seat in this game: you are watching it.</p>`
      : ""}
    <${Status} view=${view} mySeat=${mySeat} feed=${feed} />
    ${seated && waiting ? html`<${Invite} id=${id} view=${view} />` : ""}
    ${!seated && waiting ? html`<${JoinOffer} id=${id} view=${view} onJoined=${joined} />` : ""}
    <${Clock} view=${view} />
    <${SeatStates} view=${view} />
    <${Problem} error=${error} />
    ${view && view.phase !== "waiting" && Board ? html`<${Board} view=${view} send=${send} busy=${busy} />` : ""}
    <${OtherCommands} commands=${others} send=${send} busy=${busy} />
    ${seated && view && !view.outcome && view.phase !== "waiting" && !view.seats?.[mySeat]?.resigned
      ? html`<${Resign} send=${send} busy=${busy} />`
      : ""}
    <${Result} view=${view} />
    ${view?.outcome ? html`<a class="button primary" href=${`#/replay/${id}`}>Replay and verify this game</a>` : ""}
    <details class="log"><summary>${logTitle(log, view)}</summary>
      <ol>${log.map((e) => html`<li>${eventLine(e)}</li>`)}</ol>
    </details>
  </div>`;
}

// ---- replay -----------------------------------------------------------------------------------

/**
 * The verifier's result with one more check: the export against the head hashes this browser
 * was shown while the game ran (`seen`, version -> head_hash), as shared.audit.check_history.
 * A version whose hash differs (or that the export lacks) fails the verification.
 */
function withHistory(result, envelopes, seen, checkHistory) {
  const kept = Object.keys(seen).length;
  const name = "history you were shown";
  if (!kept) {
    const detail = "this browser kept no head hash of this game (it did not play or watch it here)";
    return { ...result, checks: [...result.checks, { name, result: "unchecked", detail, version: null }] };
  }
  const differ = checkHistory(envelopes, seen);
  if (!differ.length) {
    const detail = `the export holds the head hash this browser was shown at each of the ${kept} versions it kept`;
    return { ...result, checks: [...result.checks, { name, result: "ok", detail, version: null }] };
  }
  const shown = differ.length > 12 ? `${differ.slice(0, 12).join(", ")}, …` : differ.join(", ");
  const detail = `the export differs from what this browser was shown at ${differ.length} of ${kept} versions: ${shown}`;
  const check = { name, result: "failed", detail, version: differ[0] };
  return {
    ...result,
    ok: false,
    status: "failed",
    checks: [...result.checks, check],
    firstFailure: result.firstFailure ?? { check: name, version: differ[0], reason: detail },
  };
}

function Verify({ id }) {
  const [result, setResult] = useState(null);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState(null);
  const run = async () => {
    setRunning(true);
    setError(null);
    try {
      // The audit's own verifier, served from verifier/ as it is: chain, seed commitment and
      // every shuffle recomputed here, in the browser, from the exported log.
      const [{ checkHistory, parseJsonl, verifyGame }, text] = await Promise.all([
        import("/web/verifier/fairness.mjs"),
        api.exportText(id),
      ]);
      const envelopes = parseJsonl(text);
      setResult(withHistory(await verifyGame(envelopes), envelopes, keptHeads(id), checkHistory));
    } catch (e) {
      setError(e);
    } finally {
      setRunning(false);
    }
  };
  return html`<section class="verify" aria-label="Verification">
    <button type="button" class="primary" onClick=${run} disabled=${running}>
      ${running ? "Verifying…" : "Verify this game"}
    </button>
    ${error ? html`<p class="error" role="alert">${error.message}</p>` : ""}
    ${result
      ? html`<div class="verdict" role="status">
          <p class=${`verdict-${result.status}`}><strong>Verification ${result.status}</strong>${" "}
            (${result.checks.length} checks${result.firstFailure ? `; first failure: ${result.firstFailure.check} at version ${result.firstFailure.version}` : ""})</p>
          <ul class="checks">
            ${result.checks.map(
              (c) => html`<li class=${`check-${c.result}`}><strong>${{ ok: "✓", waits: "…", unchecked: "–" }[c.result] ?? "✗"} ${c.name}${c.result === "unchecked" ? " (not re-checked)" : ""}</strong> ${withCode(c.detail)}</li>`,
            )}
          </ul>
        </div>`
      : ""}
  </section>`;
}

function Replay({ id, start }) {
  const [doc, setDoc] = useState(null);
  const [who, setWho] = useState("public");
  const [error, setError] = useState(null);
  const latest = useRef(0);
  const load = useCallback(
    (version) => {
      const ticket = ++latest.current; // a slider drag asks often: only the last answer counts
      api.replay(id, version).then(
        (d) => ticket === latest.current && setDoc(d),
        (e) => ticket === latest.current && setError(e),
      );
    },
    [id],
  );
  useEffect(() => load(start), [id]);
  if (error) return html`<${Problem} error=${error} />`;
  if (!doc) return html`<p>Loading the replay…</p>`;
  const view = who === "public" ? doc.public : doc.seats[Number(who)];
  const Board = BOARDS[view.game]?.Board;
  const env = doc.envelope;
  const step = (v) => load(Math.max(1, Math.min(doc.last, v)));
  return html`<div class="replay" data-version=${doc.version}>
    <div class="game-head">
      <h2>Replay: ${TITLES[view.game]} <span class="muted">${id}</span></h2>
    </div>
    <div class="replay-bar" role="group" aria-label="Replay controls">
      <button type="button" onClick=${() => step(1)} disabled=${doc.version <= 1} >First</button>
      <button type="button" onClick=${() => step(doc.version - 1)} disabled=${doc.version <= 1}>Back</button>
      <input type="range" min="1" max=${doc.last} value=${doc.version} aria-label="Version"
        onInput=${(e) => step(Number(e.currentTarget.value))} />
      <button type="button" onClick=${() => step(doc.version + 1)} disabled=${doc.version >= doc.last}>Forward</button>
      <button type="button" onClick=${() => step(doc.last)} disabled=${doc.version >= doc.last} >Last</button>
      <span class="version" aria-live="polite">Version ${doc.version} of ${doc.last}</span>
      <label>Seen by
        <select value=${who} onChange=${(e) => setWho(e.currentTarget.value)}>
          <option value="public">a spectator</option>
          ${doc.seats.map((_, i) => html`<option value=${String(i)}>${seatName(view, i)}</option>`)}
        </select>
      </label>
    </div>
    <p class="event">At version ${env.version}: <strong>${env.type}</strong>
      ${env.seat != null ? ` by ${seatName(view, env.seat)}` : ""} <code>${JSON.stringify(env.data).slice(0, 200)}</code></p>
    ${view.phase !== "waiting" && Board ? html`<${Board} view=${{ ...view, legal_commands: [] }} send=${() => {}} busy=${true} />` : html`<p>Before the deal.</p>`}
    <${Result} view=${view} />
    <${Verify} id=${id} />
  </div>`;
}

// ---- the shell --------------------------------------------------------------------------------

function App() {
  const route = useRoute();
  let page;
  let title = "tabletop";
  if (route.name === "play" && route.args[0]) {
    const [id, seat, token] = route.args;
    if (seat != null && token) {
      // A link carrying a seat's token: keep it in this tab, then drop it from the address.
      holdSeat(id, Number(seat), decodeURIComponent(token));
      history.replaceState(null, "", `#/play/${id}`);
    }
    page = html`<${GamePage} key=${`play-${id}`} id=${id} mode="play" />`;
    title = `Play ${id} · tabletop`;
  } else if (route.name === "join" && route.args[0]) {
    // An invite link: the play page, which offers a browser without a seat the open ones.
    page = html`<${GamePage} key=${`play-${route.args[0]}`} id=${route.args[0]} mode="play" />`;
    title = `Join ${route.args[0]} · tabletop`;
  } else if (route.name === "watch" && route.args[0]) {
    page = html`<${GamePage} key=${`watch-${route.args[0]}`} id=${route.args[0]} mode="watch" />`;
    title = `Watch ${route.args[0]} · tabletop`;
  } else if (route.name === "replay" && route.args[0]) {
    const v = Number(route.query.get("v")) || undefined;
    page = html`<${Replay} key=${`replay-${route.args[0]}`} id=${route.args[0]} start=${v} />`;
    title = `Replay ${route.args[0]} · tabletop`;
  } else if (route.name === "tournaments" && route.args[0]) {
    page = html`<${TournamentPage} key=${`tournament-${route.args[0]}`} id=${route.args[0]} />`;
    title = `Tournament ${route.args[0]} · tabletop`;
  } else if (route.name === "tournaments") {
    page = html`<${TournamentList} />`;
    title = "Tournaments · tabletop";
  } else if (route.name === "bots" && route.args[0]) {
    page = html`<${BotPage} key=${`bot-${route.args[0]}`} id=${route.args[0]} />`;
    title = `Bot ${route.args[0]} · tabletop`;
  } else if (route.name === "ladder") {
    const game = route.query.get("game") || "";
    page = html`<${LadderPage} game=${game} setGame=${(g) => go(`#/ladder?game=${encodeURIComponent(g)}`)} />`;
    title = `Ladder${game ? ` of ${TITLES[game] || game}` : ""} · tabletop`;
  } else if (route.name === "new") {
    page = html`<${NewGame} />`;
    title = "New game · tabletop";
  } else {
    page = html`<${Lobby} />`;
  }
  useEffect(() => {
    document.title = title;
  }, [title]);
  return html`<header class="top">
      <a href="#/" class="brand">tabletop</a>
      <nav aria-label="Main"><a href="#/">Lobby</a> <a href="#/new">New game</a> <a href="#/tournaments">Tournaments</a> <a href="#/ladder">Ladder</a> <a href="/docs">API</a></nav>
    </header>
    <main id="main">${page}</main>`;
}

const root = document.getElementById("app");
root.textContent = ""; // the "Loading…" placeholder: render() keeps what it did not create
render(html`<${App} />`, root);
