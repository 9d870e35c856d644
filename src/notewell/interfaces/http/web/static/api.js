// Talking to the server. The page holds no secret: who it is signed in as lives in an HttpOnly
// session cookie the browser sends with each request (see account.js), never in its storage.

import { el } from "./dom.js";

export class ApiError extends Error {
  constructor(code, message, status) { super(message); this.code = code; this.status = status; }
}

// Told when the server says the page's session has ended, so that the header can say so.
let ended = () => {};
export function onSessionEnded(fn) { ended = fn; }

export async function api(path, options) {
  const answer = await fetch(path, options);
  let data = null;
  try { data = await answer.json(); } catch (err) { data = null; } // not JSON: a proxy's page, say
  if (!answer.ok) {
    const e = (data && data.error) || {};
    if (answer.status === 401) ended();
    throw new ApiError(e.code || "error", e.message || "the server answered " + answer.status, answer.status);
  }
  return data;
}

export function send(method, path, body) {
  return api(path, { method, headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
}

// A picture the server drew (SVG, every text in it escaped), or nothing when it has none to draw.
export async function picture(path, label) {
  const answer = await fetch(path);
  if (!answer.ok) return null;
  const text = await answer.text();
  if (!text.trim()) return null;
  const doc = new DOMParser().parseFromString(text, "image/svg+xml");
  const svg = doc.documentElement;
  if (svg.nodeName !== "svg" || doc.getElementsByTagName("parsererror").length) return null;
  return el("figure", { class: "picture", "aria-label": label }, document.importNode(svg, true));
}

let kindsCache = null;
// The kinds this store's notes have (for the search form), asked once until a write.
export async function storeKinds() {
  if (kindsCache === null) {
    try {
      const summary = await api("/api/summary");
      kindsCache = (summary.by_kind || []).map((k) => k.kind).filter(Boolean).sort();
    } catch (err) {
      return []; // the form still works without them; the view says what went wrong
    }
  }
  return kindsCache;
}
export function forgetKinds() { kindsCache = null; }
