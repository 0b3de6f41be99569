// An independent verifier of tabletop's randomness and hash chain (docs/fairness.md).
//
// It follows the specification step by step (its names are the spec's), so that a second
// implementation agreeing with the Python one on real exports is evidence that the spec says
// enough to recompute everything. No dependencies: it runs in Node 20 and in browsers (WebCrypto via globalThis.crypto.subtle).
// Every function that hashes is async because WebCrypto is. (Browsers offer crypto.subtle only
// in secure contexts: serve the page over https or from localhost.)
//
// Integers drawn by the Rng are BigInts inside (blocks are 256-bit numbers); a caller that
// passes a Number bound gets a Number back, so card and seat arithmetic stays plain.

const subtle = globalThis.crypto?.subtle;
const encoder = new TextEncoder();

/** The first envelope's prev_hash: 64 zeros. */
export const GENESIS_HASH = "0".repeat(64);

const SPACE = 1n << 256n; // blocks are read as 256-bit big-endian integers

// ---- bytes and hashes ------------------------------------------------------------------------

/**
 * UTF-8 bytes of a string (bytes are passed through).
 * @param {string|Uint8Array} value
 * @returns {Uint8Array}
 */
export function utf8(value) {
  return typeof value === "string" ? encoder.encode(value) : value;
}

/**
 * Lowercase hex of bytes.
 * @param {Uint8Array|ArrayBuffer} bytes
 * @returns {string}
 */
export function toHex(bytes) {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let out = "";
  for (const b of view) out += b.toString(16).padStart(2, "0");
  return out;
}

/**
 * SHA-256 of a string (UTF-8) or bytes.
 * @param {string|Uint8Array} data
 * @returns {Promise<Uint8Array>}
 */
export async function sha256(data) {
  return new Uint8Array(await subtle.digest("SHA-256", utf8(data)));
}

/**
 * Lowercase hex SHA-256 of a string (UTF-8) or bytes.
 * @param {string|Uint8Array} data
 * @returns {Promise<string>}
 */
export async function sha256Hex(data) {
  return toHex(await sha256(data));
}

// Importing an HMAC key is the slow part of WebCrypto's HMAC; a game uses one key (its seed)
// for every block and salt, so the imported key is kept per key string.
const keyCache = new Map();

async function hmacKey(key) {
  let found = keyCache.get(key);
  if (found === undefined) {
    found = subtle.importKey("raw", utf8(key), { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
    ]);
    if (keyCache.size > 64) keyCache.clear();
    keyCache.set(key, found);
  }
  return found;
}

/**
 * HMAC-SHA256 (RFC 2104) of `msg` keyed with `key`; strings are UTF-8 encoded.
 * @param {string|Uint8Array} key
 * @param {string|Uint8Array} msg
 * @returns {Promise<Uint8Array>} the 32-byte tag
 */
export async function hmacSha256(key, msg) {
  const keyBytes = utf8(key);
  if (keyBytes.length === 0) {
    // WebCrypto refuses zero-length HMAC keys; RFC 2104 allows them (the key is all padding),
    // so build the construction by hand: H((K ^ opad) || H((K ^ ipad) || msg)).
    const ipad = new Uint8Array(64).fill(0x36);
    const opad = new Uint8Array(64).fill(0x5c);
    const inner = await sha256(concat(ipad, utf8(msg)));
    return sha256(concat(opad, inner));
  }
  const cryptoKey = await hmacKey(typeof key === "string" ? key : keyBytes);
  return new Uint8Array(await subtle.sign("HMAC", cryptoKey, utf8(msg)));
}

function concat(a, b) {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

function bytesToBigInt(bytes) {
  return BigInt("0x" + toHex(bytes)); // big-endian: the first byte is the most significant
}

// ---- the random stream ------------------------------------------------------------------------

/**
 * The game's random stream named `label` ("setup", "v<version>", "bot:<seat>:v<version>"):
 * block i is HMAC-SHA256(key = seed, msg = "<label>:<i>") read as a big-endian integer.
 */
export class Rng {
  /**
   * @param {string} seed the game's (play) seed, as the text it is revealed as
   * @param {string} [label="setup"]
   */
  constructor(seed, label = "setup") {
    this.seed = seed;
    this.label = label;
    /** How many blocks were read so far (the next block's counter). */
    this.counter = 0;
  }

  /**
   * The next 256-bit block of the stream.
   * @returns {Promise<bigint>}
   */
  async block() {
    const msg = `${this.label}:${this.counter}`;
    this.counter += 1;
    return bytesToBigInt(await hmacSha256(this.seed, msg));
  }

  /**
   * A uniform integer in [0, n) by rejection sampling: a block at or above the largest
   * multiple of n that fits in 2**256 is thrown away and the next one is read.
   * @param {number|bigint} n a positive bound
   * @returns {Promise<number|bigint>} a Number when n is a Number, else a BigInt
   */
  async below(n) {
    const big = BigInt(n);
    if (big <= 0n) throw new RangeError("n must be positive");
    const limit = (SPACE / big) * big;
    for (;;) {
      const x = await this.block();
      if (x < limit) {
        const r = x % big;
        return typeof n === "bigint" ? r : Number(r);
      }
    }
  }

  /**
   * One uniformly chosen item: items[below(items.length)].
   * @template T
   * @param {T[]} items
   * @returns {Promise<T>}
   */
  async choice(items) {
    return items[await this.below(items.length)];
  }

  /**
   * Fisher-Yates from the end: for i = len-1 down to 1, j = below(i + 1), swap i and j.
   * Returns a new array; the input is untouched.
   * @template T
   * @param {T[]} items
   * @returns {Promise<T[]>}
   */
  async shuffle(items) {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i -= 1) {
      const j = await this.below(i + 1);
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out;
  }
}

/**
 * The bits of an Rng stream in order, most significant first (what bots draw from):
 * below(n) reads k = bitLength(n - 1) bits at a time until the value is below n.
 */
export class BitStream {
  /** @param {Rng} rng */
  constructor(rng) {
    this.rng = rng;
    this.bitsLeft = 0;
    this.current = 0n;
  }

  /**
   * The next k bits as a BigInt (crossing into the next block when this one runs out).
   * @param {number} k
   * @returns {Promise<bigint>}
   */
  async bits(k) {
    let out = 0n;
    while (k > 0) {
      if (this.bitsLeft === 0) {
        this.current = await this.rng.block();
        this.bitsLeft = 256;
      }
      const take = Math.min(k, this.bitsLeft);
      this.bitsLeft -= take;
      const chunk = (this.current >> BigInt(this.bitsLeft)) & ((1n << BigInt(take)) - 1n);
      out = (out << BigInt(take)) | chunk;
      k -= take;
    }
    return out;
  }

  /**
   * A uniform integer in [0, n) (no bits at all for n = 1).
   * @param {number} n
   * @returns {Promise<number>}
   */
  async below(n) {
    if (n <= 0) throw new RangeError("n must be positive");
    const k = n === 1 ? 0 : (n - 1).toString(2).length; // bit length of n - 1
    let r = await this.bits(k);
    while (r >= BigInt(n)) r = await this.bits(k);
    return Number(r);
  }
}

/**
 * The stream label of the bot at `seat` deciding at `version`.
 * @param {number} seat
 * @param {number} version
 */
export function botLabel(seat, version) {
  return `bot:${seat}:v${version}`;
}

/**
 * The index the random bot at `seat` picks among `n` legal commands at `version`.
 * @param {string} seed
 * @param {number} seat
 * @param {number} version
 * @param {number} n
 * @returns {Promise<number>}
 */
export async function botChoiceIndex(seed, seat, version, n) {
  return new BitStream(new Rng(seed, botLabel(seat, version))).below(n);
}

// ---- canonical JSON, salts, the chain ---------------------------------------------------------

function compareCodePoints(a, b) {
  // Python sorts str keys by code point; JS's default sort compares UTF-16 code units, which
  // differs only between U+E000..U+FFFF and astral characters. Compare code points to match.
  const ai = a[Symbol.iterator]();
  const bi = b[Symbol.iterator]();
  for (;;) {
    const x = ai.next();
    const y = bi.next();
    if (x.done || y.done) return x.done === y.done ? 0 : x.done ? -1 : 1;
    const cx = x.value.codePointAt(0);
    const cy = y.value.codePointAt(0);
    if (cx !== cy) return cx < cy ? -1 : 1;
  }
}

/**
 * The canonical JSON of a value: object keys sorted, no whitespace, strings as JSON.stringify
 * writes them (non-ASCII unescaped). Integers only: a non-integer or unsafe number throws,
 * since its spelling is not defined by the spec (and JSON.parse may already have changed it).
 * @param {unknown} value
 * @returns {string}
 */
export function canonicalJson(value) {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "string":
      return JSON.stringify(value);
    case "number":
      if (!Number.isSafeInteger(value)) {
        throw new TypeError(`not a safe integer: ${value} (floats and big numbers are never hashed)`);
      }
      return Object.is(value, -0) ? "0" : String(value);
    case "bigint":
      return value.toString();
    case "object":
      if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
      return `{${Object.keys(value)
        .sort(compareCodePoints)
        .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`)
        .join(",")}}`;
    default:
      throw new TypeError(`cannot hash a ${typeof value}`);
  }
}

/**
 * The secret salt hashed into the envelope at `version`: hex HMAC-SHA256(seed, "salt:<version>").
 * @param {string} seed the server seed (the one revealed), also in a game of contributed fairness
 * @param {number} version
 * @returns {Promise<string>}
 */
export async function eventSalt(seed, version) {
  return toHex(await hmacSha256(seed, `salt:${version}`));
}

/**
 * A registered bot's turn nonce (the `nonce` of the body it was sent, which makes its
 * `bot_turn.sent_sha256` hide the seat's view): hex HMAC-SHA256(seed, "bot-turn:<turn_id>").
 * @param {string} seed the server seed (the one revealed)
 * @param {string} turnId the turn's `turn_id`, `<game_id>-<seat>-<version>`
 * @returns {Promise<string>}
 */
export async function turnNonce(seed, turnId) {
  return toHex(await hmacSha256(seed, `bot-turn:${turnId}`));
}

/**
 * What a bot that kept the body of a turn checks once the seed is revealed: the body's nonce
 * is the one the seed gives, and its SHA-256 is the `sent_sha256` the log recorded.
 * @param {string} body the exact body received (text)
 * @param {string} seed the revealed server seed
 * @param {string} sentSha256 the log's `bot_turn.sent_sha256` for that turn
 * @returns {Promise<{ok: boolean, reason: string|null}>}
 */
export async function checkTurnBody(body, seed, sentSha256) {
  const doc = JSON.parse(body);
  if (doc.nonce !== undefined && doc.nonce !== (await turnNonce(seed, doc.turn_id))) {
    return { ok: false, reason: "its nonce is not the one the seed gives" };
  }
  if ((await sha256Hex(body)) !== sentSha256) {
    return { ok: false, reason: "its SHA-256 is not the recorded sent_sha256" };
  }
  return { ok: true, reason: null };
}

/**
 * The object whose canonical JSON is hashed for one envelope: version, type, data, command_id,
 * seat, at and salt, plus command when the envelope records one.
 * @param {object} env an envelope as exported
 * @param {string} salt
 */
export function hashedContent(env, salt) {
  const content = {
    version: env.version,
    type: env.type,
    data: env.data,
    command_id: env.command_id,
    seat: env.seat,
    at: env.at,
    salt,
  };
  if (env.command !== undefined && env.command !== null) content.command = env.command;
  return content;
}

/**
 * An envelope's hash: hex SHA-256(prev_hash + "\n" + canonicalJson(content)).
 * @param {string} prevHash
 * @param {object} env the envelope's fields (version, type, data, command_id, seat, at, command?)
 * @param {string} salt its eventSalt
 * @returns {Promise<string>}
 */
export async function chainHash(prevHash, env, salt) {
  return sha256Hex(`${prevHash}\n${canonicalJson(hashedContent(env, salt))}`);
}

/**
 * The seed an export reveals: the data.seed of its last envelope when that is seed_revealed.
 * @param {object[]} envelopes
 * @returns {string|null}
 */
export function revealedSeed(envelopes) {
  const last = envelopes[envelopes.length - 1];
  if (last && last.type === "seed_revealed" && typeof last.data?.seed === "string") {
    return last.data.seed;
  }
  return null;
}

/**
 * Checks versions 1..n are contiguous, every prev_hash is the hash before it and, with the
 * seed (by default the one revealed in the last envelope), every hash is recomputed.
 * @param {object[]} envelopes
 * @param {string|null} [seed]
 * @returns {Promise<{ok: boolean, last: number, salted: boolean, version: number|null,
 *   reason: string|null}>} version: the first envelope at fault
 */
export async function verifyChain(envelopes, seed = revealedSeed(envelopes)) {
  let prev = GENESIS_HASH;
  let expected = 1;
  const salted = seed !== null;
  const fail = (version, reason) => ({ ok: false, last: expected - 1, salted, version, reason });
  for (const env of envelopes) {
    if (env.version !== expected) {
      return fail(expected, `version ${env.version} where ${expected} was expected`);
    }
    if (env.prev_hash !== prev) {
      return fail(env.version, `version ${env.version}: prev_hash does not match`);
    }
    if (seed !== null) {
      let h;
      try {
        h = await chainHash(prev, env, await eventSalt(seed, env.version));
      } catch (err) {
        return fail(env.version, `version ${env.version}: cannot be hashed: ${err.message}`);
      }
      if (h !== env.hash) {
        return fail(env.version, `version ${env.version}: hash does not match its content`);
      }
    }
    prev = env.hash;
    expected += 1;
  }
  return { ok: true, last: expected - 1, salted, version: null, reason: null };
}

/**
 * Whether sha256(seed) is the commitment game_created published (data.seed_sha256).
 * @param {object[]} envelopes
 * @param {string|null} [seed] by default the revealed one
 * @returns {Promise<boolean>}
 */
export async function checkSeedCommitment(envelopes, seed = revealedSeed(envelopes)) {
  const created = envelopes[0];
  if (seed === null || !created || created.type !== "game_created") return false;
  return (await sha256Hex(seed)) === created.data.seed_sha256;
}

/**
 * The seed every draw comes from. A standard game draws from the server seed; a game of
 * contributed fairness from hex HMAC-SHA256(server seed, "contributed:" + canonicalJson(client
 * seeds by seat, null where none)).
 * @param {string} serverSeed
 * @param {(string|null)[]|null} clientSeeds null for a standard game
 * @returns {Promise<string>}
 */
export async function playSeed(serverSeed, clientSeeds) {
  if (clientSeeds === null) return serverSeed;
  return toHex(await hmacSha256(serverSeed, "contributed:" + canonicalJson(clientSeeds)));
}

// ---- The Fox in the Forest --------------------------------------------------------------------

/** Fox suits in card-code order: a card's code is suitIndex * 11 + rank - 1 (0..32). */
export const FOX_SUITS = ["bells", "keys", "moons"];
const FOX_CARDS = 33;
const FOX_HAND = 13;

function factorial(n) {
  let out = 1n;
  for (let i = 2n; i <= BigInt(n); i += 1n) out *= i;
  return out;
}

/** 33! / 13!: the number of ways to deal positions 13..32 from 33 cards. */
export const FOX_DEAL_CHOICES = factorial(FOX_CARDS) / factorial(FOX_HAND);

/**
 * A card code from its JSON ({"suit", "rank"}).
 * @param {{suit: string, rank: number}} card
 */
export function foxCardCode(card) {
  const suit = FOX_SUITS.indexOf(card?.suit);
  if (suit < 0 || !Number.isInteger(card.rank) || card.rank < 1 || card.rank > 11) {
    throw new TypeError(`not a card: ${JSON.stringify(card)}`);
  }
  return suit * 11 + card.rank - 1;
}

/**
 * A card's JSON from its code.
 * @param {number} code
 */
export function foxCardJson(code) {
  return { suit: FOX_SUITS[Math.floor(code / 11)], rank: (code % 11) + 1 };
}

/**
 * A Fox deal's arrangement of cards 0..32 from ONE draw k = below(33!/13!): starting from
 * 0..32 in order, for i = 32 down to 13, j = k mod (i + 1), k = floor(k / (i + 1)), swap
 * positions i and j (a partial Fisher-Yates whose indices are k's mixed-radix digits).
 * @param {Rng} rng the stream at the deal's position
 * @returns {Promise<{k: bigint, arrangement: number[]}>}
 */
export async function foxArrangement(rng) {
  let k = await rng.below(FOX_DEAL_CHOICES);
  const drawn = k;
  const out = Array.from({ length: FOX_CARDS }, (_, i) => i);
  for (let i = FOX_CARDS - 1; i >= FOX_HAND; i -= 1) {
    const radix = BigInt(i + 1);
    const j = Number(k % radix);
    k /= radix;
    [out[i], out[j]] = [out[j], out[i]];
  }
  return { k: drawn, arrangement: out };
}

/**
 * The round_dealt data of an arrangement: seat 0 gets positions 0-12 and seat 1 positions
 * 13-25 (each hand sorted by code), position 26 is the decree card, 27-32 the deck, top first.
 * @param {number} round
 * @param {number} dealer
 * @param {number[]} arrangement
 */
export function foxDealData(round, dealer, arrangement) {
  const sorted = (cards) => [...cards].sort((a, b) => a - b).map(foxCardJson);
  return {
    round,
    dealer,
    hands: [sorted(arrangement.slice(0, 13)), sorted(arrangement.slice(13, 26))],
    decree: foxCardJson(arrangement[26]),
    deck: arrangement.slice(27).map(foxCardJson),
  };
}

// ---- Skye data (the bag's contents and the scoring tiles: not in any event) -------------------

/** Isle of Skye landscape tile ids: the bag at the start (shared/games/skye/data.py). */
export const SKYE_LANDSCAPE_IDS = Array.from(
  { length: 73 },
  (_, i) => `L${String(i + 1).padStart(2, "0")}`,
);

/** Isle of Skye scoring tile ids in the order of their index 0..15 (the setup shuffle's input). */
export const SKYE_SCORING_IDS = [
  "square_plots",
  "sheep",
  "brochs_in_mountains",
  "whisky_majority",
  "animals_near_farms",
  "cattle_on_roads",
  "road_connected_tiles",
  "largest_completed_lake",
  "completed_areas",
  "completed_areas_3plus",
  "broch_farm_lighthouse_sets",
  "ships_majority",
  "gold_majority",
  "ship_lighthouse_waters",
  "vertical_lines",
  "completed_mountains",
];

const SKYE_TILES_PER_SEAT = 3;

/**
 * One round's bag draws: from the bag (sorted by code point), the seats in turn order from
 * `start` each take 3 tiles (fewer when the bag runs out), each one bag.splice(below(len), 1);
 * then the advanced variant's extra tile the same way. The bag is changed in place.
 * @param {Rng} rng
 * @param {string[]} bag
 * @param {number} seats
 * @param {number} start
 * @param {boolean} advanced
 * @returns {Promise<{tiles: string[][], extra: string|null}>}
 */
export async function skyeDraw(rng, bag, seats, start, advanced) {
  const tiles = Array.from({ length: seats }, () => []);
  for (let i = 0; i < seats; i += 1) {
    const seat = (start + i) % seats;
    for (let t = 0; t < SKYE_TILES_PER_SEAT; t += 1) {
      if (bag.length) tiles[seat].push(bag.splice(await rng.below(bag.length), 1)[0]);
    }
  }
  let extra = null;
  if (advanced && bag.length) extra = bag.splice(await rng.below(bag.length), 1)[0];
  return { tiles, extra };
}

// ---- Skull ------------------------------------------------------------------------------------

/**
 * The order of a challenger's discs at a blind pick: shuffle([flower x flowers, skull x skulls]).
 * @param {Rng} rng
 * @param {number} flowers
 * @param {number} skulls
 */
export async function skullShuffle(rng, flowers, skulls) {
  return rng.shuffle([...Array(flowers).fill("flower"), ...Array(skulls).fill("skull")]);
}

// ---- the whole game ---------------------------------------------------------------------------

const same = (a, b) => canonicalJson(a) === canonicalJson(b);

// Consecutive envelopes of one command; a command's first envelope records it (`command`).
function groups(envelopes) {
  const out = [];
  for (const env of envelopes) {
    const last = out[out.length - 1];
    if (last && last[0].command_id === env.command_id && env.command == null) last.push(env);
    else out.push([env]);
  }
  return out;
}

function sortedBag(tiles) {
  return [...tiles].sort(compareCodePoints);
}

// Each game's draw checks: an object whose step(env, ctx) sees every engine event in order and
// returns the checks it made ({name, ok, detail}). ctx.rng() is the stream of the event's step
// (created on first use and shared by the step's events, as the engine shares one Rng per setup
// or command), ctx.label its name, ctx.options the game's recorded (parsed) options, ctx.seats
// the number of seats.

// A check of one drawn value against the recorded one.
function drawn(name, how, got, recorded) {
  const ok = same(got, recorded);
  const shown = (x) => (typeof x === "string" ? x : JSON.stringify(x));
  const detail = ok
    ? `${how} = ${shown(got)}`
    : `${how} gives ${shown(got)}, the log has ${shown(recorded)}`;
  return { name, ok, detail };
}

// A value the options fixed (no draw): the log must hold that value.
function fixed(name, option, recorded) {
  const ok = same(option, recorded);
  const detail = ok
    ? "fixed by the options (no draw)"
    : `the options fix ${JSON.stringify(option)}, the log has ${JSON.stringify(recorded)}`;
  return { name, ok, detail };
}

const GAMES = {
  fox() {
    let dealer = null; // the last round's dealer
    return {
      async step(env, ctx) {
        const d = env.data;
        if (env.type === "game_started") {
          dealer = d.first_dealer;
          if (ctx.options.first_dealer != null) {
            return [fixed("first dealer", ctx.options.first_dealer, d.first_dealer)];
          }
          const value = await (await ctx.rng()).below(2);
          return [drawn("first dealer", `below(2) of ${ctx.label}`, value, d.first_dealer)];
        }
        if (env.type !== "round_dealt") return [];
        const name = `round ${d.round} deal`;
        const previous = dealer;
        dealer = d.dealer;
        if (d.round === 1 && ctx.options.deal != null) {
          const deal = ctx.options.deal;
          const hand = (cards) => cards.map(foxCardCode).sort((a, b) => a - b).map(foxCardJson);
          const want = { hands: deal.hands.map(hand), decree: deal.decree, deck: deal.deck };
          return [
            fixed(name, { dealer: previous, ...want }, {
              dealer: d.dealer,
              hands: d.hands,
              decree: d.decree,
              deck: d.deck,
            }),
          ];
        }
        // Round 1 is dealt by the first dealer; each later round by the other seat.
        const expectedDealer = d.round === 1 ? previous : 1 - previous;
        const { arrangement } = await foxArrangement(await ctx.rng());
        const want = foxDealData(d.round, expectedDealer, arrangement);
        if (same(want, d)) {
          const detail = `hands, decree card and deck recomputed from ${ctx.label}`;
          return [{ name, ok: true, detail }];
        }
        const wrong = ["round", "dealer", "hands", "decree", "deck"].filter((f) => !same(want[f], d[f]));
        const detail = `the ${wrong.join(", ")} differ from the deal ${ctx.label} gives`;
        return [{ name, ok: false, detail }];
      },
    };
  },

  skull() {
    let owned = null; // per seat [flowers, skulls] still owned
    let order = null; // the pending blind pick's recomputed order
    return {
      async step(env, ctx) {
        const d = env.data;
        switch (env.type) {
          case "game_set_up":
            owned = Array.from({ length: d.seats }, () => [d.flowers ?? 3, d.skulls ?? 1]);
            return [];
          case "round_started": {
            if (d.round !== 1) return [];
            if (ctx.options.first_player != null) {
              return [fixed("first player", ctx.options.first_player, d.starter)];
            }
            const value = await (await ctx.rng()).below(ctx.seats);
            return [drawn("first player", `below(${ctx.seats}) of ${ctx.label}`, value, d.starter)];
          }
          case "discs_shuffled": {
            const [flowers, skulls] = owned[d.seat];
            order = await skullShuffle(await ctx.rng(), flowers, skulls);
            const name = `seat ${d.seat}'s discs shuffled`;
            if (!Array.isArray(d.order)) {
              return [{ name, ok: false, detail: "the order is not in the log (a redacted copy?)" }];
            }
            const how = `shuffle of ${flowers} flower(s) then ${skulls} skull(s) from ${ctx.label}`;
            const got = { count: flowers + skulls, order };
            return [drawn(name, how, got, { count: d.count, order: d.order })];
          }
          case "disc_lost": {
            const out = [];
            if (d.index != null) {
              // A blind pick: the disc at the picked index of the order the seed gives.
              const want = order?.[d.index] ?? null;
              const how = `index ${d.index} of the shuffled discs`;
              out.push(drawn(`blind pick of seat ${d.seat}'s disc`, how, want, d.disc));
              order = null;
            }
            const slot = { flower: 0, skull: 1 }[d.disc];
            if (slot === undefined) {
              const detail = "the lost disc is not in the log (a redacted copy?)";
              out.push({ name: "disc lost", ok: false, detail });
            } else {
              owned[d.seat][slot] -= 1;
            }
            return out;
          }
          default:
            return [];
        }
      },
    };
  },

  skye() {
    let bag = null; // the tile ids in the bag, sorted
    let seats = 0;
    let start = 0;
    let advanced = false;
    return {
      async step(env, ctx) {
        const d = env.data;
        switch (env.type) {
          case "game_started": {
            seats = d.seats;
            advanced = Boolean(d.advanced_variant);
            bag = sortedBag(SKYE_LANDSCAPE_IDS);
            const out = [];
            if (ctx.options.scoring_tiles != null) {
              out.push(fixed("scoring tiles", ctx.options.scoring_tiles, d.scoring_tiles));
            } else {
              const tiles = (await (await ctx.rng()).shuffle(SKYE_SCORING_IDS)).slice(0, 4);
              const how = `the first 4 of shuffle(16 scoring tiles) of ${ctx.label}`;
              out.push(drawn("scoring tiles", how, tiles, d.scoring_tiles));
            }
            if (ctx.options.first_player != null) {
              out.push(fixed("first player", ctx.options.first_player, d.first_player));
            } else {
              const value = await (await ctx.rng()).below(seats);
              out.push(drawn("first player", `below(${seats}) of ${ctx.label}`, value, d.first_player));
            }
            return out;
          }
          case "round_started":
            start = d.start_player;
            return [];
          case "tiles_drawn": {
            const name = `round ${d.round} bag draw`;
            const size = bag.length;
            const got = await skyeDraw(await ctx.rng(), [...bag], seats, start, advanced);
            // Follow the log's own draw (not the recomputed one), so one forged draw is
            // reported once and the later rounds are still checked on their own.
            const taken = [...d.tiles.flat(), ...(d.extra != null ? [d.extra] : [])];
            const missing = taken.filter((t) => !bag.includes(t));
            for (const t of taken) if (bag.includes(t)) bag.splice(bag.indexOf(t), 1);
            if (missing.length) {
              return [{ name, ok: false, detail: `tiles ${missing.join(", ")} were not in the bag` }];
            }
            const how = `from a bag of ${size}, start seat ${start}, ${ctx.label}`;
            const recorded = { tiles: d.tiles, extra: d.extra ?? null };
            return [drawn(name, how, { tiles: got.tiles, extra: got.extra }, recorded)];
          }
          case "tiles_discarded":
            bag = sortedBag([...bag, ...d.tiles]);
            return [];
          case "tile_returned":
          case "extra_tile_returned":
            bag = sortedBag([...bag, d.tile]);
            return [];
          default:
            return [];
        }
      },
    };
  },
};

// The engines' first events: the step that has one is the setup (label "setup"), wherever it
// is (a game of contributed fairness is dealt by its last client seed's command).
const FIRST_ENGINE_EVENTS = new Set(["game_started", "game_set_up"]);
const SERVICE_EVENTS = new Set([
  "game_created",
  "seed_revealed",
  "seat_changed",
  "seat_resigned",
  "clock_set",
  "turn_timed_out",
  "entropy_contributed",
]);

/**
 * The bot moves of a log: commands with a bot's id (`bot-<seat>-<version>`), and the moves a
 * timeout bot made for a seat whose clock ran out (a `time_out` command's `move`).
 * @param {object[]} envelopes
 * @returns {number}
 */
export function countBotMoves(envelopes) {
  let n = 0;
  for (const env of envelopes) {
    const command = env.command;
    if (command == null) continue;
    if (String(env.command_id).startsWith("bot-")) n += 1;
    else if (command.type === "time_out" && command.move != null) n += 1;
  }
  return n;
}

/**
 * The versions at which a log's hash differs from the head hash a player was shown, or which
 * the log lacks (as `shared.audit.check_history`): `seen` maps a version to the `head_hash`
 * of the view shown at that version. An empty list: the log is the history the player saw, as
 * far as it saw it. (The log's own chain is verifyGame's to check.)
 * @param {object[]} envelopes
 * @param {Object<string, string>} seen version -> head_hash
 * @returns {number[]} ascending
 */
export function checkHistory(envelopes, seen) {
  const hashes = new Map(envelopes.map((e) => [Number(e.version), e.hash]));
  return Object.entries(seen)
    .map(([v, h]) => [Number(v), h])
    .filter(([v, h]) => Number.isInteger(v) && v > 0 && hashes.get(v) !== h)
    .map(([v]) => v)
    .sort((a, b) => a - b);
}

/**
 * Verifies an export (the envelopes, in order): the shape, the hash chain, the seed
 * commitment, and every recorded draw recomputed from the seed (Fox deals; Skull first player,
 * blind-pick shuffles and picks; Skye scoring tiles, first player and bag draws). Bot moves are
 * not re-checked here (that needs the Python bots: `tabletop audit` does it): a log with any
 * gets a `bot moves` check whose result says so, "unchecked", which is neither a pass nor a
 * failure.
 * @param {object[]} envelopes
 * @param {{seed?: string}} [options] seed: the server seed of a game still running
 * @returns {Promise<{ok: boolean, status: string, checks: {name: string, result: string,
 *   detail: string, version: number|null}[], firstFailure: object|null, unchecked: string[]}>}
 *   status "passed", "failed" or "incomplete" (nothing failed, some check waits for the seed);
 *   result per check "ok", "failed", "waits" or "unchecked"; firstFailure {check, version,
 *   reason} of the first failed check; unchecked: the checks this verifier cannot make
 */
export async function verifyGame(envelopes, options = {}) {
  const checks = [];
  const add = (name, result, detail, version = null) => checks.push({ name, result, detail, version });
  const done = () => {
    const failed = checks.find((c) => c.result === "failed") ?? null;
    const waits = checks.some((c) => c.result === "waits");
    return {
      ok: !failed && !waits,
      status: failed ? "failed" : waits ? "incomplete" : "passed",
      checks,
      firstFailure: failed && { check: failed.name, version: failed.version, reason: failed.detail },
      unchecked: checks.filter((c) => c.result === "unchecked").map((c) => c.name),
    };
  };

  const required = ["version", "type", "data", "command_id", "seat", "at", "prev_hash", "hash"];
  for (const [i, env] of envelopes.entries()) {
    const missing = required.filter((k) => !(k in (env ?? {})));
    if (missing.length) {
      add("envelopes", "failed", `line ${i + 1}: missing ${missing.join(", ")}`, env?.version ?? null);
      return done();
    }
  }
  if (!envelopes.length || envelopes[0].type !== "game_created") {
    add("envelopes", "failed", "the first event is not game_created", 1);
    return done();
  }
  if (!Array.isArray(envelopes[0].data?.seats) || typeof envelopes[0].data.seed_sha256 !== "string") {
    add("envelopes", "failed", "game_created has no seats or no seed_sha256", 1);
    return done();
  }
  add("envelopes", "ok", `${envelopes.length} envelopes, game ${envelopes[0].data.game}`);

  const revealed = revealedSeed(envelopes);
  const seed = revealed ?? options.seed ?? null;
  const chain = await verifyChain(envelopes, seed);
  if (!chain.ok) {
    add("hash chain", "failed", chain.reason, chain.version);
    return done();
  }
  if (seed === null) {
    const detail = `versions 1..${chain.last} contiguous and linked; the hashes wait for the seed`;
    add("hash chain", "waits", detail);
    add("seed commitment", "waits", "the seed is revealed when the game ends");
    add("draws", "waits", "the draws are recomputed once the seed is revealed");
    return done();
  }
  add("hash chain", "ok", `versions 1..${chain.last} contiguous, every hash recomputed with its salt`);
  if (!(await checkSeedCommitment(envelopes, seed))) {
    const at = revealed ? envelopes.length : 1;
    add("seed commitment", "failed", "sha256(seed) is not the seed_sha256 of game_created", at);
    return done();
  }
  const which = revealed ? "the revealed seed" : "the given seed";
  add("seed commitment", "ok", `sha256(${which}) equals the committed seed_sha256`);

  const created = envelopes[0].data;
  const factory = GAMES[created.game];
  if (!factory) {
    add("game", "failed", `no draw rules for game ${JSON.stringify(created.game)}`, 1);
    return done();
  }
  const game = factory();
  const seats = created.seats.length;
  const contributed = created.fairness === "contributed";
  const clientSeeds = Array(seats).fill(null);
  let draws = 0;
  let failedDraw = false;
  for (const group of groups(envelopes)) {
    const first = group[0];
    const setup = group.some((e) => FIRST_ENGINE_EVENTS.has(e.type));
    const label = setup ? "setup" : `v${first.version - 1}`;
    let rng = null;
    for (const env of group) {
      if (env.type === "entropy_contributed") clientSeeds[env.data.seat] = String(env.data.client_seed);
      if (SERVICE_EVENTS.has(env.type)) continue;
      const ctx = {
        label,
        seats,
        options: created.options ?? {},
        rng: async () => {
          rng ??= new Rng(await playSeed(seed, contributed ? clientSeeds : null), label);
          return rng;
        },
      };
      let found;
      try {
        found = await game.step(env, ctx);
      } catch (err) {
        found = [{ name: `${env.type}`, ok: false, detail: `cannot be recomputed: ${err.message}` }];
      }
      for (const c of found) {
        draws += 1;
        failedDraw ||= !c.ok;
        add(c.name, c.ok ? "ok" : "failed", `version ${env.version}: ${c.detail}`, env.version);
      }
    }
  }
  if (!failedDraw) add("draws", "ok", `${draws} recorded draws recomputed from the seed`);
  const bots = countBotMoves(envelopes);
  if (bots > 0) {
    const detail =
      `${bots} bot moves NOT re-checked: this verifier cannot run the bots; ` +
      "`tabletop audit` re-decides each from the seat's view and the seed (those of a bot " +
      "whose policy changed since the game, per game_created's bot_policies, it too leaves " +
      "not re-checked)";
    add("bot moves", "unchecked", detail);
  }
  return done();
}

/**
 * The envelopes of a JSONL export (one envelope per non-empty line).
 * @param {string} text
 * @returns {object[]}
 */
export function parseJsonl(text) {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}
