// The scoreboard: renders the board the server streams on /api/events and counts the clock down locally
// between events. Everything shown comes from textContent, never HTML, so names cannot inject markup. The
// instructor's controls show for a browser signed in at /login: its session is an HttpOnly cookie, which
// this script never sees and sends only to this server.
"use strict";

const statusText = {
  "not-started": "not started",
  "in-progress": "in progress",
  "failed": "failed check",
  "passed": "passed",
};
let board = null;
let receivedAt = 0;
let sort = { key: "name", dir: 1 };

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}

function duration(ns) {
  const total = Math.max(0, Math.floor(ns / 1e9));
  const h = Math.floor(total / 3600), m = Math.floor((total % 3600) / 60), s = total % 60;
  const mm = String(m).padStart(h ? 2 : 1, "0"), ss = String(s).padStart(2, "0");
  return h ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
}

function sortedLearners() {
  const rows = [...board.learners];
  const by = {
    name: (a, b) => a.name.toLowerCase().localeCompare(b.name.toLowerCase()),
    total: (a, b) => a.totalScore - b.totalScore,
    time: (a, b) => a.timeUsedNs - b.timeUsedNs,
  }[sort.key];
  return rows.sort((a, b) => sort.dir * by(a, b) || a.name.localeCompare(b.name));
}

function header() {
  const sortable = (key, label, firstDir) => {
    const th = el("th", { class: "sortable", "data-sort": key }, label);
    if (sort.key === key) th.setAttribute("aria-sort", sort.dir > 0 ? "ascending" : "descending");
    th.addEventListener("click", () => {
      sort = sort.key === key ? { key, dir: -sort.dir } : { key, dir: firstDir };
      render();
    });
    return th;
  };
  const tr = el("tr", {}, sortable("name", "Learner", 1));
  for (const s of board.plan.scenarios) {
    const revealed = (board.plan.revealedHints || {})[s] || 0;
    const th = el("th", { "data-scenario": s }, s);
    if (revealed) th.append(el("span", { class: "hints" }, `${revealed} hint${revealed > 1 ? "s" : ""} revealed`));
    tr.append(th);
  }
  tr.append(sortable("total", "Total", -1), sortable("time", "Time", 1));
  return tr;
}

function cell(name, scenario, c) {
  const td = el("td", { class: `cell st-${c.status}`, "data-learner": name, "data-scenario": scenario, "data-status": c.status });
  td.title = statusText[c.status] + (c.checksTotal ? `, ${c.checksPassed}/${c.checksTotal} checks` : "");
  if (c.status === "not-started") {
    td.append(el("span", { class: "score" }, "–"));
    return td;
  }
  td.append(el("span", { class: "score" }, c.maxScore ? `${c.score}/${c.maxScore}` : statusText[c.status]));
  td.append(el("span", { class: "time" }, duration(c.timeUsedNs)));
  const extra = [];
  if (c.source === "self-reported") {
    td.classList.add("self-reported");
    td.title += ", self-reported: signed by the learner's lab, not graded by this server";
    extra.push("self-reported");
  }
  if (c.hintsTaken) extra.push(`${c.hintsTaken} hint${c.hintsTaken > 1 ? "s" : ""}`);
  if (c.diagnosisCorrect !== undefined) extra.push(c.diagnosisCorrect ? "diagnosis ✓" : "diagnosis ✗");
  if (extra.length) td.append(el("span", { class: "extra" }, extra.join(" · ")));
  return td;
}

function render() {
  document.title = `${board.plan.title} – scoreboard`;
  document.getElementById("title").textContent = board.plan.title;
  document.getElementById("paused-banner").hidden = !board.plan.paused || board.plan.ended;
  document.getElementById("ended-banner").hidden = !board.plan.ended;
  for (const b of document.querySelectorAll("#instructor button:not(#export-csv):not(#export-junit):not(#sign-out)")) {
    b.disabled = !!board.plan.ended;
  }
  document.querySelector("#board thead").replaceChildren(header());
  const rows = sortedLearners().map((l) => {
    const name = el("td", { class: "name" }, l.name);
    if (l.left) name.append(el("span", { class: "left" }, " (left)"));
    const tr = el("tr", { "data-learner": l.name, "data-left": String(!!l.left) }, name);
    for (const s of board.plan.scenarios) tr.append(cell(l.name, s, l.cells[s]));
    tr.append(el("td", { class: "total" }, String(l.totalScore)), el("td", { class: "time" }, duration(l.timeUsedNs)));
    return tr;
  });
  document.querySelector("#board tbody").replaceChildren(...rows);
  document.getElementById("empty").hidden = rows.length > 0;
  const select = document.getElementById("hint-scenario");
  if (select.options.length !== board.plan.scenarios.length) {
    select.replaceChildren(...board.plan.scenarios.map((s) => el("option", { value: s }, s)));
  }
  tick();
}

function tick() {
  if (!board) return;
  const elapsed = board.plan.paused ? 0 : (Date.now() - receivedAt) * 1e6;
  const left = board.timeLeftNs - elapsed;
  document.getElementById("time-left").textContent = board.plan.ended ? "Class ended"
    : left > 0 ? `Time left ${duration(left)}${board.plan.paused ? " (paused)" : ""}` : "Time is up";
}

function connect() {
  const conn = document.getElementById("conn");
  const events = new EventSource("/api/events");
  events.addEventListener("board", (e) => {
    board = JSON.parse(e.data);
    receivedAt = Date.now();
    render();
    conn.textContent = "live";
    conn.className = "conn-live";
    document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
  });
  events.addEventListener("error", () => {
    conn.textContent = "reconnecting…";
    conn.className = "conn-wait";
  });
}

async function instructor(path, body) {
  const msg = document.getElementById("instructor-msg");
  const resp = await fetch(path, {
    method: body === undefined ? "GET" : "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!resp.ok) {
    const text = await resp.text();
    let err = text;
    try { err = JSON.parse(text).error; } catch { /* not JSON: show it as it is */ }
    msg.textContent = `${path}: ${err || resp.status}`;
    throw new Error(msg.textContent);
  }
  msg.textContent = "";
  return resp;
}

async function download(path, filename) {
  const blob = await (await instructor(path)).blob();
  const a = el("a", { href: URL.createObjectURL(blob), download: filename });
  a.click();
  URL.revokeObjectURL(a.href);
}

async function setupInstructor() {
  const session = await (await fetch("/api/session", { credentials: "same-origin" })).json();
  document.getElementById("sign-in").hidden = session.instructor;
  if (!session.instructor) return;
  document.getElementById("instructor").hidden = false;
  const on = (id, fn) => document.getElementById(id).addEventListener("click", () => fn().catch(() => {}));
  on("pause", () => instructor("/api/pause", {}));
  on("resume", () => instructor("/api/resume", {}));
  on("extend", () => instructor("/api/extend", { minutes: Number(document.getElementById("extend-minutes").value) }));
  on("reveal-hint", () => instructor("/api/reveal-hint", { scenario: document.getElementById("hint-scenario").value }));
  on("export-csv", () => download("/api/export.csv", `${board.plan.classId}.csv`));
  on("export-junit", () => download("/api/export.junit", `${board.plan.classId}.junit.xml`));
  // Ending cannot be undone, so it takes a second click within five seconds.
  const end = document.getElementById("end");
  let armed = null;
  on("end", async () => {
    if (!armed) {
      end.textContent = "Click again to end the class for everyone";
      armed = setTimeout(() => { armed = null; end.textContent = "End class"; }, 5000);
      return;
    }
    clearTimeout(armed);
    armed = null;
    end.textContent = "End class";
    await instructor("/api/end", {});
  });
}

setupInstructor().catch(() => { document.getElementById("sign-in").hidden = false; });
connect();
setInterval(tick, 1000);
