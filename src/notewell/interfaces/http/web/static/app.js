// notewell's web page: recent notes and projects, a project, an attempt, search, a note, tags; with a
// write token, adding notes (a form, or .md files dropped on the page) and editing one with the
// revision check. State lives in the URL. Note text is untrusted: every value goes in with
// textContent; the only markup inserted is what the server made with every text escaped (the note
// body, raw HTML escaped and unsafe links dropped; the pictures, SVG whose texts are escaped).
"use strict";

const main = document.getElementById("main");

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else node.setAttribute(k, v);
  }
  return fill(node, children);
}

// Children without the empty ones: replaceChildren and append print null and undefined as text.
function kids(children) { return children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false); }
function fill(node, children) {
  for (const c of kids(children)) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}
function put(...children) { main.replaceChildren(); fill(main, children); }
function add(...children) { fill(main, children); }

function link(params, ...children) {
  const href = "/?" + new URLSearchParams(params).toString();
  return el("a", { href, "data-link": "1" }, ...children);
}

function token() { return localStorage.getItem("notewell-token"); }

class ApiError extends Error {
  constructor(code, message, status) { super(code + ": " + message); this.code = code; this.status = status; }
}

async function request(path, options) {
  const headers = Object.assign({}, (options && options.headers) || {});
  if (token()) headers["Authorization"] = "Bearer " + token();
  const answer = await fetch(path, Object.assign({}, options || {}, { headers }));
  return answer;
}

async function api(path, options) {
  const answer = await request(path, options);
  const data = await answer.json();
  if (!answer.ok) {
    const e = data.error || {};
    throw new ApiError(e.code || "error", e.message || String(answer.status), answer.status);
  }
  return data;
}

function send(method, path, body) {
  return api(path, { method, headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
}

// A picture the server drew (SVG, every text in it escaped), or nothing when it has none to draw.
async function picture(path, label) {
  const answer = await request(path);
  if (!answer.ok) return null;
  const text = await answer.text();
  if (!text.trim()) return null;
  const doc = new DOMParser().parseFromString(text, "image/svg+xml");
  const svg = doc.documentElement;
  if (svg.nodeName !== "svg" || doc.getElementsByTagName("parsererror").length) return null;
  return el("figure", { class: "picture", "aria-label": label }, document.importNode(svg, true));
}

function when(iso) { return iso ? iso.slice(0, 16).replace("T", " ") : ""; }
function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

// Markdown's syntax left out of a snippet (fences, headings, table rules and pipes, link targets,
// inline code marks); the server has already dropped the note's own ** so every ** is a match.
function plain(text) {
  return String(text || "")
    .replace(/```[\w+-]*/g, " ")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\|?(\s*:?-{3,}:?\s*\|)+\s*:?-{0,}:?/g, " ")
    .replace(/\|/g, " ")
    .replace(/(^|\s)#{1,6}(?=\s)/g, "$1")
    .replace(/`/g, "")
    .replace(/\s+/g, " "); // not trimmed: the spaces beside a <mark> are the text's
}

// "**word**" marks a matched word in keyword snippets: shown as <mark>, the rest as text.
function snippet(text) {
  const p = el("p", { class: "snippet" });
  String(text || "").split("**").forEach((part, i) => p.append(i % 2 ? el("mark", {}, part) : plain(part)));
  return p;
}

function chips(card) {
  return el("div", {},
    card.kind ? el("span", { class: "chip kind" }, card.kind) : null,
    (card.tags || []).map((t) => link({ view: "tags", tag: t }, el("span", { class: "chip" }, "#" + t))));
}

// A note's card. found: a search hit (its mode and older revision are said); project: name it.
function resultCard(card, { project = false, found = false } = {}) {
  const older = found && card.matched_revision != null;
  const meta = [card.author, card.model, "updated " + when(card.updated_at),
    card.attempt_outcome ? "attempt " + card.attempt_outcome : null, found ? card.mode : null,
    older ? "matched in revision " + card.matched_revision : null].filter(Boolean).join(" · ");
  // A card found through an older revision opens that revision, where its words are.
  const target = older ? { note: card.id, revision: card.matched_revision } : { note: card.id };
  return el("div", { class: "card" },
    el("h3", {}, link(target, card.title || card.id)),
    chips(card),
    project && card.project ? el("div", { class: "muted" }, "in ",
      link({ project: card.project }, card.project),
      card.attempt_id ? [" · ", link({ attempt: card.attempt_id }, "attempt " + card.attempt_id)] : null) : null,
    el("div", { class: "muted" }, meta),
    card.mode === "semantic" ? el("p", { class: "snippet" }, plain(card.snippet)) : snippet(card.snippet));
}

let kindsCache = null;
async function storeKinds() {
  if (kindsCache === null) {
    const summary = await api("/api/summary");
    kindsCache = (summary.by_kind || []).map((k) => k.kind).filter(Boolean).sort();
  }
  return kindsCache;
}

async function searchForm(state, project) {
  const input = el("input", { type: "search", name: "q", value: state.q || "", placeholder: "search words",
    "aria-label": "search" });
  const scope = el("select", { name: "scope", "aria-label": "scope" });
  const scopes = project ? [["project", "This project"]] : [];
  if (project && project.campaign) scopes.push(["campaign", "This campaign"]);
  scopes.push(["all", "All public work"]);
  for (const [v, label] of scopes) scope.append(el("option", { value: v, selected: state.scope === v }, label));
  const mode = el("select", { name: "mode", "aria-label": "mode" });
  for (const v of ["keyword", "semantic", "both", "hybrid"]) mode.append(el("option", { value: v, selected: state.mode === v }, v));
  // The kinds this store's notes have, not a fixed list.
  const kind = el("select", { name: "kind", "aria-label": "kind" }, el("option", { value: "" }, "any kind"));
  for (const k of await storeKinds()) kind.append(el("option", { value: k, selected: state.kind === k }, k));
  const form = el("form", { class: "search" }, input, scope, mode, kind, el("button", { type: "submit" }, "Search"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const params = { q: input.value, scope: scope.value, mode: mode.value };
    if (kind.value) params.kind = kind.value;
    if (state.tag) params.tag = state.tag;
    if (project) params.project = project.name;
    if (project && project.campaign) params.campaign = project.campaign;
    go(params);
  });
  return form;
}

// With a token: write a note here, or drop .md files on the page (each one note, saved and indexed).
function writePanel(attempt) {
  if (!token()) return null;
  const text = el("textarea", { name: "text", rows: "6", "aria-label": "new note",
    placeholder: "---\ntitle: …\nkind: finding\n---\nWhat you found. Or drop .md files here." });
  const said = el("div", { class: "muted", "aria-live": "polite" });
  const form = el("form", { class: "write" }, el("h2", {}, "New note"), text,
    el("div", {}, el("button", { type: "submit" }, "Add note"), " ", said));
  async function save(body, name) {
    const payload = { text: body };
    if (attempt) payload.attempt_id = attempt;
    try {
      const note = await send("POST", "/api/notes", payload);
      said.append(el("div", {}, "saved ", link({ note: note.id }, note.title || note.id), name ? " (" + name + ")" : ""));
      return true;
    } catch (err) {
      said.append(el("div", { class: "error" }, (name ? name + ": " : "") + err.message));
      return false;
    }
  }
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    said.replaceChildren();
    if (await save(text.value, "")) text.value = "";
  });
  form.addEventListener("dragover", (e) => { e.preventDefault(); form.classList.add("dropping"); });
  form.addEventListener("dragleave", () => form.classList.remove("dropping"));
  form.addEventListener("drop", async (e) => {
    e.preventDefault();
    form.classList.remove("dropping");
    said.replaceChildren();
    for (const file of Array.from(e.dataTransfer.files || [])) {
      if (!/\.(md|markdown|txt)$/i.test(file.name)) {
        said.append(el("div", { class: "error" }, file.name + ": not a Markdown file (.md)"));
        continue;
      }
      await save(await file.text(), file.name);
    }
  });
  return form;
}

async function showHome() {
  const [projects, recent] = await Promise.all([api("/api/projects"), api("/api/notes?limit=10")]);
  put(el("h1", {}, "notewell"), await searchForm({ scope: "all", mode: "keyword" }, null), writePanel(null));
  add(el("h2", {}, "Recent notes"), recent.cards.map((c) => resultCard(c, { project: true })),
    recent.cards.length ? el("p", {}, link({ view: "notes" }, "All notes →")) : el("p", { class: "muted" }, "No notes yet."));
  add(el("h2", {}, "Projects"));
  const groups = {};
  for (const p of projects.projects) (groups[p.campaign || ""] = groups[p.campaign || ""] || []).push(p);
  const named = Object.keys(groups).some((c) => c);
  for (const [campaign, list] of Object.entries(groups)) {
    const box = el("section", { class: "group" },
      named ? el("h3", {}, campaign ? "Campaign " + campaign : "Without a campaign") : null);
    for (const p of list) {
      box.append(el("div", { class: "card" }, el("h3", {}, link({ project: p.name }, p.name)),
        el("div", { class: "muted" }, [plural(p.notes, "note"), plural(p.attempts, "attempt"),
          p.last_activity ? "last active " + when(p.last_activity) : null, p.private ? "private" : null]
          .filter(Boolean).join(" · "))));
    }
    add(box);
  }
  if (!projects.projects.length) add(el("p", { class: "muted" }, "No projects yet."));
}

async function showAllNotes(state) {
  const offset = Math.max(0, parseInt(state.offset || "0", 10) || 0);
  const data = await api("/api/notes?limit=20&offset=" + offset);
  put(el("h1", {}, "All notes"), data.cards.map((c) => resultCard(c, { project: true })),
    data.cards.length ? null : el("p", { class: "muted" }, "No more notes."),
    el("p", {}, offset ? link({ view: "notes", offset: Math.max(0, offset - 20) }, "← Newer") : null, " ",
      data.cards.length === 20 ? link({ view: "notes", offset: offset + 20 }, "Older →") : null));
}

async function showProject(state) {
  const name = state.project;
  const base = "/api/projects/" + encodeURIComponent(name);
  const [brief, attempts, projects, timeline] = await Promise.all([
    api(base + "/brief"), api(base + "/attempts"), api("/api/projects"), picture(base + "/timeline.svg", "attempts over time"),
  ]);
  const project = projects.projects.find((p) => p.name === name) || { name };
  put(el("h1", {}, name), await searchForm({ scope: "project", mode: "keyword" }, project));
  if (timeline) add(el("h2", {}, "Attempts over time"), timeline);
  if (brief.digest) add(el("h2", {}, "Digest"), resultCard(brief.digest));
  add(el("h2", {}, "Recent notes"), (brief.recent || []).map((c) => resultCard(c)));
  if (!(brief.recent || []).length) add(el("p", { class: "muted" }, "No notes yet."));
  add(el("h2", {}, "Attempts"));
  for (const a of attempts.attempts) {
    add(el("div", { class: "card" },
      el("div", {}, link({ attempt: a.id }, a.id), " · ", a.author, a.model ? " · " + a.model : ""),
      el("div", { class: "muted" }, "started " + when(a.started_at),
        a.ended_at ? " · ended " + when(a.ended_at) + " · " + a.outcome : " · running", " · " + plural(a.notes || 0, "note"))));
  }
}

async function showAttempt(state) {
  const id = state.attempt;
  const base = "/api/attempts/" + encodeURIComponent(id);
  const [attempt, notes, reads, drawn] = await Promise.all([
    api(base), api("/api/notes?limit=100&attempt_id=" + encodeURIComponent(id)), api(base + "/reads"),
    picture(base + "/picture.svg", "the attempt over time"),
  ]);
  put(el("h1", {}, "Attempt " + attempt.id),
    el("div", { class: "muted" }, "on ", link({ project: attempt.project }, attempt.project),
      [attempt.author, attempt.model, "started " + when(attempt.started_at),
        attempt.ended_at ? "ended " + when(attempt.ended_at) + " · " + attempt.outcome : "running"]
        .filter(Boolean).map((t) => " · " + t)),
    drawn,
    el("h2", {}, "Notes written (" + notes.cards.length + ")"), notes.cards.map((c) => resultCard(c)),
    el("h2", {}, "Notes read (" + reads.reads.length + ")"),
    reads.reads.length ? el("ul", {}, reads.reads.map((r) => el("li", {},
      r.title != null ? link({ note: r.note_id }, r.title) : el("span", { class: "muted" }, r.note_id + " (deleted)"),
      " · ", el("span", { class: "muted" }, when(r.at))))) : el("p", { class: "muted" }, "none recorded"));
}

async function showSearch(state) {
  const scope = state.scope || "project";
  const params = new URLSearchParams({ q: state.q || "", mode: state.mode || "keyword", limit: "20" });
  if (scope === "project" && state.project) params.set("project", state.project);
  if (scope === "campaign" && state.campaign) params.set("campaign", state.campaign);
  if (state.kind) params.set("kind", state.kind);
  if (state.tag) params.set("tags", state.tag);
  const project = state.project ? { name: state.project, campaign: state.campaign } : null;
  put(el("h1", {}, "Search"), await searchForm(state, project));
  if (!state.q && scope !== "project") {
    add(el("p", { class: "muted" }, "Give search words to search beyond one project."));
    return;
  }
  const data = await api("/api/notes/search?" + params.toString());
  const opts = { project: scope !== "project", found: true };
  if (!data.cards.length) add(el("p", { class: "muted" }, "No notes found."));
  if (data.mode === "both") {
    // The two engines side by side, unfused: the exact list is always there beside the semantic one.
    const cols = el("div", { class: "both" });
    for (const m of ["keyword", "semantic"]) {
      const cards = data.cards.filter((c) => c.mode === m);
      cols.append(el("section", { "data-mode": m }, el("h2", {}, m === "keyword" ? "Keyword (exact)" : "Semantic"),
        cards.length ? cards.map((c) => resultCard(c, opts)) : el("p", { class: "muted" }, "none")));
    }
    add(cols);
  } else {
    add(data.cards.map((card) => resultCard(card, opts)));
  }
  if (data.not_embedded) add(el("p", { class: "muted" }, plural(data.not_embedded, "note") + " not embedded yet"));
}

function frozenReason(note) {
  const a = note.attempt;
  if (!a || !a.ended_at) return null;
  return "Frozen: its attempt " + a.id + " ended (" + (a.outcome || "ended") + ") on " + when(a.ended_at) +
    "; the notes of an ended attempt no longer change.";
}

async function showNote(state) {
  const rev = state.revision ? "&revision=" + encodeURIComponent(state.revision) : "";
  const [note, graph] = await Promise.all([
    api("/api/notes/" + encodeURIComponent(state.note) + "?render=html" + rev),
    picture("/api/notes/" + encodeURIComponent(state.note) + "/graph.svg", "what it builds on and what builds on it"),
  ]);
  const body = el("div", { class: "body" });
  body.innerHTML = note.body_html; // rendered by the server: raw HTML escaped, unsafe links dropped
  const current = note.revision === note.revisions;
  const frozen = frozenReason(note);
  const editor = el("div", { class: "editor" });
  put(
    el("h1", {}, note.title),
    el("div", {},
      note.kind ? el("span", { class: "chip kind" }, note.kind) : null,
      (note.tags || []).map((t) => link({ view: "tags", tag: t }, el("span", { class: "chip" }, "#" + t))),
      note.model ? el("span", { class: "chip" }, "model: " + note.model) : null,
      (note.builds_on || []).map((id) => link({ note: id }, el("span", { class: "chip" }, "builds on " + id)))),
    note.extra && note.extra.length ? el("div", { class: "extras" }, note.extra.join("\n")) : null,
    el("div", { class: "muted" }, [note.author, "updated " + when(note.updated_at),
      "revision " + note.revision + " of " + note.revisions].filter(Boolean).join(" · "),
      note.attempt ? [" · ", link({ attempt: note.attempt.id }, "attempt " + note.attempt.id), " on ",
        link({ project: note.attempt.project }, note.attempt.project)] : null),
    frozen ? el("p", { class: "frozen" }, frozen) : null,
    !current ? el("p", { class: "muted" }, "An earlier revision. ", link({ note: note.id }, "The current one →")) : null,
    token() && current && !frozen ? el("p", {}, el("button", { type: "button", id: "edit" }, "Edit")) : null,
    editor,
    body,
    graph ? el("section", {}, el("h2", {}, "Links"), graph) : null,
    note.revisions > 1 ? el("section", {}, el("h2", {}, "Revisions"),
      Array.from({ length: note.revisions }, (_, i) => i + 1).map((n) =>
        el("span", {}, n === note.revision ? el("strong", {}, "r" + n) : link({ note: note.id, revision: n }, "r" + n), " "))) : null,
    note.backlinks && note.backlinks.length ? el("section", {}, el("h2", {}, "Built on by"),
      note.backlinks.map((b) => el("div", {}, link({ note: b.id }, b.title || b.id)))) : null);
  const button = document.getElementById("edit");
  if (button) button.addEventListener("click", () => { button.remove(); openEditor(editor, note, note.text); });
}

// Editing with the revision check: the text is saved only over the revision it was read at; an
// edit made meanwhile (by an agent) is shown beside this one, never overwritten unseen.
function openEditor(box, note, text) {
  const area = el("textarea", { rows: "14", "aria-label": "note text" });
  area.value = text;
  const said = el("div", { "aria-live": "polite" });
  const save = el("button", { type: "button" }, "Save");
  const cancel = el("button", { type: "button" }, "Cancel");
  box.replaceChildren(fill(el("div", {}), [area, el("div", {}, save, " ", cancel), said]));
  cancel.addEventListener("click", () => render());
  save.addEventListener("click", async () => {
    said.replaceChildren();
    try {
      const saved = await send("PATCH", "/api/notes/" + encodeURIComponent(note.id),
        { text: area.value, base_revision: note.revision });
      go({ note: saved.id });
    } catch (err) {
      if (err.code === "conflict") await showConflict(box, note, area.value);
      else said.append(el("p", { class: "error" }, err.message));
    }
  });
}

async function showConflict(box, note, mine) {
  const now = await api("/api/notes/" + encodeURIComponent(note.id));
  const theirs = el("pre", { class: "theirs" }, now.text);
  const area = el("textarea", { rows: "14", "aria-label": "your text" });
  area.value = mine;
  const keep = el("button", { type: "button" }, "Save mine over revision " + now.revision);
  const drop = el("button", { type: "button" }, "Discard mine");
  const said = el("div", {});
  box.replaceChildren(fill(el("div", { class: "conflict" }), [
    el("p", { class: "error" }, "The note changed while you edited it: it is now at revision " + now.revision +
      " (you started from " + note.revision + "). Nothing was saved. Merge the two, then save."),
    el("div", { class: "both" },
      el("section", {}, el("h2", {}, "Your text"), area),
      el("section", {}, el("h2", {}, "Revision " + now.revision + " (saved meanwhile)"), theirs)),
    el("div", {}, keep, " ", drop), said]));
  drop.addEventListener("click", () => go({ note: note.id }));
  keep.addEventListener("click", async () => {
    try {
      await send("PATCH", "/api/notes/" + encodeURIComponent(note.id), { text: area.value, base_revision: now.revision });
      go({ note: note.id });
    } catch (err) {
      if (err.code === "conflict") await showConflict(box, now, area.value);
      else said.replaceChildren(el("p", { class: "error" }, err.message));
    }
  });
}

async function showTags(state) {
  const data = await api("/api/tags");
  put(el("h1", {}, "Tags"), el("div", {}, data.tags.map((t) =>
    link({ view: "tags", tag: t.tag }, el("span", { class: "chip" }, `#${t.tag} ${t.count}`)))));
  if (!data.tags.length) add(el("p", { class: "muted" }, "No tags yet."));
  if (state.tag) {
    const found = await api("/api/tags?notes=1&tag=" + encodeURIComponent(state.tag));
    add(el("h2", {}, "#" + state.tag));
    for (const n of found.notes || []) {
      add(el("div", { class: "card" }, el("h3", {}, link({ note: n.id }, n.title || n.id)),
        el("div", {}, (n.tags || []).map((t) => link({ view: "tags", tag: t }, el("span", { class: "chip" }, "#" + t)))),
        n.summary ? el("p", { class: "summary" }, n.summary) : null));
    }
  }
}

async function render() {
  const state = Object.fromEntries(new URLSearchParams(location.search));
  try {
    if (state.note) await showNote(state);
    else if (state.attempt) await showAttempt(state);
    else if (state.view === "tags") await showTags(state);
    else if (state.view === "notes") await showAllNotes(state);
    else if ("q" in state || state.scope) await showSearch(state);
    else if (state.project) await showProject(state);
    else await showHome();
  } catch (err) {
    put(el("p", { class: "error" }, String(err.message || err)));
  }
}

function go(params) {
  history.pushState(null, "", "/?" + new URLSearchParams(params).toString());
  render();
}

document.addEventListener("click", (e) => {
  const a = e.target.closest("a[data-link]");
  if (!a || e.metaKey || e.ctrlKey || e.shiftKey || a.origin !== location.origin) return;
  e.preventDefault();
  history.pushState(null, "", a.href);
  render();
});
window.addEventListener("popstate", render);
document.getElementById("login").addEventListener("submit", (e) => {
  e.preventDefault();
  const value = document.getElementById("token").value.trim();
  if (value) localStorage.setItem("notewell-token", value);
  else localStorage.removeItem("notewell-token");
  kindsCache = null;
  render();
});
render();
