// The Five Hundred table in the browser: plain JavaScript over the server's HTTP API (docs/web.md).
// Everything shown comes from the view the server sends for this seat; the page keeps no game state
// of its own beyond the latest view. The address says where the page is: the form (/), or a table
// (?game=ID, with &token=T for a person's seat): reload, Back and Forward follow it.
"use strict";

const SUITS = "♠♣♦♥";
const SUIT_LETTERS = "SCDH";
const STRAINS = ["S", "C", "D", "H", "NT"];
const RANK_ORDER = "23456789TEWXJQKA";  // low to high; E, W, X are 11, 12, 13 (§10.1)
const PERSON = "human";
const $ = (id) => document.getElementById(id);

const state = {
  info: null, view: null, gameId: null, token: null,
  game: 0,          // counts the tables entered: a poll of an earlier one is dropped, never waited for
  poll: null,       // the AbortController of the poll in flight
  seq: 0, shown: 0, // views are shown in the order their requests were sent
  sending: false,   // a move is on its way: no second one (a double-click) until it is answered
  give: {},         // the agent the creator picked for each empty seat
};

// -- talking to the server -----------------------------------------------------------------------
class ApiError extends Error {
  constructor(message, status) { super(message); this.status = status; }
}

async function api(method, path, body, signal) {
  const options = { method, headers: {}, signal };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  const data = response.status === 204 ? null : await response.json();
  if (!response.ok) throw new ApiError(data && data.error ? data.error : `HTTP ${response.status}`, response.status);
  return data;
}

// A path of this seat's game: every request for a seat carries its token.
function seatPath(suffix = "", query = "") {
  const params = new URLSearchParams(query);
  if (state.token) params.set("token", state.token);
  const text = params.toString();
  return `/api/games/${encodeURIComponent(state.gameId)}${suffix}${text ? "?" + text : ""}`;
}

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = false;
  clearTimeout(showError.timer);
  showError.timer = setTimeout(() => { box.hidden = true; }, 6000);
}

function accept(view, seq) {
  if (seq < state.shown || view.id !== state.gameId) return;
  state.shown = seq;
  render(view);
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The long poll of one table: it ends when the page leaves that table (its request aborted at once).
async function poll(game) {
  while (game === state.game) {
    const controller = new AbortController();
    state.poll = controller;
    const seq = ++state.seq;
    const query = { wait: "20" };
    if (state.view) query.after = state.view.revision;
    try {
      accept(await api("GET", seatPath("", query), undefined, controller.signal), seq);
    } catch (e) {
      if (game !== state.game) return;
      if (e.status === 403 || e.status === 404) {  // the game ended or expired, or the link is not a seat's
        leave(true);
        showError(e.message);
        return;
      }
      if (e.status) {  // a request the server refuses will be refused again: say so, once
        showError(e.message);
        return;
      }
      showError("the server does not answer: trying again");
      await pause(1500);
    }
  }
}

function stopPolling() {
  state.game += 1;
  if (state.poll) state.poll.abort();
  state.poll = null;
}

// -- setup ---------------------------------------------------------------------------------------
async function setup() {
  state.info = await api("GET", "/api/info");
  const presets = $("preset");
  for (const [name, p] of Object.entries(state.info.presets)) {
    presets.add(new Option(`${name} (${p.players} players${p.partners ? ", partners" : ""})`, name));
  }
  $("pace").value = state.info.pace;
  presets.addEventListener("change", seatChoices);
  $("mode").addEventListener("change", seatChoices);
  $("seat").addEventListener("change", seatChoices);
  $("all-agents").addEventListener("change", () => {
    for (const select of document.querySelectorAll(".seat-choice")) {
      if (select.value !== PERSON) select.value = $("all-agents").value;
      worldsShown(select);
    }
  });
  seatChoices();
  $("setup-form").addEventListener("submit", (e) => { e.preventDefault(); start(); });
  $("record-file").addEventListener("change", replayFile);
  for (const id of ["new-game", "result-new"]) $(id).addEventListener("click", () => leave(true));
  $("play-button").addEventListener("click", () => control("play"));
  $("pause-button").addEventListener("click", () => control("pause"));
  $("step-button").addEventListener("click", () => control("step"));
  $("hint").addEventListener("click", hint);
  $("name-form").addEventListener("submit", (e) => { e.preventDefault(); giveName(); });
  $("typed").addEventListener("keydown", (e) => {
    if (e.key === "Enter") { act($("typed").value.trim()); $("typed").value = ""; }
  });
  document.addEventListener("keydown", keys);
  window.addEventListener("popstate", follow);
  const old = new URLSearchParams(location.hash.slice(1)).get("game");  // a link of the page's first versions
  if (old && !location.search) history.replaceState(null, "", `?game=${encodeURIComponent(old)}`);
  follow();
}

// The agents of the menu that can play a preset, as options of a <select>.
function agentOptions(preset, withPerson) {
  const options = withPerson ? [new Option("a person", PERSON)] : [];
  for (const agent of state.info.agents) {
    if (agent.presets.includes(preset)) options.push(new Option(`${agent.name} — ${agent.description}`, agent.name));
  }
  return options;
}

function worldsShown(select) {
  const worlds = select.parentElement.querySelector(".worlds");
  if (worlds) worlds.hidden = select.value !== "pimc";
}

function seatChoices() {
  const preset = $("preset").value;
  const p = state.info.presets[preset];
  const playing = $("mode").value === "play";
  const seat = $("seat");
  const chosen = Math.min(Number(seat.value) || 0, p.players - 1);
  const old = Array.from(document.querySelectorAll(".seat-choice"), (s) => (s.disabled ? null : s.value));  // not "you" again
  const every = $("all-agents");
  const everyValue = every.value;
  every.replaceChildren(...agentOptions(preset, false));
  if (Array.from(every.options).some((o) => o.value === everyValue)) every.value = everyValue;
  const box = $("seat-choices");
  box.replaceChildren();
  for (let s = 0; s < p.players; s++) {
    const label = document.createElement("label");
    const side = p.partners ? ` (side ${p.side_of[s]})` : "";
    label.append(`player_${s}${side}${playing && s === chosen ? ": you" : ""}`);
    const select = document.createElement("select");
    select.className = "seat-choice";
    select.dataset.seat = s;
    select.replaceChildren(...agentOptions(preset, playing));
    const wanted = playing && s === chosen ? PERSON : old[s];
    select.value = Array.from(select.options).some((o) => o.value === wanted) ? wanted : every.value;
    select.disabled = playing && s === chosen;
    const worlds = document.createElement("input");
    const bounds = state.info.agents.find((a) => a.name === "pimc").options.find((o) => o.name === "worlds");
    Object.assign(worlds, { type: "number", min: bounds.min, max: bounds.max, value: 80, title: "worlds per card played" });
    worlds.className = "worlds";
    select.addEventListener("change", () => { worldsShown(select); });
    label.append(select, worlds);
    box.append(label);
    worldsShown(select);
  }
  seat.replaceChildren(...Array.from({ length: p.players }, (_, s) => new Option(`player_${s}`, s)));
  seat.value = chosen;
  $("seat-label").hidden = !playing;
}

function seatSpec(select) {
  if (select.value !== "pimc") return select.value;
  return `pimc:worlds=${select.parentElement.querySelector(".worlds").value}`;
}

async function start() {
  const mode = $("mode").value;
  const body = {
    preset: $("preset").value, mode, length: $("length").value,
    seats: Array.from(document.querySelectorAll(".seat-choice"), seatSpec),
    pace: Number($("pace").value),
  };
  if (mode === "play") body.seat = Number($("seat").value);
  try {
    const view = await api("POST", "/api/games", body);
    const people = view.seats.filter((s) => s.person).map((s) => s.seat);
    const links = Object.fromEntries(view.seat_links.map((link, i) => [people[i], link]));
    if (view.seat !== null) localStorage.setItem(`five-hundred-links-${view.id}`, JSON.stringify(links));
    const own = view.seat === null ? null : new URLSearchParams(links[view.seat].split("?")[1]).get("token");
    enter(view.id, own, view, true);
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
    enter(view.id, null, view, true);
  } catch (e) {
    showError(e.message);
  }
  $("record-file").value = "";
}

// The page follows its address: a table's, or the form.
function follow() {
  const query = new URLSearchParams(location.search);
  const id = query.get("game");
  if (!id) {
    if (state.gameId || $("setup").hidden) leave(false);
  } else if (id !== state.gameId || query.get("token") !== state.token) {
    enter(id, query.get("token"), null, false);
  }
}

function enter(id, token, view, push) {
  stopPolling();
  Object.assign(state, { gameId: id, token, view: null, sending: false, give: {} });
  if (push) {
    const params = new URLSearchParams({ game: id });
    if (token) params.set("token", token);
    history.pushState(null, "", `?${params}`);
  }
  $("setup").hidden = true;
  $("table").hidden = false;
  $("status-bar").hidden = false;
  $("new-game").hidden = false;
  for (const id of ["hand", "seats", "trick", "bids", "specials", "calls", "log", "links"]) $(id).replaceChildren();
  for (const id of ["prompt", "trick-result", "previous", "auction", "hint-text", "contract-line", "scores", "game-title"]) {
    $(id).textContent = "";
  }
  $("result").hidden = true;
  $("people").hidden = true;
  if (view) accept(view, ++state.seq);
  poll(state.game);
}

function leave(push) {
  stopPolling();
  Object.assign(state, { gameId: null, token: null, view: null, sending: false });
  if (push) history.pushState(null, "", location.pathname);
  for (const id of ["table", "status-bar", "watch-controls", "download", "new-game"]) $(id).hidden = true;
  $("setup").hidden = false;
}

// -- moves ---------------------------------------------------------------------------------------
async function act(action) {
  if (!action || !state.gameId || state.sending) return;
  state.sending = true;
  document.body.dataset.sending = "true";
  $("hint-text").textContent = "";
  const seq = ++state.seq;
  try {
    accept(await api("POST", seatPath("/action"), { action }), seq);
  } catch (e) {
    showError(e.message);
  } finally {
    state.sending = false;
    delete document.body.dataset.sending;
  }
}

async function request(method, path, body) {
  const seq = ++state.seq;
  try {
    const view = await api(method, path, body);
    if (view) accept(view, seq);
  } catch (e) {
    showError(e.message);
  }
}

function control(command) {
  if (state.gameId) request("POST", seatPath("/control"), { command });
}

function giveName() {
  if (state.gameId) request("POST", seatPath("/name"), { name: $("name").value.trim() });
}

function giveSeat(seat, agent) {
  request("POST", seatPath("/seat"), { seat, agent });
}

async function hint() {
  const v = state.view;
  if (!v || !v.legal.length) return;
  $("hint-text").textContent = "thinking…";
  try {
    const answer = await api("POST", seatPath("/hint"), { agent: $("hint-agent").value });
    $("hint-text").textContent = `${answer.agent} would play ${moveText(answer.action)}`;
    $("hint-text").dataset.action = answer.action;
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
  if (!v || $("table").hidden || e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
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

// -- words -----------------------------------------------------------------------------------------
// A card's name as printed: Eh is the 11 of hearts, Ws the 12 of spades, Xd the 13 of diamonds (§10.1).
const RANK_TEXT = { T: "10", E: "11", W: "12", X: "13" };
function cardText(name) {
  if (name.startsWith("JK")) return name === "JK" ? "joker" : `joker ${name.slice(-1)}`;
  const rank = name.slice(0, -1);
  return (RANK_TEXT[rank] || rank) + SUITS[SUIT_LETTERS.indexOf(name.slice(-1).toUpperCase())];
}

function bidText(bid) {
  return bid.replace(/^(\d+)([SCDH])$/, (_, n, s) => n + SUITS[SUIT_LETTERS.indexOf(s)]).replace("OPEN_MISERE", "open misère")
    .replace("MISERE", "misère").replace("PASS", "pass");
}

// Any move of the §1 notation in words: a bid, a card, a joker lead, a nomination, a call.
function moveText(action) {
  if (/^(\d+)(S|C|D|H|NT)$|^(PASS|MISERE|OPEN_MISERE)$/.test(action)) return bidText(action);
  if (action.startsWith("NOMINATE_")) return `nominate ${SUITS[SUIT_LETTERS.indexOf(action.slice(-1))]}`;
  if (action === "NO_NOMINATION") return "no nomination";
  if (action.startsWith("PARTNER_")) return `player_${action.slice(8)}`;
  const [card, led] = action.split(":");
  return led ? `${cardText(card)} leading ${SUITS[SUIT_LETTERS.indexOf(led)]}` : cardText(card);
}

function sideLabel(v, side) {
  const seats = v.seats.filter((s) => s.side === side);
  if (seats.some((s) => s.you)) return seats.length > 2 ? "your team" : seats.length > 1 ? "you & partner" : "you";
  return seats.map((s) => s.name).join(" & ");
}

function seatName(v, seat) {
  const s = v.seats[seat];
  return s.name + (s.you ? " (you)" : "");
}

// The five-handed call as this seat knows it: the card or the seat named, the partner once known.
function callText(v, c) {
  let text = c.called ? `, called ${cardText(c.called.name)}` : "";
  if (c.partner !== null) text += `, partner ${seatName(v, c.partner)}`;
  else if (c.alone) text += " (a discard: you play alone)";
  return text;
}

// A finished deal in a sentence: who bid what, made or not, each side's points.
function resultText(v, r) {
  const points = r.change.map((change, side) => `${sideLabel(v, side)} ${change > 0 ? "+" : ""}${change}`).join(", ");
  if (r.thrown_in) return `Everyone passed: the deal is thrown in (${points}).`;
  const partner = r.partner !== null ? ` with ${seatName(v, r.partner)} as partner` : r.alone ? " alone" : "";
  const made = r.made ? "made it" : "went down";
  const tricks = r.tricks.map((t, side) => `${sideLabel(v, side)} ${t}`).join(", ");
  return `${seatName(v, r.contractor)} bid ${r.contract}${partner} and ${made} (tricks: ${tricks}). Points: ${points}.`;
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
  rank.className = "rank";
  rank.textContent = card.rank;
  el.append(rank);
  if (card.suit !== null) {
    const suit = document.createElement("span");
    suit.className = "suit";
    suit.textContent = SUITS[card.suit];
    el.append(suit);
  }
  el.title = card.trump ? `${cardText(card.name)} (trump)` : cardText(card.name);
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

function render(v) {
  state.view = v;
  document.body.dataset.revision = v.revision;
  document.body.dataset.phase = v.phase;
  document.body.dataset.mode = v.mode;
  $("game-title").textContent = `${v.preset} · ${v.mode} · ${v.length === "deal" ? "one deal" : `game to ${v.target}`} · deal ${v.deal_number}`;
  $("scores").textContent = "scores: " + v.scores.map((score, side) => `${sideLabel(v, side)} ${score}`).join(", ");
  $("scores").dataset.scores = JSON.stringify(v.scores);
  const c = v.contract;
  let contract = "auction";
  if (c) {
    contract = `contract ${bidText(c.bid)} by ${seatName(v, c.contractor)}`;
    if (c.nominated >= 0) contract += `, joker nominated ${SUITS[c.nominated]}`;
    contract += callText(v, c);
    if (c.sitting_out.length) contract += `, ${c.sitting_out.map((s) => v.seats[s].name).join(" and ")} sit${c.sitting_out.length > 1 ? "" : "s"} out`;
  }
  $("contract-line").textContent = contract;
  renderSeats(v);
  renderTrick(v);
  renderHand(v);
  renderActions(v);
  renderPeople(v);
  renderSide(v);
  const finished = v.over || v.stopped;
  $("watch-controls").hidden = v.mode === "play";
  $("play-button").disabled = !v.paused || finished;
  $("pause-button").disabled = v.paused || finished;
  $("step-button").disabled = finished;
  $("replay-progress").textContent = v.mode === "replay" ? `move ${v.replayed} of ${v.script}` : "";
  const download = $("download");
  download.hidden = v.mode === "play" && !finished;
  download.href = seatPath("/record");
  $("result").hidden = !finished;
  if (finished) {
    const winners = v.seats.filter((s) => v.winners.includes(s.side)).map((s) => seatName(v, s.seat));
    const last = v.previous ? resultText(v, v.previous.result) : "";
    $("result-text").textContent = v.over ? `Game over. Winners: ${winners.join(", ")}. ${last} Final ${$("scores").textContent}.`
      : `The ${v.length === "deal" ? "deal" : "game"} is over. ${last}`;
  }
  if (v.error) showError(v.error);
}

// Where a seat sits, as a fraction of the felt from its centre: the viewer at the bottom, the others clockwise.
function seatPosition(v, seat) {
  const n = v.seats.length;
  const me = v.seat === null ? 0 : v.seat;
  const r = (seat - me + n) % n;
  const angle = Math.PI / 2 + (r * 2 * Math.PI) / n;
  return [Math.cos(angle), Math.sin(angle)];
}

function chip(text, kind) {
  const el = document.createElement("span");
  el.textContent = text;
  if (kind) el.className = kind;
  return el;
}

function renderSeats(v) {
  const box = $("seats");
  box.replaceChildren();
  const felt = $("felt").getBoundingClientRect();
  for (const s of v.seats) {
    const el = document.createElement("div");
    el.className = "seat";
    el.id = `seat-${s.seat}`;
    if (s.to_act) el.classList.add("to-act");
    const relation = v.seat === null || s.you ? null : s.partner ? "partner" : "opponent";
    if (relation) el.classList.add(relation);
    const name = document.createElement("div");
    name.className = "name";
    name.textContent = s.name + (s.you ? " (you)" : "") + (s.agent ? ` · ${s.agent}` : s.you ? "" : " · a person");
    el.append(name);
    const chips = document.createElement("div");
    chips.className = "chips";
    if (relation) chips.append(chip(relation, relation));
    if (s.person && !s.you) chips.append(chip(s.presence === "here" ? "at the table" : s.presence, s.presence));
    const bids = v.auction.filter((b) => b.seat === s.seat);
    if (s.dealer) chips.append(chip("dealer"));
    if (bids.length) chips.append(chip(`bid ${bidText(bids[bids.length - 1].bid)}`));
    if (s.contractor) chips.append(chip("contractor"));
    if (s.called_partner) chips.append(chip("called partner"));
    if (s.sits_out) chips.append(chip("sits out"));
    chips.append(chip(`tricks ${s.tricks}`));
    el.append(chips);
    if (v.creator && s.person && s.presence !== "here") el.append(giveControl(v, s.seat));
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
    place(el, seatPosition(v, s.seat), felt);
  }
}

// A seat's box on the felt, as far out as its size lets it stay whole inside the felt.
function place(el, [x, y], felt) {
  const margin = 6;
  const halfW = el.offsetWidth / 2 + margin;
  const halfH = el.offsetHeight / 2 + margin;
  const left = Math.min(Math.max(felt.width / 2 + x * (felt.width / 2 - halfW), halfW), felt.width - halfW);
  const top = Math.min(Math.max(felt.height / 2 + y * (felt.height / 2 - halfH), halfH), felt.height - halfH);
  el.style.left = `${left}px`;
  el.style.top = `${top}px`;
}

// The creator's choice for an empty seat: an agent plays it from now on.
function giveControl(v, seat) {
  const box = document.createElement("div");
  box.className = "give";
  const select = document.createElement("select");
  select.replaceChildren(...agentOptions(v.preset, false));
  if (state.give[seat]) select.value = state.give[seat];  // kept across the views that redraw the seat
  select.addEventListener("change", () => { state.give[seat] = select.value; });
  const go = document.createElement("button");
  go.type = "button";
  go.textContent = "give to agent";
  go.addEventListener("click", () => giveSeat(seat, select.value));
  box.append(select, go);
  return box;
}

function renderTrick(v) {
  const box = $("trick");
  box.replaceChildren();
  let cards = v.trick;
  let last = null;
  if (!cards.length) {
    // The last trick of the deal stays until the next auction begins.
    const previous = v.phase === "bidding" && !v.auction.length && v.previous ? v.previous.last_trick : null;
    last = v.tricks.length ? v.tricks[v.tricks.length - 1] : previous;
    cards = last ? last.cards : [];
  }
  box.classList.toggle("last", !!last);
  for (const play of cards) {
    const [x, y] = seatPosition(v, play.seat);
    const el = cardElement(play.card);
    el.style.left = `${50 + 14 * x}%`;
    el.style.top = `${50 + 17 * y}%`;
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
  box.replaceChildren(`Lead ${cardText(joker)} naming the suit to follow: `);
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
  if (v.mode === "play" && !mine && v.to_act !== null) {
    const s = v.seats[v.to_act];
    prompt = s.person && s.presence !== "here" ? `waiting for ${s.name} (${s.presence})…` : `${s.name} is thinking…`;
  }
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
  const hints = $("hint-agent");
  const chosen = hints.value;
  hints.replaceChildren(...agentOptions(v.preset, false));
  if (Array.from(hints.options).some((o) => o.value === chosen)) hints.value = chosen;
}

// The call's choices come from the legal moves, as the bids do: a row of cards per suit, high to
// low as a hand is sorted, or the seats.
function renderCall(v, box) {
  const rows = new Map();
  const rank = (action) => RANK_ORDER.indexOf(action.slice(0, -1));
  const ordered = [...v.legal].sort((a, b) => (a.startsWith("PARTNER_") || b.startsWith("PARTNER_") ? 0 : rank(b) - rank(a)));
  for (const action of ordered) {
    const seat = action.startsWith("PARTNER_") ? Number(action.slice(8)) : null;
    const key = seat === null ? action.slice(-1).toUpperCase() : "seats";
    if (!rows.has(key)) rows.set(key, document.createElement("div"));
    const b = button(seat === null ? cardText(action) : v.seats[seat].name, action);
    if (seat === null && "dh".includes(action.slice(-1))) b.classList.add("red");
    rows.get(key).append(b);
  }
  box.append(...rows.values());
}

// Who is at the table, and the creator's seat links to send (kept in this browser only).
function renderPeople(v) {
  const people = v.seats.filter((s) => s.person);
  $("people").hidden = v.mode !== "play";
  if (v.mode !== "play") return;
  const links = JSON.parse(localStorage.getItem(`five-hundred-links-${v.id}`) || "{}");
  const box = $("links");
  box.replaceChildren();
  for (const s of people) {
    const line = document.createElement("div");
    line.className = "link";
    line.dataset.seat = s.seat;
    line.append(`${s.name}: ${s.you ? "you" : s.presence === "here" ? "at the table" : s.presence}`);
    if (!s.you && links[s.seat]) {
      const input = document.createElement("input");
      input.readOnly = true;
      input.value = new URL(links[s.seat], location.href).href;
      const copy = document.createElement("button");
      copy.type = "button";
      copy.textContent = "copy";
      copy.addEventListener("click", () => { input.select(); navigator.clipboard?.writeText(input.value); });
      line.append(input, copy);
    }
    box.append(line);
  }
}

function renderSide(v) {
  $("previous").textContent = v.previous ? `Last deal: ${resultText(v, v.previous.result)}` : "";
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
