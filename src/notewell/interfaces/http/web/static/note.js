// A note: its header as chips (what it builds on by title), its body, its links, its revisions with
// dates and authors and what changed between any two, and editing it with the revision check.

import { api, picture, send } from "./api.js";
import { askForLink, canPrintLinks, signedIn } from "./account.js";
import { el, fill, go, link, put, render, size, tagChips, when } from "./dom.js";

function frozenReason(note) {
  const a = note.attempt;
  if (!a || !a.ended_at) return null;
  return "Frozen: its attempt " + a.id + " ended (" + (a.outcome || "ended") + ") on " + when(a.ended_at) +
    "; the notes of an ended attempt no longer change.";
}

// What the note builds on, by title. The titles come from the links the server lets this viewer
// see: an end it may not see reads as one nothing answers to, with no title, as the server says it.
function buildsOnChips(note, links) {
  const ends = new Map(((links && links.builds_on) || []).map((n) => [n.id, n]));
  return (note.builds_on || []).map((id) => {
    const end = ends.get(id);
    if (!end || end.missing || !end.title) {
      return el("span", { class: "chip missing", title: "nothing this page can show: deleted, never written, or not yours to see" },
        "builds on " + id);
    }
    const target = end.kind === "attempt" ? { attempt: id } : { note: id };
    return link(target, el("span", { class: "chip link", title: id }, "builds on: " + end.title));
  });
}

// The later notes correcting this one, by title (from the links this viewer may see).
function supersededNotice(note, links) {
  const later = note.superseded_by || [];
  if (!later.length) return null;
  const ends = new Map(((links && links.superseded_by) || []).map((n) => [n.id, n]));
  return el("p", { class: "notice superseded" }, "Superseded: a later note corrects this one. Read ",
    later.map((id, i) => [i ? ", " : "", link({ note: id }, (ends.get(id) && ends.get(id).title) || id)]), " first.");
}

function editControls(note, current, frozen) {
  if (!current || frozen) return null;
  if (note.may_edit) return el("p", { class: "actions" }, el("button", { type: "button", id: "edit" }, "Edit"));
  if (signedIn()) return el("p", { class: "muted small" }, "You cannot edit this note: " + note.edit_refusal);
  const button = canPrintLinks() ? el("button", { type: "button", class: "quiet" }, "Sign in") : null;
  if (button) button.addEventListener("click", askForLink);
  return el("p", { class: "muted small" }, "Sign in to edit notes. ", button);
}

function revisionList(note, history, state) {
  const rows = (history && history.revisions) || [];
  const kept = rows.filter((r) => r.op !== "delete" && r.kept).map((r) => r.revision);
  const items = rows.slice().reverse().map((r) => {
    const shown = r.revision === note.revision && !state.from && !state.to;
    const name = r.op === "delete" ? "deleted" : shown ? el("strong", {}, "r" + r.revision)
      : link({ note: note.id, revision: r.revision }, "r" + r.revision);
    const changes = r.revision > 1 && kept.includes(r.revision) && kept.includes(r.revision - 1)
      ? link({ note: note.id, from: r.revision - 1, to: r.revision }, "changes") : null;
    return el("li", {}, el("div", {}, name, r.current ? el("span", { class: "muted" }, " current") : null, " ", changes),
      el("div", { class: "meta" }, [when(r.at), r.author || "unknown author", r.op, size(r.size)].filter(Boolean).join(" · ")));
  });
  if (kept.length < 2) return el("section", {}, el("h2", {}, "Revisions"), el("ol", { class: "revisions" }, items));
  const pick = (label, chosen) => el("select", { "aria-label": label }, kept.map((n) =>
    el("option", { value: String(n), selected: n === chosen }, "r" + n)));
  const to = Number(state.to) || kept[kept.length - 1];
  const from = Number(state.from) || kept[Math.max(0, kept.indexOf(to) - 1)];
  const older = pick("compare from", from), newer = pick("compare to", to);
  const form = el("form", { class: "compare" }, older, " → ", newer, " ", el("button", { type: "submit" }, "Compare"));
  form.addEventListener("submit", (e) => { e.preventDefault(); go({ note: note.id, from: older.value, to: newer.value }); });
  return el("section", {}, el("h2", {}, "Revisions"), el("ol", { class: "revisions" }, items), form);
}

function sideName(side) {
  return "r" + side.revision + " (" + [when(side.at), side.author].filter(Boolean).join(", ") + ")";
}

// The server's diff: each line put in as text, so a note's markup is shown, never run.
function diffView(note, d) {
  const table = el("table", { class: "diff" },
    el("colgroup", {}, el("col", { class: "num" }), el("col", { class: "num" }), el("col", {})));
  for (const hunk of d.hunks) {
    table.append(el("tr", { class: "hunk" }, el("td", { colspan: "3" }, "line " + hunk.old_start + " → " + hunk.new_start)));
    for (const line of hunk.lines) {
      const cls = line.op === "+" ? "add" : line.op === "-" ? "del" : "same";
      table.append(el("tr", { class: cls }, el("td", { class: "num" }, line.old === null ? "" : line.old),
        el("td", { class: "num" }, line.new === null ? "" : line.new),
        el("td", { class: "text" }, (line.op === "=" ? " " : line.op) + " " + line.text)));
    }
  }
  return el("section", { class: "changes", "aria-label": "changes" },
    el("h2", {}, "Changes from " + sideName(d.from) + " to " + sideName(d.to)),
    el("p", { class: "meta" }, el("span", { class: "added" }, "+" + d.added), " ", el("span", { class: "removed" }, "−" + d.removed),
      " lines · ", link({ note: note.id }, "back to the note")),
    d.hunks.length ? table : el("p", { class: "muted" }, "The two texts are the same."),
    d.coarse ? el("p", { class: "muted small" }, "The changed part is long: shown whole, as removed and then added.") : null,
    d.truncated ? el("p", { class: "muted small" }, "More lines changed than are listed here.") : null);
}

// `merging`: an edit that conflicted ({ mine, from }), shown beside the note as it now is.
export async function showNote(state, merging) {
  const base = "/api/notes/" + encodeURIComponent(state.note);
  const rev = state.revision ? "&revision=" + encodeURIComponent(state.revision) : "";
  const comparing = state.from || state.to;
  const range = new URLSearchParams();
  if (state.from) range.set("from", state.from);
  if (state.to) range.set("to", state.to);
  const [note, links, graph, diff] = await Promise.all([
    api(base + "?render=html" + rev),
    api(base + "/links").catch(() => null),
    picture(base + "/graph.svg", "what it builds on and what builds on it"),
    comparing ? api(base + "/diff?" + range.toString()) : null,
  ]);
  const history = note.revisions > 1 ? await api(base + "/history").catch(() => null) : null;
  const current = note.revision === note.revisions;
  const frozen = frozenReason(note);
  const editor = el("div", { class: "editor" });
  const body = el("div", { class: "body" });
  body.innerHTML = note.body_html; // rendered by the server: raw HTML escaped, unsafe links dropped
  // A body that opens with the title as its heading would say it twice under the page's own.
  const first = body.firstElementChild;
  if (first && first.tagName === "H1" && first.textContent.trim() === String(note.title).trim()) first.remove();
  put(
    el("h1", {}, note.title),
    el("div", { class: "meta" }, [note.author, "updated " + when(note.updated_at),
      "revision " + note.revision + " of " + note.revisions].filter(Boolean).join(" · "),
      note.attempt ? [" · ", link({ attempt: note.attempt.id }, "attempt " + note.attempt.id), " on ",
        link({ project: note.attempt.project }, note.attempt.project)] : null),
    el("div", { class: "chips" },
      note.kind ? el("span", { class: "chip kind" }, note.kind) : null, tagChips(note.tags),
      note.model ? el("span", { class: "chip" }, "model: " + note.model) : null, buildsOnChips(note, links)),
    note.extra && note.extra.length ? el("div", { class: "extras" }, note.extra.join("\n")) : null,
    frozen ? el("p", { class: "frozen" }, frozen) : null,
    supersededNotice(note, links),
    !current && !comparing ? el("p", { class: "notice" }, "An earlier revision. ", link({ note: note.id }, "The current one →")) : null,
    comparing || merging ? null : editControls(note, current, frozen),
    editor,
    el("div", { class: "note-layout" },
      el("div", { class: "main-column" }, diff ? diffView(note, diff) : el("article", { class: "note" }, body),
        graph ? el("section", {}, el("h2", {}, "Links"), graph) : null),
      el("aside", {},
        note.backlinks && note.backlinks.length ? el("section", {}, el("h2", {}, "Built on by"),
          el("ul", { class: "plain" }, note.backlinks.map((b) => el("li", {}, link({ note: b.id }, b.title || b.id))))) : null,
        note.revisions > 1 ? revisionList(note, history, state) : null)));
  const button = document.getElementById("edit");
  if (button) button.addEventListener("click", () => { button.remove(); openEditor(editor, note, note.text); });
  if (merging) showConflict(editor, note, merging);
}

// A conflict draws the whole note again at its current revision (header, body, revisions), so
// nothing on the page still says the revision the edit started from is the current one.
async function redrawMerging(said, id, merging) {
  history.replaceState(null, "", "/?" + new URLSearchParams({ note: id }).toString());
  try {
    await showNote({ note: id }, merging);
  } catch (err) {
    said.replaceChildren(el("p", { class: "error" }, err.message));
  }
}

// Editing with the revision check: the text is saved only over the revision it was read at; an
// edit made meanwhile (by an agent) is shown beside this one, never overwritten unseen.
function openEditor(box, note, text) {
  const area = el("textarea", { rows: "16", "aria-label": "note text" });
  area.value = text;
  const said = el("div", { "aria-live": "polite" });
  const save = el("button", { type: "button", class: "primary" }, "Save");
  const cancel = el("button", { type: "button" }, "Cancel");
  box.replaceChildren(fill(el("div", {}), [area, el("div", { class: "row" }, save, cancel), said]));
  area.focus();
  cancel.addEventListener("click", () => render());
  save.addEventListener("click", async () => {
    said.replaceChildren();
    try {
      const saved = await send("PATCH", "/api/notes/" + encodeURIComponent(note.id),
        { text: area.value, base_revision: note.revision });
      go({ note: saved.id });
    } catch (err) {
      if (err.code === "conflict") await redrawMerging(said, note.id, { mine: area.value, from: note.revision });
      else said.append(el("p", { class: "error" }, err.message));
    }
  });
}

// `now` is the note as it is now; `merging.from` the revision the edit started from.
function showConflict(box, now, merging) {
  const note = { id: now.id, revision: merging.from };
  const theirs = el("pre", { class: "theirs" }, now.text);
  const area = el("textarea", { rows: "14", "aria-label": "your text" });
  area.value = merging.mine;
  const keep = el("button", { type: "button", class: "primary" }, "Save mine over revision " + now.revision);
  const drop = el("button", { type: "button" }, "Discard mine");
  const said = el("div", {});
  box.replaceChildren(fill(el("div", { class: "conflict" }), [
    el("p", { class: "error" }, "The note changed while you edited it: it is now at revision " + now.revision +
      " (you started from " + note.revision + "). Nothing was saved. Merge the two, then save."),
    el("div", { class: "both" },
      el("section", {}, el("h2", {}, "Your text"), area),
      el("section", {}, el("h2", {}, "Revision " + now.revision + " (saved meanwhile)"), theirs)),
    el("div", { class: "row" }, keep, drop), said]));
  area.focus();
  drop.addEventListener("click", () => go({ note: note.id }));
  keep.addEventListener("click", async () => {
    try {
      await send("PATCH", "/api/notes/" + encodeURIComponent(note.id), { text: area.value, base_revision: now.revision });
      go({ note: note.id });
    } catch (err) {
      if (err.code === "conflict") await redrawMerging(said, note.id, { mine: area.value, from: now.revision });
      else said.replaceChildren(el("p", { class: "error" }, err.message));
    }
  });
}
