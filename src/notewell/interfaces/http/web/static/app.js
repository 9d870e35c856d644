// notewell's web page: recent notes and projects, a project, an attempt, search, a note with its
// revisions, tags; signed in, writing notes (a form, or .md files dropped on it) and editing them.
// State lives in the URL. Note text is untrusted: see dom.js for how it goes into the page.

import { forgetStoredToken, loadWho, signInFailedNotice } from "./account.js";
import { searchForm } from "./cards.js";
import { el, link, noticeNext, onRender, put } from "./dom.js";
import { showNote } from "./note.js";
import { showAllNotes, showAttempt, showHome, showProject, showSearch, showTags } from "./views.js";

function errorTitle(state, err) {
  if (err.code === "not_found") {
    if (state.note) return "Note not found";
    if (state.attempt) return "Attempt not found";
    if (state.project && !("q" in state)) return "Project not found";
  }
  return "q" in state || state.scope ? "Search" : "Something went wrong";
}

// An error keeps the page: its heading, the search box, and the error said inside, with a way on.
async function showError(state, err) {
  const project = state.project ? { name: state.project, campaign: state.campaign } : null;
  const form = await searchForm({ scope: project ? "project" : "all", mode: "keyword", ...state }, project);
  put(el("h1", {}, errorTitle(state, err)), form,
    el("div", { class: "notice error", role: "alert" }, el("strong", {}, String(err.message || err)),
      err.code ? el("span", { class: "code" }, err.code) : null),
    el("p", {}, link({}, "← Back to the start page")));
}

async function draw() {
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
    await showError(state, err);
  }
}
onRender(draw);

document.addEventListener("click", (e) => {
  const a = e.target.closest("a[data-link]");
  if (!a || e.metaKey || e.ctrlKey || e.shiftKey || a.origin !== location.origin) return;
  e.preventDefault();
  history.pushState(null, "", a.href);
  draw();
});
window.addEventListener("popstate", draw);

async function start() {
  // A sign-in link that did not work lands here: said in the page, and the address tidied.
  const failed = new URLSearchParams(location.search).get("signin") === "failed";
  if (failed) history.replaceState(null, "", "/");
  await forgetStoredToken();
  await loadWho();
  if (failed) noticeNext(signInFailedNotice());
  await draw();
}
start();
