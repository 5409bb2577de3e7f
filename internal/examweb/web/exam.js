// The exam page: it polls the exam's state, runs the clock from the server's deadline, and carries the
// terminal over a WebSocket. Everything the server sends is shown with textContent, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const el = (tag, text, cls) => {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
};

let state = null;
// offset corrects this browser's clock by the server's, so the clock ends when the server grades.
let offset = 0;
// noteOf is the question whose note the textarea holds; the poll never overwrites what is being typed.
let noteOf = 0;
let noteTimer = null;
let term = null;
let fit = null;
let socket = null;
// ended is set once the exam has ended under the page: no new terminal then.
let ended = false;

function clock(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  const mm = String(m).padStart(h ? 2 : 1, "0"), ss = String(sec).padStart(2, "0");
  return h ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
}

async function call(method, path, body) {
  const r = await fetch(path, {
    method,
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!r.ok) throw new Error((await r.text()).trim() || r.statusText);
  return r.status === 204 || r.status === 202 ? null : r.json();
}

async function refresh() {
  try {
    const s = await call("GET", "/api/state");
    offset = Date.parse(s.serverTime) - Date.now();
    state = s;
    render();
  } catch (e) {
    $("banner").hidden = false;
    $("banner").textContent = "lab is not answering: " + e.message;
  }
}

function render() {
  const s = state;
  document.body.dataset.updates = String(Number(document.body.dataset.updates) + 1);
  $("exam-id").textContent = "Exam " + s.id;
  if (s.report) return showResult(s.report);
  $("banner").hidden = !(s.grading || s.gradeError || s.closed);
  $("banner").textContent = s.grading ? "Grading…" : s.gradeError ? "Grading failed: " + s.gradeError + " (run `lab exam grade`)" : s.closed || "";
  const list = $("questions");
  list.replaceChildren(...s.questions.map((q, i) => {
    const note = s.notes[q.number] || {};
    const li = el("li");
    li.dataset.n = String(q.number);
    li.dataset.flagged = String(q.flagged);
    li.dataset.done = String(Boolean(note.done));
    if (i === s.current) li.classList.add("current");
    const b = el("button");
    b.type = "button";
    b.append(el("span", "Q" + q.number), el("span", q.host || "", "host"),
      el("span", `${q.weight}%${q.flagged ? " ⚑" : ""}${note.done ? " ✓" : ""}`, "marks"));
    b.title = q.title;
    b.addEventListener("click", () => go(i));
    li.append(b);
    return li;
  }));
  const q = s.questions[s.current];
  $("title").textContent = `Question ${q.number}/${s.questions.length} · ${q.weight}% · ${q.title}`;
  $("where").replaceChildren(...(q.host
    ? ["Solve this question on host ", el("code", q.host), ": in the terminal, ", el("code", "ssh " + q.host)]
    : ["Use the lab cluster's kubeconfig."]));
  $("task").textContent = q.task;
  $("flag").textContent = q.flagged ? "Unflag" : "Flag";
  $("flag").setAttribute("aria-pressed", String(q.flagged));
  const note = s.notes[q.number] || {};
  $("done").checked = Boolean(note.done);
  if (noteOf !== q.number) {
    saveNote();
    noteOf = q.number;
    $("note").value = note.text || "";
    $("note-status").textContent = "";
  }
  if (!s.terminal) {
    $("terminal-status").textContent = "This build of lab has no terminal for the page (xterm.js): run `make web`, then `make build`. Meanwhile use `lab exam shell` in a terminal of your own.";
  } else if (!term) {
    openTerminal();
  }
  tick();
}

function tick() {
  if (!state || state.report) return;
  const left = Date.parse(state.deadline) - (Date.now() + offset);
  const c = $("clock");
  c.textContent = clock(left) + " left";
  c.classList.toggle("low", left < 15 * 60 * 1000);
  c.classList.toggle("out", left <= 0);
  if (left <= 0 && !ended) {
    // The server grades at the deadline; the page stops taking keystrokes at once.
    ended = true;
    c.textContent = "Time is up";
    if (socket) socket.close(1000, "time is up");
    $("banner").hidden = false;
    $("banner").textContent = "Time is up: grading…";
  }
}

async function go(i) {
  const n = state.questions.length;
  try {
    await call("POST", `/api/questions/${((i % n) + n) % n + 1}/go`);
  } catch (e) {
    alert("Could not move: " + e.message);
  }
  await refresh();
}

async function toggleFlag() {
  try {
    await call("POST", `/api/questions/${state.current + 1}/flag`);
  } catch (e) {
    alert("Could not flag: " + e.message);
  }
  await refresh();
}

// saveNote saves the note the textarea holds now, if a change is waiting.
function saveNote() {
  if (!noteTimer) return Promise.resolve();
  clearTimeout(noteTimer);
  noteTimer = null;
  const n = noteOf;
  const done = (state.notes[n] || {}).done || false;
  const text = $("note").value;
  state.notes[n] = { text, done };
  return call("PUT", `/api/questions/${n}/note`, { text, done })
    .then(() => { if (noteOf === n) $("note-status").textContent = "Saved."; })
    .catch((e) => { $("note-status").textContent = "Not saved: " + e.message; });
}

async function toggleDone() {
  await saveNote();
  const n = state.current + 1;
  const note = { text: (state.notes[n] || {}).text || "", done: $("done").checked };
  try {
    await call("PUT", `/api/questions/${n}/note`, note);
  } catch (e) {
    alert("Could not mark it: " + e.message);
  }
  await refresh();
}

function openTerminal() {
  if (typeof Terminal === "undefined") {
    $("terminal-status").textContent = "The terminal's script did not load: run `make web`, then `make build`.";
    return;
  }
  term = new Terminal({ cursorBlink: true, fontFamily: "ui-monospace, monospace", fontSize: 14, scrollback: 5000 });
  fit = new FitAddon.FitAddon();
  term.loadAddon(fit);
  term.open($("terminal"));
  fit.fit();
  term.onData((d) => { if (socket && socket.readyState === WebSocket.OPEN) socket.send(new TextEncoder().encode(d)); });
  term.onResize(({ cols, rows }) => sendSize(cols, rows));
  new ResizeObserver(() => fit.fit()).observe($("terminal"));
  connect();
}

function sendSize(cols, rows) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ cols, rows }));
}

function connect() {
  $("reconnect").hidden = true;
  $("terminal-status").textContent = "";
  socket = new WebSocket(`ws://${location.host}/api/terminal`);
  socket.binaryType = "arraybuffer";
  socket.onopen = () => {
    sendSize(term.cols, term.rows);
    term.focus();
  };
  socket.onmessage = (e) => term.write(new Uint8Array(e.data));
  socket.onclose = (e) => {
    socket = null;
    if (e.code === 4000) ended = true;
    $("terminal-status").textContent = "The terminal has closed" + (e.reason ? ": " + e.reason : "") + ".";
    $("reconnect").hidden = ended;
    refresh();
  };
}

function showResult(rep) {
  ended = true;
  if (socket) socket.close(1000, "the exam has ended");
  $("exam").hidden = true;
  $("end").hidden = true;
  $("banner").hidden = true;
  $("clock").textContent = "Graded";
  $("result").hidden = false;
  $("verdict").textContent = rep.passed ? "Passed" : "Not passed";
  $("verdict").className = rep.passed ? "pass" : "fail";
  $("total").textContent = `${rep.percent.toFixed(1)}% (${rep.credit.toFixed(1)} of ${rep.weight} weight); the CKA pass mark is ${rep.passMark}%.`;
  $("report").tBodies[0].replaceChildren(...rep.questions.map((q) => {
    const tr = el("tr");
    tr.dataset.n = String(q.number);
    tr.append(el("td", String(q.number)), el("td", q.passed ? "PASS" : "FAIL", q.passed ? "pass" : "fail"),
      el("td", `${q.score}/${q.max}`), el("td", q.weight + "%"), el("td", q.credit.toFixed(1)),
      el("td", clock(q.seconds * 1000)), el("td", q.title || q.scenario));
    return tr;
  }));
  const details = [];
  for (const q of rep.questions) {
    const items = [...(q.failing || [])];
    if (q.timeline) {
      const t = q.timeline;
      items.push(`first write at ${clock(t.afterSeconds * 1000)}, last at ${clock((t.afterSeconds + t.fixSeconds) * 1000)} (${t.writes} write(s))`);
      for (const w of t.wrongTurns || []) items.push("wrong turn: " + w.message);
    }
    if (!items.length) continue;
    details.push(el("h2", `Q${q.number} ${q.scenario}`));
    const ul = el("ul");
    ul.append(...items.map((t) => el("li", t)));
    details.push(ul);
  }
  for (const n of rep.coaching || []) details.push(el("p", "Outside every question: " + n.message));
  $("details").replaceChildren(...details);
}

let ending = false;
$("end").addEventListener("click", async () => {
  if (!ending) {
    // One click could be a slip: the end asks for a second.
    ending = true;
    $("end").textContent = "Click again to end and grade";
    setTimeout(() => { ending = false; $("end").textContent = "End exam"; }, 5000);
    return;
  }
  try {
    await call("POST", "/api/grade");
  } catch (e) {
    alert("Could not end the exam: " + e.message);
  }
  await refresh();
});
$("prev").addEventListener("click", () => go(state.current - 1));
$("next").addEventListener("click", () => go(state.current + 1));
$("flag").addEventListener("click", toggleFlag);
$("done").addEventListener("change", toggleDone);
$("note").addEventListener("input", () => {
  $("note-status").textContent = "";
  clearTimeout(noteTimer);
  noteTimer = setTimeout(saveNote, 600);
});
$("reconnect").addEventListener("click", connect);
window.addEventListener("beforeunload", saveNote);

refresh();
setInterval(refresh, 2000);
setInterval(tick, 250);
