// The Five Hundred table in the browser: plain JavaScript over the server's HTTP API (docs/web.md).
// Everything shown comes from the view the server sends for this seat; the page keeps no game state
// of its own beyond the latest view.
"use strict";

const SUITS = "♠♣♦♥";
const SUIT_LETTERS = "SCDH";
const STRAINS = ["S", "C", "D", "H", "NT"];
const $ = (id) => document.getElementById(id);

const state = { info: null, view: null, gameId: null, seq: 0, shown: 0, polling: false };

// -- talking to the server -----------------------------------------------------------------------
async function api(method, path, body) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  const data = response.status === 204 ? null : await response.json();
  if (!response.ok) throw new Error(data && data.error ? data.error : `HTTP ${response.status}`);
  return data;
}

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = false;
  clearTimeout(showError.timer);
  showError.timer = setTimeout(() => { box.hidden = true; }, 6000);
}

// Views are shown in the order the poll loop receives them (each at least as new as the one
// before): a move's own answer could arrive after a newer view, so the page shows the poll's.
function accept(view, seq) {
  if (seq < state.shown) return;
  state.shown = seq;
  render(view);
}

async function request(method, path, body) {
  try {
    await api(method, path, body);
  } catch (e) {
    showError(e.message);
  }
}

async function poll() {
  if (state.polling) return;
  state.polling = true;
  while (state.gameId) {
    const id = state.gameId;
    const seq = ++state.seq;
    const after = state.view ? state.view.revision : "";
    try {
      const view = await api("GET", `/api/games/${id}?after=${after}&wait=20`);
      if (id === state.gameId) accept(view, seq);
    } catch (e) {
      showError(e.message);
      if (/no such game/.test(e.message)) { leave(); break; }
      await new Promise((r) => setTimeout(r, 1500));
    }
  }
  state.polling = false;
}

// -- setup ---------------------------------------------------------------------------------------
async function setup() {
  state.info = await api("GET", "/api/info");
  const presets = $("preset");
  for (const [name, p] of Object.entries(state.info.presets)) {
    presets.add(new Option(`${name} (${p.players} players${p.partners ? ", partners" : ""})`, name));
  }
  for (const name of state.info.agents) $("agent-names").append(new Option(name, name));
  $("pace").value = state.info.pace;
  presets.addEventListener("change", seatChoices);
  $("mode").addEventListener("change", seatChoices);
  $("seat").addEventListener("change", seatChoices);
  $("all-agents").addEventListener("input", () => {
    for (const input of document.querySelectorAll(".seat-agent")) input.value = $("all-agents").value;
  });
  seatChoices();
  $("setup-form").addEventListener("submit", (e) => { e.preventDefault(); start(); });
  $("record-file").addEventListener("change", replayFile);
  for (const id of ["new-game", "result-new"]) $(id).addEventListener("click", leave);
  $("play-button").addEventListener("click", () => control("play"));
  $("pause-button").addEventListener("click", () => control("pause"));
  $("step-button").addEventListener("click", () => control("step"));
  $("hint").addEventListener("click", hint);
  $("typed").addEventListener("keydown", (e) => {
    if (e.key === "Enter") { act($("typed").value.trim()); $("typed").value = ""; }
  });
  document.addEventListener("keydown", keys);
  const id = new URLSearchParams(location.hash.slice(1)).get("game");
  if (id) enter(id);  // a reload, or a server restart: the game resumes where it was
}

function seatChoices() {
  const p = state.info.presets[$("preset").value];
  const seat = $("seat");
  const chosen = Math.min(Number(seat.value) || 0, p.players - 1);
  seat.replaceChildren(...Array.from({ length: p.players }, (_, s) => new Option(`player_${s}`, s)));
  seat.value = chosen;
  const playing = $("mode").value === "play";
  $("seat-label").hidden = !playing;
  const box = $("seat-agents");
  const old = Array.from(box.querySelectorAll(".seat-agent"), (i) => i.value);
  box.replaceChildren();
  for (let s = 0; s < p.players; s++) {
    const label = document.createElement("label");
    const mine = playing && s === chosen;
    const side = p.partners ? ` (side ${p.side_of[s]})` : "";
    label.append(`player_${s}${side}${mine ? ": you" : ""}`);
    const input = document.createElement("input");
    input.className = "seat-agent";
    input.setAttribute("list", "agent-names");
    input.dataset.seat = s;
    input.value = old[s] || $("all-agents").value;
    input.disabled = mine;
    label.append(input);
    box.append(label);
  }
}

async function start() {
  const mode = $("mode").value;
  const body = {
    preset: $("preset").value, mode, length: $("length").value,
    seat: mode === "play" ? Number($("seat").value) : null,
    agents: Array.from(document.querySelectorAll(".seat-agent"), (i) => (i.disabled ? null : i.value.trim())),
    pace: Number($("pace").value),
  };
  try {
    const view = await api("POST", "/api/games", body);
    enter(view.id, view);
  } catch (e) {
    showError(e.message);
  }
}

async function replayFile() {
  const file = $("record-file").files[0];
  if (!file) return;
  let record;
  try {
    record = JSON.parse(await file.text());
  } catch (e) {
    showError(`${file.name} is not JSON: ${e.message}`);
    return;
  }
  try {
    const view = await api("POST", "/api/replays", { record, pace: Number($("pace").value) });
    enter(view.id, view);
  } catch (e) {
    showError(e.message);
  }
  $("record-file").value = "";
}

function enter(id, view) {
  state.gameId = id;
  state.view = null;
  location.hash = `game=${id}`;
  $("setup").hidden = true;
  $("table").hidden = false;
  $("status-bar").hidden = false;
  $("new-game").hidden = false;
  if (view) accept(view, ++state.seq);
  poll();
}

function leave() {
  state.gameId = null;
  state.view = null;
  history.replaceState(null, "", location.pathname);
  $("table").hidden = true;
  $("status-bar").hidden = true;
  $("watch-controls").hidden = true;
  $("download").hidden = true;
  $("new-game").hidden = true;
  $("setup").hidden = false;
}

// -- moves ---------------------------------------------------------------------------------------
function act(action) {
  if (!action || !state.gameId) return;
  $("hint-text").textContent = "";
  request("POST", `/api/games/${state.gameId}/action`, { action });
}

function control(command) {
  if (state.gameId) request("POST", `/api/games/${state.gameId}/control`, { command });
}

async function hint() {
  const v = state.view;
  if (!v || !v.legal.length) return;
  $("hint-text").textContent = "thinking…";
  try {
    const answer = await api("POST", `/api/games/${state.gameId}/hint`, { agent: $("hint-agent").value.trim() });
    $("hint-text").textContent = `${answer.agent} would play ${answer.action}`;
    const card = answer.action.split(":")[0];
    for (const el of document.querySelectorAll(`[data-action="${answer.action}"], #hand [data-card="${card}"]`)) {
      el.classList.add("hinted");
    }
  } catch (e) {
    $("hint-text").textContent = "";
    showError(e.message);
  }
}

function keys(e) {
  const v = state.view;
  if (!v || $("table").hidden || e.target.tagName === "INPUT") return;
  if (v.mode !== "play") {
    if (e.key === " ") { e.preventDefault(); control(v.paused ? "play" : "pause"); }
    if (e.key === "s") control("step");
    return;
  }
  if (e.key === "p" && v.legal.includes("PASS")) act("PASS");
  else if (e.key === "h") hint();
  else if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
    const cards = Array.from(document.querySelectorAll("#hand .card.legal"));
    if (!cards.length) return;
    const at = cards.indexOf(document.activeElement);
    const next = at < 0 ? 0 : (at + (e.key === "ArrowRight" ? 1 : cards.length - 1)) % cards.length;
    cards[next].focus();
    e.preventDefault();
  }
}

// -- drawing -------------------------------------------------------------------------------------
function cardElement(card, tag = "span") {
  const el = document.createElement(tag);
  el.className = "card";
  if (card.trump) el.classList.add("trump");
  if (card.suit === null) el.classList.add("joker");
  else if (card.suit >= 2) el.classList.add("red");
  el.dataset.card = card.name;
  el.dataset.trump = card.trump;
  const rank = document.createElement("span");
  rank.textContent = card.rank;
  el.append(rank);
  if (card.suit !== null) {
    const suit = document.createElement("span");
    suit.className = "suit";
    suit.textContent = SUITS[card.suit];
    el.append(suit);
  }
  el.title = card.trump ? `${card.name} (trump)` : card.name;
  return el;
}

function button(text, action, enabled = true) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  b.dataset.action = action;
  b.disabled = !enabled;
  b.addEventListener("click", () => act(action));
  return b;
}

function bidText(bid) {
  return bid.replace(/^(\d+)([SCDH])$/, (_, n, s) => n + SUITS[SUIT_LETTERS.indexOf(s)]).replace("OPEN_MISERE", "open misère")
    .replace("MISERE", "misère").replace("PASS", "pass");
}

function sideLabel(v, side) {
  const seats = v.seats.filter((s) => s.side === side);
  if (seats.some((s) => s.you)) return seats.length > 2 ? "your team" : seats.length > 1 ? "you & partner" : "you";
  return seats.map((s) => s.name).join(" & ");
}

// A card's name as printed: Eh is the 11 of hearts, Ws the 12 of spades, Xd the 13 of diamonds (§10.1).
const RANK_TEXT = { T: "10", E: "11", W: "12", X: "13" };
function cardText(name) {
  if (name.startsWith("JK")) return name;
  const rank = name.slice(0, -1);
  return (RANK_TEXT[rank] || rank) + SUITS[SUIT_LETTERS.indexOf(name.slice(-1).toUpperCase())];
}

// The five-handed call as this seat knows it: the card or the seat named, the partner once known.
function callText(v, c) {
  let text = c.called ? `, called ${cardText(c.called.name)}` : "";
  if (c.partner !== null) text += `, partner ${v.seats[c.partner].name}${v.seats[c.partner].you ? " (you)" : ""}`;
  else if (c.alone) text += " (a discard: you play alone)";
  return text;
}

function render(v) {
  state.view = v;
  document.body.dataset.revision = v.revision;
  document.body.dataset.phase = v.phase;
  $("game-title").textContent = `${v.preset} · ${v.mode} · ${v.length === "deal" ? "one deal" : `game to ${v.target}`} · deal ${v.deal_number}`;
  $("scores").textContent = "scores: " + v.scores.map((score, side) => `${sideLabel(v, side)} ${score}`).join(", ");
  $("scores").dataset.scores = JSON.stringify(v.scores);
  const c = v.contract;
  let contract = "auction";
  if (c) {
    contract = `contract ${bidText(c.bid)} by ${v.seats[c.contractor].name}`;
    if (c.nominated >= 0) contract += `, joker nominated ${SUITS[c.nominated]}`;
    contract += callText(v, c);
    if (c.sitting_out.length) contract += `, ${c.sitting_out.map((s) => v.seats[s].name).join(" and ")} sit${c.sitting_out.length > 1 ? "" : "s"} out`;
  }
  $("contract-line").textContent = contract;
  renderSeats(v);
  renderTrick(v);
  renderHand(v);
  renderActions(v);
  renderSide(v);
  const finished = v.over || v.stopped;
  $("watch-controls").hidden = v.mode === "play";
  $("play-button").disabled = !v.paused || finished;
  $("pause-button").disabled = v.paused || finished;
  $("step-button").disabled = finished;
  $("replay-progress").textContent = v.mode === "replay" ? `move ${v.replayed} of ${v.script}` : "";
  const download = $("download");
  download.hidden = v.mode === "play" && !finished;
  download.href = `/api/games/${v.id}/record`;
  $("result").hidden = !finished;
  if (finished) {
    const winners = v.seats.filter((s) => v.winners.includes(s.side)).map((s) => s.name + (s.you ? " (you)" : ""));
    $("result-text").textContent = v.over ? `Game over. Winners: ${winners.join(", ")}. Scores: ${$("scores").textContent.slice(8)}`
      : `The ${v.length === "deal" ? "deal" : "game"} is over. ${v.previous ? v.previous.text : ""}`;
  }
  if (v.error) showError(v.error);
}

function seatPosition(v, seat) {
  const n = v.seats.length;
  const me = v.seat === null ? 0 : v.seat;
  const r = (seat - me + n) % n;
  const angle = Math.PI / 2 + (r * 2 * Math.PI) / n;  // the viewer at the bottom, the others clockwise
  return [Math.cos(angle), Math.sin(angle)];
}

function renderSeats(v) {
  const box = $("seats");
  box.replaceChildren();
  for (const s of v.seats) {
    const [x, y] = seatPosition(v, s.seat);
    const el = document.createElement("div");
    el.className = "seat";
    el.id = `seat-${s.seat}`;
    if (s.to_act) el.classList.add("to-act");
    el.style.left = `${50 + 40 * x}%`;
    el.style.top = `${50 + 40 * y}%`;
    const name = document.createElement("div");
    name.className = "name";
    name.textContent = s.name + (s.you ? " (you)" : s.partner ? " (partner)" : "") + (s.agent ? ` · ${s.agent}` : "");
    el.append(name);
    const chips = document.createElement("div");
    chips.className = "chips";
    const bids = v.auction.filter((b) => b.seat === s.seat);
    const notes = [];
    if (s.dealer) notes.push("dealer");
    if (bids.length) notes.push(`bid ${bidText(bids[bids.length - 1].bid)}`);
    if (s.contractor) notes.push("contractor");
    if (s.called_partner) notes.push("called partner");
    if (s.sits_out) notes.push("sits out");
    notes.push(`tricks ${s.tricks}`);
    for (const note of notes) {
      const chip = document.createElement("span");
      chip.textContent = note;
      chips.append(chip);
    }
    el.append(chips);
    const cards = document.createElement("div");
    cards.className = "cards";
    const exposed = v.exposed && v.exposed.seat === s.seat ? v.exposed.cards : null;
    if (!s.you && (s.hand || exposed)) {
      for (const card of s.hand || exposed) cards.append(cardElement(card));
    } else if (!s.you) {
      for (let i = 0; i < s.held; i++) {
        const back = document.createElement("span");
        back.className = "back";
        cards.append(back);
      }
    }
    el.append(cards);
    box.append(el);
  }
}

function renderTrick(v) {
  const box = $("trick");
  box.replaceChildren();
  let cards = v.trick;
  let last = null;
  if (!cards.length) {
    last = v.tricks.length ? v.tricks[v.tricks.length - 1] : v.previous && v.previous.last_trick;
    cards = last ? last.cards : [];
  }
  box.classList.toggle("last", !!last);
  for (const play of cards) {
    const [x, y] = seatPosition(v, play.seat);
    const el = cardElement(play.card);
    el.style.left = `${50 + 17 * x}%`;
    el.style.top = `${50 + 22 * y}%`;
    if (last && play.seat === last.winner) el.classList.add("winner");
    box.append(el);
  }
  // The suit led, named by the joker when a suitless joker leads.
  $("led").textContent = v.trick.length && v.led_suit !== null ? `${SUITS[v.led_suit]} led` : "";
  const finished = v.tricks.length ? v.tricks[v.tricks.length - 1] : v.previous && v.previous.last_trick;
  $("trick-result").textContent = finished ? finished.text : "";
}

function renderHand(v) {
  const box = $("hand");
  box.replaceChildren();
  const me = v.seat === null ? null : v.seats[v.seat];
  $("you").hidden = !me;
  if (!me) return;
  const kitty = new Set(v.phase === "discard" ? v.kitty.map((c) => c.name) : []);
  for (const card of me.hand) {
    const el = cardElement(card, "button");
    el.type = "button";
    const leads = v.legal.filter((a) => a.startsWith(card.name + ":"));
    const playable = v.legal.includes(card.name) || leads.length > 0;
    el.disabled = !playable;
    if (playable) el.classList.add("legal");
    if (kitty.has(card.name)) el.classList.add("from-kitty");
    el.addEventListener("click", () => (leads.length ? chooseJokerSuit(card.name, leads) : act(card.name)));
    box.append(el);
  }
  $("joker-suits").hidden = true;
}

function chooseJokerSuit(joker, leads) {
  const box = $("joker-suits");
  box.replaceChildren(`Lead ${joker} naming the suit to follow: `);
  for (const action of leads) box.append(button(SUITS[SUIT_LETTERS.indexOf(action.slice(-1))], action));
  box.hidden = false;
  box.querySelector("button").focus();
}

function renderActions(v) {
  const bids = $("bids");
  const specials = $("specials");
  const calls = $("calls");
  bids.replaceChildren();
  specials.replaceChildren();
  calls.replaceChildren();
  const mine = v.mode === "play" && v.legal.length > 0;
  let prompt = "";
  if (v.mode === "play" && !mine && v.to_act !== null) prompt = `${v.seats[v.to_act].name} is thinking…`;
  if (mine && v.phase === "bidding") {
    prompt = "Your bid";
    for (let tricks = 6; tricks <= 10; tricks++) {
      for (const strain of STRAINS) {
        const bid = `${tricks}${strain}`;
        bids.append(button(bidText(bid), bid, v.legal.includes(bid)));
      }
    }
    for (const bid of ["PASS", "MISERE", "OPEN_MISERE"]) specials.append(button(bidText(bid), bid, v.legal.includes(bid)));
  } else if (mine && v.phase === "discard") {
    prompt = `You took the kitty: discard ${v.kitty.length - v.discards.length} more card(s)`;
  } else if (mine && v.phase === "call") {
    renderCall(v, calls);
    prompt = v.legal[0].startsWith("PARTNER_") ? "Call a partner: name a seat"
      : "Call a partner: name a card you do not hold (whoever holds it plays with you; a discard of yours means alone)";
  } else if (mine && v.phase === "nominate") {
    prompt = "Nominate a suit for the joker, or not";
    for (const action of v.legal) {
      specials.append(button(action === "NO_NOMINATION" ? "no nomination" : `nominate ${SUITS[SUIT_LETTERS.indexOf(action.slice(-1))]}`, action));
    }
  } else if (mine) {
    prompt = v.trick.length ? "Your card" : "Your lead";
  }
  if (v.over) prompt = "Game over";
  $("prompt").textContent = prompt;
  $("hint").disabled = !mine;
}

// The call's choices come from the legal moves, as the bids do: a row of cards per suit, or the seats.
function renderCall(v, box) {
  const rows = new Map();
  for (const action of v.legal) {
    const seat = action.startsWith("PARTNER_") ? Number(action.slice(8)) : null;
    const key = seat === null ? action.slice(-1).toUpperCase() : "seats";
    if (!rows.has(key)) rows.set(key, document.createElement("div"));
    const b = button(seat === null ? cardText(action) : v.seats[seat].name, action);
    if (seat === null && "dh".includes(action.slice(-1))) b.classList.add("red");
    rows.get(key).append(b);
  }
  box.append(...rows.values());
}

function renderSide(v) {
  $("previous").textContent = v.previous ? `Last deal: ${v.previous.text}` : "";
  const kitty = $("kitty-box");
  kitty.replaceChildren();
  for (const [label, cards] of [[v.seat === null ? "Kitty" : "The kitty you took", v.kitty], ["Discards", v.discards]]) {
    if (!cards.length) continue;
    const line = document.createElement("div");
    line.append(`${label}: `, ...cards.map((c) => cardElement(c)));
    kitty.append(line);
  }
  $("auction").textContent = v.auction.map((b) => `${v.seats[b.seat].name} ${bidText(b.bid)}`).join(" · ") || "—";
  const log = $("log");
  log.replaceChildren(...v.log.map((line) => {
    const li = document.createElement("li");
    li.textContent = line;
    return li;
  }));
  log.scrollTop = log.scrollHeight;
}

setup().catch((e) => showError(e.message));
