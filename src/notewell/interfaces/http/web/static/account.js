// Who the page is signed in as, in the header, and signing in and out.
//
// On a loopback server the person at the keyboard signs in with the one-time link `notewell serve`
// prints (the Sign in button prints a new one there); anyone may type a token instead. Either way
// the server answers with an HttpOnly session cookie: the page never keeps a secret, and signing
// out ends the session on the server.

import { api, forgetKinds, onSessionEnded, send } from "./api.js";
import { el, render, say, when } from "./dom.js";

const box = document.getElementById("account");
let who = { signed_in: false, links: false };

export function signedIn() { return who.signed_in; }
export function mayWrite() { return who.signed_in && !who.read_only; }
export function canPrintLinks() { return who.links; }

export async function loadWho() {
  try {
    who = await api("/api/session");
  } catch (err) {
    who = { signed_in: false, links: false };
  }
  draw();
}

// The server said the session ended (expired, signed out elsewhere, the server restarted).
onSessionEnded(() => { if (who.signed_in) loadWho(); });

function role() { return who.owner ? "owner" : who.read_only ? "read-only" : null; }

function draw() {
  if (who.signed_in) {
    const out = el("button", { type: "button", class: "quiet" }, "Sign out");
    out.addEventListener("click", signOut);
    const until = who.ends_at ? "until " + when(who.ends_at) + " UTC" : null;
    box.replaceChildren(el("span", { class: "who", title: until }, "Signed in as ",
      el("strong", { id: "who" }, who.name), role() ? " · " + role() : ""), out);
    return;
  }
  const input = el("input", { type: "password", placeholder: "token (nwt_…)", "aria-label": "token", autocomplete: "off" });
  const form = el("form", { class: "token" }, input, el("button", { type: "submit" }, "Use token"));
  form.addEventListener("submit", (e) => { e.preventDefault(); signInWith(input.value.trim()); });
  if (!who.links) {
    box.replaceChildren(el("span", { class: "who muted" }, "Not signed in"), form);
    return;
  }
  const button = el("button", { type: "button", class: "primary" }, "Sign in");
  button.addEventListener("click", askForLink);
  box.replaceChildren(el("span", { class: "who muted" }, "Not signed in"), button,
    el("details", { class: "token" }, el("summary", {}, "Use a token"), form));
}

async function signInWith(secret) {
  if (!secret) return;
  try {
    who = await send("POST", "/api/session", { token: secret });
  } catch (err) {
    say("Signing in failed: " + err.message, "error");
    return;
  }
  forgetKinds();
  draw();
  await render();
}

async function signOut() {
  try {
    who = await api("/api/session", { method: "DELETE" });
  } catch (err) {
    say("Signing out failed: " + err.message, "error");
    return;
  }
  forgetKinds();
  draw();
  await render();
  say("Signed out.");
}

export async function askForLink() {
  try {
    const printed = await send("POST", "/api/session/link", {});
    say("A sign-in link was printed in the terminal where notewell serve runs. Open it in this browser: it works once, for " +
      Math.round(printed.expires_in / 60) + " minutes.");
  } catch (err) {
    say(err.message, "error");
  }
}

// What an earlier page kept: a token in localStorage, for good. Swapped for a session, then dropped.
export async function forgetStoredToken() {
  const old = localStorage.getItem("notewell-token");
  if (old === null) return;
  localStorage.removeItem("notewell-token");
  try {
    await send("POST", "/api/session", { token: old });
  } catch (err) {
    // no longer valid: nothing to keep
  }
}

// Where a sign-in link that did not work lands: said inside the page, with a way to get a new one.
export function signInFailedNotice() {
  const again = who.links ? el("button", { type: "button" }, "Print a new link") : null;
  if (again) again.addEventListener("click", askForLink);
  return el("div", { class: "notice error", role: "alert" },
    "That sign-in link has been used already or has expired. ", again);
}
