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
  lobby: (status, limit = 12) =>
    call("GET", `/v1/games?status=${status}&limit=${limit}`).then((r) => r.doc.games),
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

// ---- tokens: kept in sessionStorage per game, so a reload (or a link) resumes the seat -----

const KEY = (id) => `tabletop.seat.${id}`;

/** The seat and token this tab holds for game `id`, or null. */
export function heldSeat(id) {
  try {
    return JSON.parse(sessionStorage.getItem(KEY(id)) || "null");
  } catch {
    return null;
  }
}

export function holdSeat(id, seat, token) {
  sessionStorage.setItem(KEY(id), JSON.stringify({ seat, token }));
}

export function playerName() {
  return localStorage.getItem("tabletop.name") || "";
}

export function setPlayerName(name) {
  localStorage.setItem("tabletop.name", name);
}
