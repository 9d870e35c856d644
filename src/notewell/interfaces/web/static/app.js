// notewell's web page: projects, a project's notes, search, a note, tags. State lives in the URL.
// Note text is untrusted: every value goes in with textContent; the only HTML inserted is the
// note body the server rendered with raw HTML escaped and unsafe links dropped.
"use strict";

const main = document.getElementById("main");
const KINDS = ["finding", "decision", "blocker", "plan", "digest", "summary", "question", "idea"];

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else node.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function link(params, ...children) {
  const href = "/?" + new URLSearchParams(params).toString();
  return el("a", { href, "data-link": "1" }, ...children);
}

async function api(path) {
  const headers = {};
  const token = localStorage.getItem("notewell-token");
  if (token) headers["Authorization"] = "Bearer " + token;
  const answer = await fetch(path, { headers });
  const data = await answer.json();
  if (!answer.ok) throw new Error((data.error && data.error.code + ": " + data.error.message) || answer.status);
  return data;
}

function when(iso) { return iso ? iso.slice(0, 16).replace("T", " ") : ""; }

// "**word**" marks a matched word in keyword snippets: shown as <mark>, the rest as text.
function snippet(text) {
  const p = el("p", { class: "snippet" });
  String(text || "").split("**").forEach((part, i) => p.append(i % 2 ? el("mark", {}, part) : part));
  return p;
}

function chips(card) {
  return el("div", {},
    card.kind ? el("span", { class: "chip kind" }, card.kind) : null,
    (card.tags || []).map((t) => link({ view: "tags", tag: t }, el("span", { class: "chip" }, "#" + t))));
}

function resultCard(card, showProject) {
  const meta = [card.author, card.model, when(card.updated_at),
    card.attempt_outcome ? "attempt " + card.attempt_outcome : null, card.mode,
    card.matched_revision != null ? "matched in revision " + card.matched_revision : null].filter(Boolean).join(" · ");
  // A card found through an older revision opens that revision, where its words are.
  const target = card.matched_revision != null ? { note: card.id, revision: card.matched_revision } : { note: card.id };
  return el("div", { class: "card" },
    el("h3", {}, link(target, card.title || card.id)),
    chips(card),
    showProject && card.project ? el("div", { class: "muted" }, "in ",
      link({ project: card.project }, card.project), card.attempt_id ? " · attempt " + card.attempt_id : "") : null,
    el("div", { class: "muted" }, meta),
    card.mode === "semantic" ? el("p", { class: "snippet" }, card.snippet || "") : snippet(card.snippet));
}

function searchForm(state, project) {
  const input = el("input", { type: "search", name: "q", value: state.q || "", placeholder: "search words",
    "aria-label": "search" });
  const scope = el("select", { name: "scope", "aria-label": "scope" });
  const scopes = project ? [["project", "This project"]] : [];
  if (project && project.campaign) scopes.push(["campaign", "This campaign"]);
  scopes.push(["all", "All public work"]);
  for (const [v, label] of scopes) scope.append(el("option", { value: v, selected: state.scope === v }, label));
  const mode = el("select", { name: "mode", "aria-label": "mode" });
  for (const v of ["keyword", "semantic", "both"]) mode.append(el("option", { value: v, selected: state.mode === v }, v));
  const kind = el("select", { name: "kind", "aria-label": "kind" }, el("option", { value: "" }, "any kind"));
  for (const k of KINDS) kind.append(el("option", { value: k, selected: state.kind === k }, k));
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

async function showProjects() {
  const data = await api("/api/projects");
  const groups = {};
  for (const p of data.projects) (groups[p.campaign || ""] = groups[p.campaign || ""] || []).push(p);
  main.replaceChildren(el("h1", {}, "Projects"), searchForm({ scope: "all", mode: "keyword" }, null));
  for (const [campaign, projects] of Object.entries(groups)) {
    const box = el("section", { class: "group" }, el("h2", {}, campaign ? "Campaign " + campaign : "Projects"));
    for (const p of projects) {
      box.append(el("div", { class: "card" }, el("h3", {}, link({ project: p.name }, p.name)),
        el("div", { class: "muted" }, `${p.notes} notes · ${p.attempts} attempts · ${when(p.last_activity)}`,
          p.private ? " · private" : "")));
    }
    main.append(box);
  }
  if (!data.projects.length) main.append(el("p", { class: "muted" }, "No projects yet."));
}

async function showProject(state) {
  const name = state.project;
  const [brief, attempts, projects] = await Promise.all([
    api("/api/projects/" + encodeURIComponent(name) + "/brief"),
    api("/api/projects/" + encodeURIComponent(name) + "/attempts"),
    api("/api/projects"),
  ]);
  const project = projects.projects.find((p) => p.name === name) || { name };
  main.replaceChildren(el("h1", {}, name), searchForm({ scope: "project", mode: "keyword" }, project));
  if (brief.digest) main.append(el("h2", {}, "Digest"), resultCard(brief.digest, false));
  main.append(el("h2", {}, "Recent notes"));
  for (const card of brief.recent || []) main.append(resultCard(card, false));
  main.append(el("h2", {}, "Attempts"));
  for (const a of attempts.attempts) {
    main.append(el("div", { class: "card" }, el("div", {}, a.id, " · ", a.author, a.model ? " · " + a.model : ""),
      el("div", { class: "muted" }, "started " + when(a.started_at),
        a.ended_at ? " · ended " + when(a.ended_at) + " · " + a.outcome : " · running")));
  }
}

async function showSearch(state) {
  const scope = state.scope || "project";
  const params = new URLSearchParams({ q: state.q || "", mode: state.mode || "keyword", limit: "20" });
  if (scope === "project" && state.project) params.set("project", state.project);
  if (scope === "campaign" && state.campaign) params.set("campaign", state.campaign);
  if (state.kind) params.set("kind", state.kind);
  if (state.tag) params.set("tags", state.tag);
  const project = state.project ? { name: state.project, campaign: state.campaign } : null;
  main.replaceChildren(el("h1", {}, "Search"), searchForm(state, project));
  if (!state.q && scope !== "project") {
    main.append(el("p", { class: "muted" }, "Give search words to search beyond one project."));
    return;
  }
  const data = await api("/api/notes/search?" + params.toString());
  if (!data.cards.length) main.append(el("p", { class: "muted" }, "No notes found."));
  if (data.mode === "both") {
    // The two engines side by side, unfused: the exact list is always there beside the semantic one.
    const cols = el("div", { class: "both" });
    for (const m of ["keyword", "semantic"]) {
      const cards = data.cards.filter((c) => c.mode === m);
      cols.append(el("section", { "data-mode": m }, el("h2", {}, m === "keyword" ? "Keyword (exact)" : "Semantic"),
        cards.length ? cards.map((c) => resultCard(c, scope !== "project")) : el("p", { class: "muted" }, "none")));
    }
    main.append(cols);
  } else {
    for (const card of data.cards) main.append(resultCard(card, scope !== "project"));
  }
  if (data.not_embedded) main.append(el("p", { class: "muted" }, `${data.not_embedded} notes not embedded yet`));
}

async function showNote(state) {
  const rev = state.revision ? "&revision=" + encodeURIComponent(state.revision) : "";
  const note = await api("/api/notes/" + encodeURIComponent(state.note) + "?render=html" + rev);
  const header = note.header || {};
  const body = el("div", { class: "body" });
  body.innerHTML = note.body_html; // rendered by the server: raw HTML escaped, unsafe links dropped
  main.replaceChildren(
    el("h1", {}, note.title),
    el("div", {},
      note.kind ? el("span", { class: "chip kind" }, note.kind) : null,
      (note.tags || []).map((t) => el("span", { class: "chip" }, "#" + t)),
      note.model ? el("span", { class: "chip" }, "model: " + note.model) : null,
      (note.builds_on || []).map((id) => link({ note: id }, el("span", { class: "chip" }, "builds on " + id)))),
    note.extra && note.extra.length ? el("div", { class: "extras" }, note.extra.join("\n")) : null,
    el("div", { class: "muted" }, [note.author, "updated " + when(note.updated_at),
      "revision " + note.revision + " of " + note.revisions].filter(Boolean).join(" · "),
      note.attempt ? el("span", {}, " · attempt ", note.attempt.id, " on ",
        link({ project: note.attempt.project }, note.attempt.project)) : null),
    body,
    note.revisions > 1 ? el("section", {}, el("h2", {}, "Revisions"),
      Array.from({ length: note.revisions }, (_, i) => i + 1).map((n) =>
        el("span", {}, n === note.revision ? el("strong", {}, "r" + n) : link({ note: note.id, revision: n }, "r" + n), " "))) : null,
    note.backlinks && note.backlinks.length ? el("section", {}, el("h2", {}, "Built on by"),
      note.backlinks.map((b) => el("div", {}, link({ note: b.id }, b.title || b.id)))) : null);
  void header;
}

async function showTags(state) {
  const data = await api("/api/tags");
  main.replaceChildren(el("h1", {}, "Tags"));
  const list = el("div", {});
  for (const t of data.tags) list.append(link({ view: "tags", tag: t.tag }, el("span", { class: "chip" }, `#${t.tag} ${t.count}`)));
  main.append(list);
  if (state.tag) {
    const found = await api("/api/tags?notes=1&tag=" + encodeURIComponent(state.tag));
    main.append(el("h2", {}, "#" + state.tag));
    for (const n of found.notes || []) {
      main.append(el("div", { class: "card" }, el("h3", {}, link({ note: n.id }, n.title || n.id)),
        el("div", {}, (n.tags || []).map((t) => el("span", { class: "chip" }, "#" + t))),
        el("p", { class: "summary" }, n.summary || el("span", { class: "muted" }, "no summary"))));
    }
  }
}

async function render() {
  const state = Object.fromEntries(new URLSearchParams(location.search));
  try {
    if (state.note) await showNote(state);
    else if (state.view === "tags") await showTags(state);
    else if ("q" in state || state.scope) await showSearch(state);
    else if (state.project) await showProject(state);
    else await showProjects();
  } catch (err) {
    main.replaceChildren(el("p", { class: "error" }, String(err.message || err)));
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
  render();
});
render();
