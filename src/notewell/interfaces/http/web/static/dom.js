// Building the page out of untrusted text: every value goes in as a text node (el, fill), never as
// markup. The only markup the page inserts is what the server made with every text escaped (a
// note's body; the pictures), and that is done where it is fetched, not here.

export const main = document.getElementById("main");

export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else node.setAttribute(k, v);
  }
  return fill(node, children);
}

// Children without the empty ones: append prints null and undefined as text.
function kids(children) { return children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false); }
export function fill(node, children) {
  for (const c of kids(children)) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

// A message shown at the top of the next view, once (what a write did, after the lists refresh).
let notice = null;
export function noticeNext(node) { notice = node; }

export function put(...children) {
  main.replaceChildren();
  if (notice) fill(main, [notice]);
  notice = null;
  fill(main, children);
}
export function add(...children) { fill(main, children); }

// A message at the top of the view in place, without drawing it again.
export function say(text, kind) {
  const old = main.querySelector(":scope > .notice");
  if (old) old.remove();
  main.prepend(el("div", { class: "notice " + (kind || ""), role: kind === "error" ? "alert" : "status" }, text));
}

export function link(params, ...children) {
  const href = "/?" + new URLSearchParams(params).toString();
  return el("a", { href, "data-link": "1" }, ...children);
}

// One time format everywhere on the page, as the pictures write it: UTC, to the minute.
export function when(iso) { return iso ? iso.slice(0, 16).replace("T", " ") : ""; }
export function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }
export function size(bytes) {
  if (bytes === null || bytes === undefined) return "";
  return bytes < 1024 ? bytes + " B" : (bytes / 1024).toFixed(bytes < 10240 ? 1 : 0) + " KB";
}

// Markdown's syntax left out of a snippet (fences, headings, table rules and pipes, link targets,
// inline code marks); the server has already dropped the note's own ** so every ** is a match.
export function plain(text) {
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
export function snippet(text) {
  const p = el("p", { class: "snippet" });
  String(text || "").split("**").forEach((part, i) => p.append(i % 2 ? el("mark", {}, part) : plain(part)));
  return p;
}

export function tagChips(tags) {
  return (tags || []).map((t) => link({ view: "tags", tag: t }, el("span", { class: "chip" }, "#" + t)));
}

// Where the page goes next: set by app.js, which draws the views.
let drawer = () => {};
export function onRender(fn) { drawer = fn; }
export function render() { return drawer(); }
export function go(params) {
  history.pushState(null, "", "/?" + new URLSearchParams(params).toString());
  return render();
}
