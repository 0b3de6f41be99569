// The page's only way to the service: the public /v1 API (and the page's replay endpoint).
// A seat's token is sent only by the play page; watching and replaying never send one, so a
// spectator's page cannot fetch anything a spectator may not read.

const JSON_HEADERS = { "Content-Type": "application/json" };

/** An error answered by the service: its problem body (RFC 9457) when it sent one. */
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || problem?.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem || {};
  }
}

async function call(method, path, { token, body, headers } = {}) {
  const h = { ...(body !== undefined ? JSON_HEADERS : {}), ...(headers || {}) };
  if (token) h.Authorization = `Bearer ${token}`;
  const res = await fetch(path, {
    method,
    headers: h,
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let doc = null;
  try {
    doc = text ? JSON.parse(text) : null;
  } catch {
    doc = { detail: text };
  }
  if (!res.ok) throw new ApiError(res.status, doc);
  return { status: res.status, doc };
}

export const api = {
  gameTypes: () => call("GET", "/v1/game-types").then((r) => r.doc.game_types),
  /** A page of the lobby's list of `status` ({games, next_cursor}), of one `game` or all. */
  lobby: (status, { game = "", cursor = null, limit = 12 } = {}) =>
    call(
      "GET",
      `/v1/games?status=${status}&limit=${limit}` +
        (game ? `&game=${encodeURIComponent(game)}` : "") +
        (cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""),
    ).then((r) => r.doc),
  create: (body) => call("POST", "/v1/games", { body }).then((r) => r.doc),
  join: (id, seat, name) =>
    call("POST", `/v1/games/${id}/seats/${seat}/join`, { body: { name } }).then((r) => r.doc),
  view: (id, token) => call("GET", `/v1/games/${id}`, { token }).then((r) => r.doc),
  /** Sends a command and waits for its outcome: the new view (200) or null if still pending. */
  command: (id, token, command) =>
    call("POST", `/v1/games/${id}/commands`, {
      token,
      body: command,
      headers: { Prefer: "wait=10" },
    }).then((r) => (r.status === 200 ? r.doc : null)),
  replay: (id, version) =>
    call("GET", `/web/replay/${id}` + (version ? `?version=${version}` : "")).then((r) => r.doc),
  async exportText(id) {
    const res = await fetch(`/v1/games/${id}/export`);
    if (!res.ok) throw new ApiError(res.status, await res.json().catch(() => null));
    return res.text();
  },
  // Tournaments need an organizer's or auditor's key: the only calls that send one.
  async tournaments(key) {
    // Listed oldest first, a page at a time: read them all (bounded), newest first.
    const all = [];
    for (let page = 0; page < 10; page++) {
      const { doc } = await call("GET", `/v1/tournaments?offset=${page * 100}&limit=100`, { token: key });
      all.push(...doc.tournaments);
      if (doc.tournaments.length < 100) break;
    }
    return all.reverse();
  },
  tournament: (id, key, offset = 0, limit = 20) =>
    call("GET", `/v1/tournaments/${encodeURIComponent(id)}?offset=${offset}&limit=${limit}`, { token: key })
      .then((r) => r.doc),
  bots: () => call("GET", "/v1/bots?limit=100").then((r) => r.doc.bots),
  bot: (id) => call("GET", `/v1/bots/${encodeURIComponent(id)}`).then((r) => r.doc),
  /** The public ladder of one game type ({game, ratings}); no key. */
  ratings: (game) => call("GET", `/v1/ratings?game=${encodeURIComponent(game)}`).then((r) => r.doc),
  /** A page of the lobby's list, newest first (every status); with `bot`, that registered
   * bot's games (its tournament games too, once archived). */
  games: (cursor, limit = 100, bot = null) =>
    call("GET", `/v1/games?limit=${limit}` + (cursor ? `&cursor=${encodeURIComponent(cursor)}` : "")
      + (bot ? `&bot=${encodeURIComponent(bot)}` : "")).then((r) => r.doc),
};

/**
 * Follows a game's live feed (Server-Sent Events): onUpdate({version, events, view}) per
 * message. A token makes it that seat's feed; without one it is the spectator's.
 * Returns a function that closes the feed. The feed is closed once a view shows the game
 * over: the server ends the stream then, and EventSource would otherwise reconnect forever.
 */
export function follow(id, token, onUpdate, onState) {
  const url = `/v1/games/${id}/feed` + (token ? `?access_token=${encodeURIComponent(token)}` : "");
  const source = new EventSource(url);
  let closed = false;
  const close = () => {
    closed = true;
    source.close();
  };
  source.addEventListener("open", () => onState?.("live"));
  source.addEventListener("update", (e) => {
    const data = JSON.parse(e.data);
    onUpdate(data);
    if (data.view?.outcome != null) close();
  });
  source.addEventListener("error", () => {
    if (!closed) onState?.(source.readyState === EventSource.CLOSED ? "closed" : "reconnecting");
  });
  return close;
}

// ---- seats: kept in localStorage per game, so a closed tab, a reload or a link resumes it -----
// A seat's token is the only way back to a game: kept in the tab alone (sessionStorage), it was
// lost with the tab, and a game without a clock then waited for ever. "My games" on the lobby
// lists what this browser holds, newest first, bounded (the oldest are forgotten).

const KEY = (id) => `tabletop.seat.${id}`;
const SEATS_INDEX = "tabletop.seats";
const SEATS_KEPT = 50;

/** The seat and token this browser holds for game `id` ({seat, token, game, at}), or null. */
export function heldSeat(id) {
  try {
    const kept = localStorage.getItem(KEY(id)) ?? sessionStorage.getItem(KEY(id)); // a tab from before
    return JSON.parse(kept || "null");
  } catch {
    return null;
  }
}

/** Keep seat `seat` of game `id` with its token (and the game's type, for "my games"). */
export function holdSeat(id, seat, token, game = null) {
  const old = heldSeat(id);
  const kept = { seat, token, game: game ?? old?.game ?? null, at: Date.now() };
  try {
    localStorage.setItem(KEY(id), JSON.stringify(kept));
    const index = readJson(SEATS_INDEX, []).filter((g) => g !== id);
    index.push(id);
    for (const gone of index.splice(0, Math.max(0, index.length - SEATS_KEPT))) {
      localStorage.removeItem(KEY(gone));
    }
    localStorage.setItem(SEATS_INDEX, JSON.stringify(index));
  } catch {
    sessionStorage.setItem(KEY(id), JSON.stringify(kept)); // storage refused: this tab at least
  }
}

/** Forget the seat held in game `id`. */
export function dropSeat(id) {
  try {
    localStorage.removeItem(KEY(id));
    sessionStorage.removeItem(KEY(id));
    localStorage.setItem(SEATS_INDEX, JSON.stringify(readJson(SEATS_INDEX, []).filter((g) => g !== id)));
  } catch {
    // nothing kept, nothing to forget
  }
}

/** "My games": [{id, seat, token, game, at}] this browser holds a seat in, newest first. */
export function heldSeats() {
  return readJson(SEATS_INDEX, [])
    .map((id) => ({ id, ...(heldSeat(id) || {}) }))
    .filter((s) => s.token)
    .reverse();
}

// ---- the history this browser was shown: (version, head_hash) of every view, per game ----------
// Every view carries the hash of the log's last event at its version. A player (or spectator)
// who keeps them can check after the game that the exported log is the history it was shown:
// a log rewritten later, even re-sealed with the seed, has other hashes from the change on.
// Kept in localStorage (it outlives the tab), bounded: the games seen last, each its latest
// versions (a later hash commits to everything before it anyway).

const HEADS = (id) => `tabletop.heads.${id}`;
const HEADS_INDEX = "tabletop.heads";
const HEADS_GAMES = 20;
const HEADS_PER_GAME = 2000;

function readJson(key, fallback) {
  try {
    return JSON.parse(localStorage.getItem(key) || "null") ?? fallback;
  } catch {
    return fallback;
  }
}

/** Remember the (version, head_hash) of a view shown for game `id`. */
export function keepHead(id, view) {
  if (!view || !Number.isInteger(view.version) || typeof view.head_hash !== "string") return;
  try {
    const heads = readJson(HEADS(id), {});
    if (heads[view.version] === view.head_hash) return;
    heads[view.version] = view.head_hash;
    const versions = Object.keys(heads).map(Number).sort((a, b) => a - b);
    for (const v of versions.slice(0, Math.max(0, versions.length - HEADS_PER_GAME))) delete heads[v];
    localStorage.setItem(HEADS(id), JSON.stringify(heads));
    const index = readJson(HEADS_INDEX, []).filter((g) => g !== id);
    index.push(id);
    for (const old of index.splice(0, Math.max(0, index.length - HEADS_GAMES))) {
      localStorage.removeItem(HEADS(old));
    }
    localStorage.setItem(HEADS_INDEX, JSON.stringify(index));
  } catch {
    // Storage full or refused (a private window): the game plays on, unverified by history.
  }
}

/** The {version: head_hash} this browser was shown of game `id` ({} when none). */
export function keptHeads(id) {
  return readJson(HEADS(id), {});
}

export function playerName() {
  return localStorage.getItem("tabletop.name") || "";
}

export function setPlayerName(name) {
  localStorage.setItem("tabletop.name", name);
}

// ---- an organizer's or auditor's key: kept in localStorage, sent only to /v1/tournaments ------
// Reading tournaments needs one; the page never sends it anywhere else (not to games or feeds).

const ORG_KEY = "tabletop.key";

/** The organizer or auditor key this browser keeps ("" when none). */
export function heldKey() {
  try {
    return localStorage.getItem(ORG_KEY) || "";
  } catch {
    return "";
  }
}

/** Keep `key` (an empty one forgets it). */
export function holdKey(key) {
  if (key) localStorage.setItem(ORG_KEY, key);
  else localStorage.removeItem(ORG_KEY);
}
