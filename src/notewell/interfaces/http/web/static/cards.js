// The pieces several views share: a note's card, the search form, and the form that writes a note.

import { forgetKinds, send, storeKinds } from "./api.js";
import { mayWrite } from "./account.js";
import { el, go, link, noticeNext, plain, render, snippet, tagChips, when } from "./dom.js";

// A note's card. found: a search hit (its mode and older revision are said); project: name it.
export function resultCard(card, { project = false, found = false } = {}) {
  const older = found && card.matched_revision != null;
  // A card found through an older revision opens that revision, where its words are.
  const target = older ? { note: card.id, revision: card.matched_revision } : { note: card.id };
  const outcome = card.attempt_outcome ? "attempt " + card.attempt_outcome : card.attempt_id ? "attempt running" : null;
  const meta = [project && card.project ? link({ project: card.project }, card.project) : null, card.author, card.model,
    card.updated_at ? "updated " + when(card.updated_at) : null,
    outcome && card.attempt_id ? link({ attempt: card.attempt_id }, outcome) : null,
    found ? card.mode : null, older ? "matched in revision " + card.matched_revision : null].filter(Boolean);
  // Only a keyword search's snippet marks its matches with **; a listed note's is its text.
  const text = found && card.mode !== "semantic" ? snippet(card.snippet) : el("p", { class: "snippet" }, preview(card.snippet));
  // Superseded: a later note (one this viewer may see) corrects it; the chip opens the newest.
  const later = card.superseded_by || [];
  const superseded = later.length ? link({ note: later[0] }, el("span", { class: "chip superseded",
    title: "a later note corrects it: " + later.join(", ") }, "superseded")) : null;
  return el("article", { class: later.length ? "card superseded" : "card" },
    el("h3", {}, link(target, card.title || card.id),
      card.kind ? el("span", { class: "chip kind" }, card.kind) : null, superseded, tagChips(card.tags)),
    el("div", { class: "meta" }, meta.map((m, i) => [i ? " · " : "", m])), text);
}

// A note's opening as text: Markdown's syntax left out, bold markers too.
function preview(text) { return plain(text).replace(/\*\*(\S(?:[^*]*\S)?)\*\*/g, "$1"); }

export async function searchForm(state, project) {
  const input = el("input", { type: "search", name: "q", value: state.q || "", placeholder: "Search notes",
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
  const form = el("form", { class: "search", role: "search" }, input, scope, mode, kind, el("button", { type: "submit" }, "Search"));
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

function saved(notes, errors) {
  return el("div", { class: "notice", role: "status" }, "Saved ",
    notes.map((n, i) => [i ? ", " : "", link({ note: n.id }, n.title || n.id)]), ".",
    errors.map((e) => el("div", { class: "error" }, e)));
}

// Signed in with the right to write: write a note here, or drop .md files on the form (each one
// note). Once one is saved the view is drawn again, so that its lists show it; what was refused
// is said beside what was saved.
export function writePanel(attempt) {
  if (!mayWrite()) return null;
  const text = el("textarea", { name: "text", rows: "3", "aria-label": "new note",
    placeholder: "---\ntitle: …\nkind: finding\n---\nWhat you found. Or drop .md files here." });
  const said = el("div", { class: "said", "aria-live": "polite" });
  const form = el("form", { class: "write" }, el("h2", {}, "New note"), text,
    el("div", { class: "row" }, el("button", { type: "submit", class: "primary" }, "Add note"), said));
  async function saveAll(items) {
    const done = [], errors = [];
    for (const [body, name] of items) {
      if (body === null) { errors.push(name + ": not a Markdown file (.md)"); continue; }
      const payload = { text: body };
      if (attempt) payload.attempt_id = attempt;
      try {
        done.push(await send("POST", "/api/notes", payload));
      } catch (err) {
        errors.push((name ? name + ": " : "") + err.message);
      }
    }
    if (!done.length) {
      said.replaceChildren(...errors.map((e) => el("div", { class: "error" }, e)));
      return;
    }
    forgetKinds();
    noticeNext(saved(done, errors));
    await render();
  }
  form.addEventListener("submit", (e) => { e.preventDefault(); saveAll([[text.value, ""]]); });
  form.addEventListener("dragover", (e) => { e.preventDefault(); form.classList.add("dropping"); });
  form.addEventListener("dragleave", () => form.classList.remove("dropping"));
  form.addEventListener("drop", async (e) => {
    e.preventDefault();
    form.classList.remove("dropping");
    const items = [];
    for (const file of Array.from(e.dataTransfer.files || [])) {
      items.push([/\.(md|markdown|txt)$/i.test(file.name) ? await file.text() : null, file.name]);
    }
    await saveAll(items);
  });
  return form;
}
