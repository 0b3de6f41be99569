// Isle of Skye: every territory drawn from the tile data (terrain of each edge, enclosed lakes
// and hills, roads, objects and scrolls) on a grid; the price phase with the axe and gold,
// buying, and placing with the legal spots and rotations shown.

import { useEffect, useState } from "preact/hooks";
import { html, legalOf, plural, seatName } from "./ui.js";

export const HANDLES = new Set(["set_prices", "buy", "pass", "place"]);

let tilesPromise = null;
/** The tile data as the engine plays it (served by the gateway from the engine's data). */
export function loadTiles() {
  tilesPromise ??= fetch("/web/skye-tiles.json").then((r) => r.json()).then((d) => d.tiles);
  return tilesPromise;
}

function useTiles() {
  const [tiles, setTiles] = useState(null);
  useEffect(() => {
    let live = true;
    loadTiles().then((t) => live && setTiles(t));
    return () => {
      live = false;
    };
  }, []);
  return tiles;
}

const DIRS = ["N", "E", "S", "W"];
const TRI = {
  N: "0,0 100,0 50,50",
  E: "100,0 100,100 50,50",
  S: "100,100 0,100 50,50",
  W: "0,100 0,0 50,50",
};
const MID = { N: [50, 0], E: [100, 50], S: [50, 100], W: [0, 50] };
const ICON = {
  sheep: ["Sh", "sheep"], cattle: ["Ca", "cattle"], ship: ["Sp", "ship"], whisky: ["Wh", "whisky"],
  farm: ["Fa", "farm"], broch: ["Br", "broch"], lighthouse: ["Li", "lighthouse"], castle: ["♜", "castle"],
};

// A point of the printed frame turned `rotation` degrees clockwise about the tile's centre.
function turn([x, y], rotation) {
  let dx = x - 50;
  let dy = y - 50;
  for (let k = 0; k < ((rotation / 90) % 4); k += 1) [dx, dy] = [-dy, dx];
  return [50 + dx, 50 + dy];
}

function areaSpot(area) {
  if (!area || !area.edges?.length) return [50, 50];
  const pts = area.edges.map((d) => MID[d]);
  const x = pts.reduce((s, p) => s + p[0], 0) / pts.length;
  const y = pts.reduce((s, p) => s + p[1], 0) / pts.length;
  return [50 + (x - 50) * 0.55, 50 + (y - 50) * 0.55]; // between the centre and its edges
}

/** Words for a screen reader: the edges (as turned), the objects and the scroll. */
export function tileText(tile, id, rotation = 0) {
  if (!tile) return id;
  const k = rotation / 90;
  const edges = DIRS.map((d, i) => `${DIRS[(i + k) % 4]} ${tile.edges[d]}`).join(", ");
  const things = (tile.features || []).map((f) => `${f.count > 1 ? f.count + " " : ""}${f.type}`);
  if (tile.scroll) things.push(`scroll ${tile.scroll.type.replaceAll("_", " ")}`);
  return `${id}${rotation ? ` turned ${rotation}°` : ""}: ${edges}${things.length ? "; " + things.join(", ") : ""}`;
}

/** One tile as an SVG picture, turned `rotation` degrees clockwise. */
export function Tile({ tiles, id, rotation = 0, label }) {
  const tile = tiles?.[id];
  if (!tile) return html`<span class="tile missing" role="img" aria-label=${id}>${id}</span>`;
  const areas = Object.fromEntries((tile.areas || []).map((a) => [a.id, a]));
  const enclosed = (tile.areas || []).filter((a) => !a.edges?.length);
  const segments = tile.roads?.segments?.length ? tile.roads.segments : [tile.roads?.exits || []];
  const byArea = {};
  for (const f of tile.features || []) (byArea[f.area ?? "_"] ??= []).push(f);
  if (tile.scroll) (byArea[tile.scroll.area ?? "_"] ??= []).push({ type: "scroll" });
  const icons = [];
  for (const [aid, list] of Object.entries(byArea)) {
    const [cx, cy] = turn(areaSpot(areas[aid]), rotation);
    list.forEach((f, i) => {
      const x = cx + (i - (list.length - 1) / 2) * 22;
      const [text, cls] = f.type === "scroll" ? ["✉", "scroll"] : ICON[f.type] || [f.type.slice(0, 2), "other"];
      icons.push(html`<g class=${`icon ${cls}`}>
        <circle cx=${x} cy=${cy} r="11" />
        <text x=${x} y=${cy + 4} text-anchor="middle">${f.count > 1 ? f.count : ""}${text}</text>
      </g>`);
    });
  }
  return html`<svg class="tile" viewBox="0 0 100 100" role="img" aria-label=${label || tileText(tile, id, rotation)}>
    <g transform=${`rotate(${rotation} 50 50)`}>
      ${DIRS.map((d) => html`<polygon class=${`t-${tile.edges[d]}`} points=${TRI[d]} />`)}
      ${enclosed.map((a) => html`<circle class=${`t-${a.terrain}`} cx="50" cy="50" r="16" />`)}
      ${segments.map((seg) =>
        seg.map((d) => html`<line class="road" x1="50" y1="50" x2=${MID[d][0]} y2=${MID[d][1]} />`),
      )}
    </g>
    ${tile.player_color ? html`<rect class=${`castle c-${tile.player_color}`} x="38" y="38" width="24" height="24" rx="3" />` : ""}
    ${icons}
    <rect class="frame" x="0.5" y="0.5" width="99" height="99" />
  </svg>`;
}

/** A territory on its grid (y grows north); `spots` are buttons where a tile may go. */
function Territory({ tiles, player, spots = [], chosen, onSpot, big, name }) {
  const cells = [...player.territory.map((t) => [t.x, t.y]), ...spots.map((s) => [s.x, s.y])];
  const xs = cells.map((c) => c[0]);
  const ys = cells.map((c) => c[1]);
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  // Columns shrink to fit the width (a phone, a wide territory); cells stay square.
  const style = `grid-template-columns: repeat(${x1 - x0 + 1}, minmax(0, var(--cell)));`;
  const at = (x, y) => `grid-column: ${x - x0 + 1}; grid-row: ${y1 - y + 1};`;
  return html`<div class=${"territory" + (big ? " big" : "")} style=${style} role="group" aria-label=${name === "Your" ? "Your territory" : `${name}'s territory`}>
    ${player.territory.map(
      (t) => html`<div class="cell" style=${at(t.x, t.y)}>
        <${Tile} tiles=${tiles} id=${t.tile} rotation=${t.rotation}
          label=${`(${t.x}, ${t.y}) ${tileText(tiles?.[t.tile], t.tile, t.rotation)}`} />
      </div>`,
    )}
    ${spots.map(
      (s) => html`<button type="button" class=${"cell spot" + (chosen && chosen.x === s.x && chosen.y === s.y ? " chosen" : "")}
        style=${at(s.x, s.y)} aria-label=${`Place here: (${s.x}, ${s.y})`} onClick=${() => onSpot(s)}>+</button>`,
    )}
  </div>`;
}

function Prices({ tiles, template, send, busy }) {
  const [discard, setDiscard] = useState(template.discard ?? template.tiles[0]);
  const [prices, setPrices] = useState(() => ({ ...(template.prices || {}) }));
  const min = template.min_price ?? 1;
  const priced = template.tiles.filter((t) => t !== discard);
  const total = priced.reduce((s, t) => s + (Number(prices[t]) || 0), 0);
  const submit = (e) => {
    e.preventDefault();
    const out = {};
    for (const t of priced) out[t] = Number(prices[t] ?? min);
    send({ type: "set_prices", discard, prices: out });
  };
  return html`<form class="prices" onSubmit=${submit} aria-label="Set your prices" novalidate>
    <h3>Prices</h3>
    <p class="prompt">Put the axe on one tile (it is discarded) and a price on each other one:
      at least ${min} gold each, ${template.gold} gold in all.</p>
    <div class="row">
      ${template.tiles.map(
        (t) => html`<fieldset class="offer-tile">
          <legend>${t}</legend>
          <${Tile} tiles=${tiles} id=${t} />
          <label><input type="radio" name="axe" checked=${discard === t} onChange=${() => setDiscard(t)}
            aria-label=${`Axe ${t}`} /> Axe</label>
          <label>Price
            <input type="number" min=${min} max=${template.gold} value=${t === discard ? "" : prices[t] ?? min}
              disabled=${t === discard} aria-label=${`Price of ${t}`}
              onInput=${(e) => setPrices({ ...prices, [t]: e.currentTarget.value })} />
          </label>
        </fieldset>`,
      )}
    </div>
    <p>Staked: ${total} of ${template.gold} gold.</p>
    <button type="submit" disabled=${busy}>Set prices</button>
  </form>`;
}

function Buying({ view, tiles, send, busy }) {
  const buys = legalOf(view.legal_commands, "buy");
  const pass = legalOf(view.legal_commands, "pass")[0];
  const priceOf = (tile) => {
    for (const p of view.players) if (p.offer && tile in p.offer) return [p.offer[tile], p.seat];
    if (view.extra_tile && (view.extra_tile.tile ?? view.extra_tile) === tile) return [view.extra_tile.price ?? view.round + 1, null];
    return [null, null];
  };
  if (!buys.length && !pass) return null;
  return html`<section class="buying" aria-label="Buy a tile">
    <h3>Buy one tile, or pass</h3>
    <div class="row">
      ${buys.map((c) => {
        const [price, from] = priceOf(c.tile);
        const whose = from == null ? "the extra tile" : seatName(view, from);
        return html`<div class="offer-tile">
          <${Tile} tiles=${tiles} id=${c.tile} />
          <button type="button" disabled=${busy} onClick=${() => send(c)}
            aria-label=${`Buy ${c.tile} from ${whose} for ${price} gold`}>Buy ${c.tile} · ${price} gold</button>
        </div>`;
      })}
    </div>
    ${pass ? html`<button type="button" disabled=${busy} onClick=${() => send(pass)}>Pass (buy nothing)</button>` : ""}
  </section>`;
}

function Building({ view, tiles, send, busy }) {
  const places = legalOf(view.legal_commands, "place");
  const toPlace = [...new Set(places.map((c) => c.tile))];
  const [tile, setTile] = useState(null);
  const [chosen, setSpot] = useState(null);
  const current = toPlace.includes(tile) ? tile : toPlace[0];
  if (!places.length) return { panel: null, spots: [] };
  const mine = places.filter((c) => c.tile === current);
  const spots = [];
  for (const c of mine) if (!spots.some((s) => s.x === c.x && s.y === c.y)) spots.push({ x: c.x, y: c.y });
  // The chosen spot stands while it is legal for the chosen tile: other seats' moves (a new
  // version) leave it, another tile or a placed one drops it.
  const spot = chosen && chosen.tile === current && spots.some((s) => s.x === chosen.x && s.y === chosen.y) ? chosen : null;
  const rotations = spot ? mine.filter((c) => c.x === spot.x && c.y === spot.y) : [];
  const panel = html`<section class="building" aria-label="Place your tiles">
    <h3>Place a tile</h3>
    <div class="row" role="group" aria-label="Tile to place">
      ${toPlace.map(
        (t) => html`<button type="button" class=${"pick-tile" + (t === current ? " chosen" : "")} aria-pressed=${t === current}
          aria-label=${`Choose ${t}`} onClick=${() => setTile(t)}><${Tile} tiles=${tiles} id=${t} /></button>`,
      )}
    </div>
    <p class="prompt">${spot
      ? `Choose how ${current} is turned at (${spot.x}, ${spot.y}):`
      : `Choose a spot (+) for ${current} in your territory: ${spots.length} possible.`}</p>
    ${rotations.length
      ? html`<div class="row" role="group" aria-label="Rotation">
          ${rotations.map(
            (c) => html`<button type="button" class="pick-tile" disabled=${busy} onClick=${() => send(c)}
              aria-label=${`Place ${c.tile} at (${c.x}, ${c.y}) turned ${c.rotation}°`}>
              <${Tile} tiles=${tiles} id=${c.tile} rotation=${c.rotation} /><span>${c.rotation}°</span>
            </button>`,
          )}
        </div>`
      : ""}
  </section>`;
  return { panel, spots, spot, onSpot: (s) => setSpot({ ...s, tile: current }) };
}

/** Where a player's points came from: each round's scoring tiles, scrolls and gold. */
function Breakdown({ player }) {
  const b = player.score_breakdown;
  if (!b || !(b.rounds?.length || b.gold)) return null;
  const rounds = (b.rounds || []).map(
    (r) => `round ${r.round}: ${Object.entries(r.points || {}).map(([l, v]) => `${l} ${v}`).join(", ") || "0"}`,
  );
  const scrolls = Object.entries(b.scrolls || {}).map(([k, v]) => `${k.replaceAll("_", " ")} ${v}`);
  return html`<details class="breakdown"><summary>Score breakdown</summary>
    <ul>${rounds.map((t) => html`<li>${t}</li>`)}
      ${scrolls.length ? html`<li>scrolls: ${scrolls.join(", ")}</li>` : ""}
      ${b.gold ? html`<li>gold: ${b.gold}</li>` : ""}</ul>
  </details>`;
}

function Scoring({ view }) {
  const now = view.schedule?.[view.round - 1] || [];
  return html`<section class="scoring" aria-label="Scoring tiles">
    <h3>Scoring tiles (round ${view.round} of ${view.rounds} scores ${now.join(", ") || "none"})</h3>
    <ul>
      ${(view.scoring_tiles || []).map(
        (s) => html`<li class=${now.includes(s.letter) ? "scores-now" : ""}>
          <strong>${s.letter}</strong> ${s.name} <span class="muted">(rounds ${(s.rounds || []).join(", ")})</span>
          <details><summary>Rule</summary>${s.definition}</details>
        </li>`,
      )}
    </ul>
  </section>`;
}

export function Board({ view, send, busy }) {
  const tiles = useTiles();
  const me = view.seat != null ? view.players?.[view.seat] : null;
  const template = legalOf(view.legal_commands, "set_prices")[0];
  const build = Building({ view, tiles, send, busy });
  return html`<div class="board skye">
    <div class="info">
      <span>Round ${view.round} of ${view.rounds}</span><span>Phase: ${view.phase}</span>
      <span>Start: ${seatName(view, view.start_player)}</span>
      ${view.current_buyer != null ? html`<span>Buying: ${seatName(view, view.current_buyer)}</span>` : ""}
      <span>Bag: ${view.bag_size}</span>
    </div>
    ${template ? html`<${Prices} key=${`${view.round}`} tiles=${tiles} template=${template} send=${send} busy=${busy} />` : ""}
    <${Buying} view=${view} tiles=${tiles} send=${send} busy=${busy} />
    ${build.panel}
    ${me
      ? html`<section class="mine" aria-label="Your territory">
          <h3>Your territory · ${me.gold} gold${me.free_gold != null ? ` (${me.free_gold} free)` : ""} · ${plural(me.score, "point")}</h3>
          <${Breakdown} player=${me} />
          <${Territory} tiles=${tiles} player=${me} spots=${build.spots} chosen=${build.spot}
            onSpot=${build.onSpot} big=${true} name="Your" />
        </section>`
      : ""}
    <ul class="skye-players">
      ${(view.players || []).filter((p) => p.seat !== view.seat).map(
        (p) => html`<li class=${(view.to_act || []).includes(p.seat) ? "acting" : ""}>
          <h4>${seatName(view, p.seat)} · ${p.gold} gold · ${plural(p.score, "point")}
            ${view.phase === "prices" ? html`<span class="tag">${p.prices_set ? "prices set" : "pricing"}</span>` : ""}</h4>
          <${Breakdown} player=${p} />
          ${p.offer && Object.keys(p.offer).length
            ? html`<div class="row minis" aria-label=${`${seatName(view, p.seat)}'s offer`}>
                Offers:
                ${Object.entries(p.offer).map(
                  ([t, g]) => html`<span class="mini"><${Tile} tiles=${tiles} id=${t} /><span>${g} gold</span></span>`,
                )}
              </div>`
            : p.drawn?.length
              ? html`<div class="row minis" aria-label=${`${seatName(view, p.seat)} drew`}>Drew:
                  ${p.drawn.map((t) => html`<span class="mini"><${Tile} tiles=${tiles} id=${t} /></span>`)}
                </div>`
              : ""}
          <${Territory} tiles=${tiles} player=${p} name=${seatName(view, p.seat)} />
        </li>`,
      )}
    </ul>
    <${Scoring} view=${view} />
    <p class="legend muted">${Object.values(ICON).map(([mark, name]) => `${mark} ${name}`).join(" · ")} · ✉ scroll</p>
  </div>`;
}
