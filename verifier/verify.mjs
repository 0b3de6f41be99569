#!/usr/bin/env node
// The command line of the independent verifier (docs/fairness.md).
//
//   node verifier/verify.mjs game.jsonl            verify an export; exit 0 when every check passes
//   node verifier/verify.mjs --json game.jsonl     the same, the result as JSON on stdout
//   node verifier/verify.mjs --seed S game.jsonl   a game still running, with its server seed
//   node verifier/verify.mjs --vectors docs/fairness_vectors.json   recompute the test vectors
//
// Exit status: 0 all checks passed, 1 a check failed or waits (a game not finished), 2 usage.
// Bot moves are not re-checked here (a "NOT RE-CHECKED" line says so; `tabletop audit` does).

import { readFileSync } from "node:fs";
import process from "node:process";

import {
  BitStream,
  FOX_DEAL_CHOICES,
  Rng,
  SKYE_LANDSCAPE_IDS,
  SKYE_SCORING_IDS,
  botChoiceIndex,
  botLabel,
  canonicalJson,
  chainHash,
  eventSalt,
  foxArrangement,
  foxCardJson,
  foxDealData,
  hashedContent,
  hmacSha256,
  parseJsonl,
  playSeed,
  sha256Hex,
  skullShuffle,
  skyeDraw,
  toHex,
  turnNonce,
  verifyGame,
} from "./fairness.mjs";

const same = (a, b) => canonicalJson(a) === canonicalJson(b);

/**
 * Recomputes every vector of a fairness_vectors.json document.
 * @param {object} v the parsed document
 * @returns {Promise<{name: string, ok: boolean, detail: string}[]>}
 */
export async function checkVectors(v) {
  const out = [];
  const check = async (name, fn) => {
    try {
      const [ok, detail] = await fn();
      out.push({ name, ok, detail });
    } catch (err) {
      out.push({ name, ok: false, detail: `threw ${err.message}` });
    }
  };
  const seed = v.seed;

  await check("seed commitment", async () => {
    const got = await sha256Hex(seed);
    return [got === v.seed_sha256, `sha256(seed) = ${got}`];
  });
  for (const h of v.hmac) {
    await check(`hmac key of ${h.key.length} chars, msg ${h.msg}`, async () => {
      const got = toHex(await hmacSha256(h.key, h.msg));
      return [got === h.hex, got];
    });
  }
  for (const [label, blocks] of Object.entries(v.blocks)) {
    await check(`blocks of ${label}`, async () => {
      const rng = new Rng(seed, label);
      const got = [];
      for (let i = 0; i < blocks.length; i += 1) {
        got.push((await rng.block()).toString(16).padStart(64, "0"));
      }
      return [same(got, blocks), `${got.length} blocks`];
    });
  }
  await check("below sequence", async () => {
    const rng = new Rng(seed, v.below.label);
    const got = [];
    for (const d of v.below.draws) got.push((await rng.below(BigInt(d.n))).toString());
    const want = v.below.draws.map((d) => d.value);
    const ok = same(got, want) && rng.counter === v.below.blocks_used;
    return [ok, `${got.join(" ")} (${rng.counter} blocks)`];
  });
  await check("rejection sampling", async () => {
    const r = v.rejection;
    const rng = new Rng(seed, r.label);
    const value = (await rng.below(BigInt(r.n))).toString();
    const probe = new Rng(seed, r.label);
    const blocks = [];
    for (let i = 0; i < r.blocks_used; i += 1) blocks.push((await probe.block()).toString());
    const limit = ((1n << 256n) / BigInt(r.n)) * BigInt(r.n);
    return [
      value === r.value &&
        rng.counter === r.blocks_used &&
        same(blocks, r.blocks) &&
        limit.toString() === r.limit,
      `${rng.counter - 1} block(s) rejected, then ${value.slice(0, 12)}...`,
    ];
  });
  await check("choice", async () => {
    const rng = new Rng(seed, v.choice.label);
    const got = [];
    for (let i = 0; i < v.choice.picks.length; i += 1) got.push(await rng.choice(v.choice.items));
    return [same(got, v.choice.picks), got.join("")];
  });
  await check("shuffle of 33 card codes", async () => {
    const got = await new Rng(seed, v.shuffle.label).shuffle(v.shuffle.items);
    const ok = same(got, v.shuffle.shuffled) && same(got.map(foxCardJson), v.shuffle.shuffled_cards);
    return [ok, got.join(",")];
  });
  await check("fox deal choices", async () => [
    FOX_DEAL_CHOICES.toString() === v.fox.deal_choices,
    `33!/13! = ${FOX_DEAL_CHOICES}`,
  ]);
  await check("fox opening (first dealer, deal)", async () => {
    const o = v.fox.opening;
    const rng = new Rng(seed, o.label);
    const dealer = await rng.below(2);
    const { k, arrangement } = await foxArrangement(rng);
    const [started, dealt] = o.events;
    const ok =
      dealer === o.first_dealer &&
      k.toString() === o.k &&
      same(arrangement, o.arrangement) &&
      started.data.first_dealer === dealer &&
      same(foxDealData(1, dealer, arrangement), dealt.data);
    return [ok, `dealer ${dealer}, k ${k}`];
  });
  await check("fox later deal", async () => {
    const l = v.fox.later;
    const { k, arrangement } = await foxArrangement(new Rng(seed, l.label));
    const ok =
      k.toString() === l.k &&
      same(arrangement, l.arrangement) &&
      same(foxDealData(l.round, l.dealer, arrangement), l.event.data);
    return [ok, `${l.label}: k ${k}`];
  });
  await check("skull first player", async () => {
    const s = v.skull.setup;
    const starter = await new Rng(seed, s.label).below(s.seats);
    const recorded = s.events.find((e) => e.type === "round_started").data.starter;
    return [starter === recorded, `below(${s.seats}) = ${starter}`];
  });
  for (const s of v.skull.shuffles) {
    await check(`skull discs shuffled at ${s.label}`, async () => {
      const got = await skullShuffle(new Rng(seed, s.label), s.flowers, s.skulls);
      return [same(got, s.order), got.join(",")];
    });
  }
  await check("skye tile data", async () => [
    same(SKYE_LANDSCAPE_IDS, v.skye.landscape_ids) && same(SKYE_SCORING_IDS, v.skye.scoring_tile_ids),
    `${SKYE_LANDSCAPE_IDS.length} landscape tiles, ${SKYE_SCORING_IDS.length} scoring tiles`,
  ]);
  await check("skye setup (scoring tiles, first player, round 1 draws)", async () => {
    const s = v.skye.setup;
    const rng = new Rng(seed, s.label);
    const tiles = (await rng.shuffle(SKYE_SCORING_IDS)).slice(0, 4);
    const first = await rng.below(s.seats);
    const drawn = await skyeDraw(rng, [...v.skye.landscape_ids], s.seats, first, false);
    const ok =
      same(tiles, s.scoring_tiles) &&
      first === s.first_player &&
      same(drawn.tiles, s.tiles) &&
      drawn.extra === s.extra;
    const hands = drawn.tiles.map((t) => t.join(",")).join(" | ");
    return [ok, `${tiles.join(",")}; first ${first}; ${hands}`];
  });
  await check("bot bit stream", async () => {
    const b = v.bot;
    const stream = new BitStream(new Rng(seed, b.label));
    const got = [];
    for (const d of b.draws) got.push(await stream.below(d.n));
    const index = await botChoiceIndex(seed, 1, 7, 5);
    const ok =
      same(got, b.draws.map((d) => d.value)) &&
      index === b.choice_index_of_5 &&
      b.label === botLabel(1, 7);
    return [ok, got.join(" ")];
  });
  for (const t of v.turn_nonces ?? []) {
    await check(`turn nonce of ${t.turn_id}`, async () => {
      const got = await turnNonce(seed, t.turn_id);
      return [got === t.nonce, got];
    });
  }
  for (const s of v.salts) {
    await check(`salt of version ${s.version}`, async () => {
      const got = await eventSalt(seed, s.version);
      return [got === s.salt, got];
    });
  }
  for (const [i, c] of v.canonical_json.entries()) {
    await check(`canonical json ${i + 1}`, async () => {
      const got = canonicalJson(c.value);
      return [got === c.text, got];
    });
  }
  for (const e of v.envelopes) {
    await check(`envelope ${e.envelope.version} (${e.envelope.type})`, async () => {
      const salt = await eventSalt(seed, e.envelope.version);
      const text = canonicalJson(hashedContent(e.envelope, salt));
      const h = await chainHash(e.envelope.prev_hash, e.envelope, salt);
      return [salt === e.salt && text === e.hashed_text && h === e.envelope.hash, h];
    });
  }
  if (v.contributed) {
    await check("contributed play seed", async () => {
      const c = v.contributed;
      const got = await playSeed(c.server_seed, c.client_seeds);
      return [got === c.play_seed && "contributed:" + canonicalJson(c.client_seeds) === c.message, got];
    });
  }
  return out;
}

function usage() {
  process.stderr.write(
    "usage: node verifier/verify.mjs [--json] [--seed SEED] game.jsonl\n" +
      "       node verifier/verify.mjs --vectors docs/fairness_vectors.json\n",
  );
  return 2;
}

async function main(argv) {
  let json = false;
  let seed;
  let vectors = null;
  const files = [];
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i];
    if (a === "--json") json = true;
    else if (a === "--seed") seed = argv[++i];
    else if (a === "--vectors") vectors = argv[++i];
    else if (a === "-h" || a === "--help") return usage();
    else files.push(a);
  }
  if (vectors) {
    const results = await checkVectors(JSON.parse(readFileSync(vectors, "utf8")));
    for (const r of results) console.log(`${r.ok ? "ok    " : "FAILED"}  ${r.name}: ${r.detail}`);
    const failed = results.filter((r) => !r.ok).length;
    const n = results.length;
    console.log(failed ? `${failed} of ${n} vectors FAILED` : `all ${n} vectors recomputed`);
    return failed ? 1 : 0;
  }
  if (files.length !== 1) return usage();
  const text = readFileSync(files[0] === "-" ? 0 : files[0], "utf8");
  let envelopes;
  try {
    envelopes = parseJsonl(text);
  } catch (err) {
    console.log(`FAILED  envelopes: not JSON lines (${err.message})`);
    return 1;
  }
  const result = await verifyGame(envelopes, seed === undefined ? {} : { seed });
  if (json) {
    console.log(JSON.stringify(result, null, 2));
  } else {
    const mark = { ok: "ok    ", failed: "FAILED", waits: "waits ", unchecked: "NOT RE-CHECKED" };
    for (const c of result.checks) console.log(`${mark[c.result]}  ${c.name}: ${c.detail}`);
    const f = result.firstFailure;
    const skipped = result.unchecked.length ? ` (${result.unchecked.join(", ")} not re-checked)` : "";
    console.log(
      f
        ? `FAILED at version ${f.version}: ${f.check}: ${f.reason}`
        : `${result.status}: ${result.checks.length - result.unchecked.length} checks${skipped}`,
    );
  }
  return result.ok ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
