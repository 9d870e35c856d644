// The views that list: the start page, all notes, a project, an attempt, search, tags.

import { api, picture } from "./api.js";
import { resultCard, searchForm, writePanel } from "./cards.js";
import { add, el, link, plural, put, tagChips, when } from "./dom.js";

function none(text) { return el("p", { class: "muted" }, text); }

export async function showHome() {
  const [projects, recent] = await Promise.all([api("/api/projects"), api("/api/notes?limit=10")]);
  put(el("h1", {}, "notewell"), await searchForm({ scope: "all", mode: "keyword" }, null), writePanel(null));
  const notes = el("section", { class: "list", "aria-label": "recent notes" }, el("h2", {}, "Recent notes"),
    recent.cards.map((c) => resultCard(c, { project: true })),
    recent.cards.length ? el("p", { class: "more" }, link({ view: "notes" }, "All notes →")) : none("No notes yet."));
  add(el("div", { class: "columns" }, notes, projectList(projects.projects)));
}

function projectList(projects) {
  const box = el("section", { class: "list side", "aria-label": "projects" }, el("h2", {}, "Projects"));
  const groups = {};
  for (const p of projects) (groups[p.campaign || ""] = groups[p.campaign || ""] || []).push(p);
  const named = Object.keys(groups).some((c) => c);
  for (const [campaign, list] of Object.entries(groups)) {
    box.append(el("section", { class: "group" },
      named ? el("h3", {}, campaign ? "Campaign " + campaign : "Without a campaign") : null,
      list.map((p) => el("div", { class: "row-item" }, link({ project: p.name }, p.name),
        el("div", { class: "meta" }, [plural(p.notes, "note"), plural(p.attempts, "attempt"),
          p.last_activity ? "active " + when(p.last_activity) : null, p.private ? "private" : null]
          .filter(Boolean).join(" · "))))));
  }
  if (!projects.length) box.append(none("No projects yet."));
  return box;
}

export async function showAllNotes(state) {
  const offset = Math.max(0, parseInt(state.offset || "0", 10) || 0);
  const data = await api("/api/notes?limit=20&offset=" + offset);
  put(el("h1", {}, "All notes"), el("section", { class: "list" }, data.cards.map((c) => resultCard(c, { project: true }))),
    data.cards.length ? null : none("No more notes."),
    el("p", { class: "pager" }, offset ? link({ view: "notes", offset: Math.max(0, offset - 20) }, "← Newer") : null, " ",
      data.cards.length === 20 ? link({ view: "notes", offset: offset + 20 }, "Older →") : null));
}

function attemptRow(a) {
  return el("div", { class: "row-item" },
    el("div", {}, link({ attempt: a.id }, a.id), " ", el("span", { class: "outcome " + (a.ended_at ? a.outcome : "running") },
      a.ended_at ? a.outcome : "running")),
    el("div", { class: "meta" }, [a.author, a.model, "started " + when(a.started_at),
      a.ended_at ? "ended " + when(a.ended_at) : null, plural(a.notes || 0, "note")].filter(Boolean).join(" · ")));
}

export async function showProject(state) {
  const name = state.project;
  const base = "/api/projects/" + encodeURIComponent(name);
  const [brief, attempts, projects, timeline] = await Promise.all([
    api(base + "/brief"), api(base + "/attempts"), api("/api/projects"), picture(base + "/timeline.svg", "attempts over time"),
  ]);
  const project = projects.projects.find((p) => p.name === name) || { name };
  put(el("h1", {}, name), el("div", { class: "meta" }, [project.campaign ? "campaign " + project.campaign : null,
    project.private ? "private" : null, project.notes !== undefined ? plural(project.notes, "note") : null]
    .filter(Boolean).join(" · ")), await searchForm({ scope: "project", mode: "keyword" }, project));
  if (timeline) add(el("h2", {}, "Attempts over time"), timeline);
  if (brief.digest) add(el("h2", {}, "Digest"), resultCard(brief.digest));
  const recent = brief.recent || [];
  add(el("div", { class: "columns" },
    el("section", { class: "list" }, el("h2", {}, "Recent notes"), recent.map((c) => resultCard(c)),
      recent.length ? null : none("No notes yet.")),
    el("section", { class: "list side" }, el("h2", {}, "Attempts"), attempts.attempts.map(attemptRow),
      attempts.attempts.length ? null : none("No attempts yet."))));
}

export async function showAttempt(state) {
  const id = state.attempt;
  const base = "/api/attempts/" + encodeURIComponent(id);
  const [attempt, notes, reads, drawn] = await Promise.all([
    api(base), api("/api/notes?limit=100&attempt_id=" + encodeURIComponent(id)), api(base + "/reads"),
    picture(base + "/picture.svg", "the attempt over time"),
  ]);
  put(el("h1", {}, "Attempt " + attempt.id),
    el("div", { class: "meta" }, "on ", link({ project: attempt.project }, attempt.project),
      [attempt.author, attempt.model, "started " + when(attempt.started_at),
        attempt.ended_at ? "ended " + when(attempt.ended_at) + " · " + attempt.outcome : "running"]
        .filter(Boolean).map((t) => " · " + t)),
    drawn, attempt.ended_at ? null : writePanel(attempt.id),
    el("div", { class: "columns" },
      el("section", { class: "list" }, el("h2", {}, "Notes written (" + notes.cards.length + ")"),
        notes.cards.map((c) => resultCard(c))),
      el("section", { class: "list side" }, el("h2", {}, "Notes read (" + reads.reads.length + ")"),
        reads.reads.length ? el("ul", { class: "reads" }, reads.reads.map((r) => el("li", {},
          r.title != null ? link({ note: r.note_id }, r.title) : el("span", { class: "muted" }, r.note_id + " (deleted)"),
          el("div", { class: "meta" }, when(r.at))))) : none("none recorded"))));
}

export async function showSearch(state) {
  const scope = state.scope || "project";
  const params = new URLSearchParams({ q: state.q || "", mode: state.mode || "keyword", limit: "20" });
  if (scope === "project" && state.project) params.set("project", state.project);
  if (scope === "campaign" && state.campaign) params.set("campaign", state.campaign);
  if (state.kind) params.set("kind", state.kind);
  if (state.tag) params.set("tags", state.tag);
  const project = state.project ? { name: state.project, campaign: state.campaign } : null;
  put(el("h1", {}, "Search"), await searchForm(state, project));
  if (!state.q && scope !== "project") {
    add(none("Give search words to search beyond one project."));
    return;
  }
  const data = await api("/api/notes/search?" + params.toString());
  const opts = { project: scope !== "project", found: true };
  if (!data.cards.length) add(none("No notes found."));
  if (data.mode === "both") {
    // The two engines side by side, unfused: the exact list is always there beside the semantic one.
    const cols = el("div", { class: "both" });
    for (const m of ["keyword", "semantic"]) {
      const cards = data.cards.filter((c) => c.mode === m);
      cols.append(el("section", { class: "list", "data-mode": m }, el("h2", {}, m === "keyword" ? "Keyword (exact)" : "Semantic"),
        cards.length ? cards.map((c) => resultCard(c, opts)) : none("none")));
    }
    add(cols);
  } else {
    add(el("section", { class: "list" }, data.cards.map((card) => resultCard(card, opts))));
  }
  if (data.not_embedded) add(none(plural(data.not_embedded, "note") + " not embedded yet"));
}

export async function showTags(state) {
  const data = await api("/api/tags");
  put(el("h1", {}, "Tags"), el("div", { class: "tags" }, data.tags.map((t) =>
    link({ view: "tags", tag: t.tag }, el("span", { class: "chip" }, `#${t.tag} ${t.count}`)))));
  if (!data.tags.length) add(none("No tags yet."));
  if (state.tag) {
    const found = await api("/api/tags?notes=1&tag=" + encodeURIComponent(state.tag));
    add(el("h2", {}, "#" + state.tag), el("section", { class: "list" }, (found.notes || []).map((n) =>
      el("article", { class: "card" }, el("h3", {}, link({ note: n.id }, n.title || n.id), tagChips(n.tags)),
        n.summary ? el("p", { class: "summary" }, n.summary) : null))));
  }
}
