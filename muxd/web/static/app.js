// muxd web: the pages' script (the CSP allows no inline one). It keeps a board (the agents grid,
// the task board) live from its data-live stream (server-sent events), counts the times in state
// on, and sends the forms marked data-async with the session's CSRF token in a header, showing
// the answer in #status.
"use strict";

(function () {
  const RELOAD_AFTER_ENDED_MS = 2000;
  const csrfMeta = document.querySelector('meta[name="csrf-token"]');
  const csrf = csrfMeta ? csrfMeta.getAttribute("content") : "";

  // As muxd.units.duration: the largest whole unit.
  function duration(seconds) {
    seconds = Math.max(0, Math.floor(seconds));
    const units = [["d", 86400], ["h", 3600], ["m", 60]];
    for (const [unit, size] of units) {
      if (seconds >= size) return Math.floor(seconds / size) + unit;
    }
    return seconds + "s";
  }

  // A card's time in state: its data-since against the board's data-now (the server's clock when it
  // drew the board), counted on from the board's arrival in this browser.
  function stampTimes(root) {
    root.querySelectorAll(".board").forEach((board) => { board.dataset.arrived = String(Date.now()); });
    tick();
  }

  function tick() {
    document.querySelectorAll(".board[data-now][data-arrived]").forEach((board) => {
      const serverNow = Number(board.dataset.now) + (Date.now() - Number(board.dataset.arrived)) / 1000;
      board.querySelectorAll("article[data-since] .for").forEach((el) => {
        el.textContent = duration(serverNow - Number(el.closest("article").dataset.since));
      });
    });
  }

  // The sections and cards of a board in order: when a new board has the same, only the cards
  // whose version (data-v) changed are replaced, so what a person is about to click stays put.
  function shape(board) {
    return Array.from(board.querySelectorAll("section, article")).map((e) => e.id || e.className).join("|");
  }

  // A form a person may be filling in (a review's comment) outlives a redraw that draws it again:
  // the redraw gets the form already on the page, with what was typed and where the focus is.
  // Only forms with a field to fill in: buttons alone (an answer) are always drawn fresh.
  function keepForms(old, fresh) {
    const key = (form) => form.getAttribute("action") + " " + form.className;
    const fillable = (form) => form.querySelector('textarea, input:not([type="hidden"])') !== null;
    const shown = new Map(Array.from(old.querySelectorAll("form")).filter(fillable).map((form) => [key(form), form]));
    fresh.querySelectorAll("form").forEach((form) => {
      const same = shown.get(key(form));
      if (same) form.replaceWith(same);
    });
  }

  // The field being typed into keeps the focus and the caret across a redraw that kept its form.
  function keepFocus(grid, redraw) {
    const typing = grid.contains(document.activeElement) ? document.activeElement : null;
    const caret = typing && "selectionStart" in typing ? [typing.selectionStart, typing.selectionEnd] : null;
    redraw();
    if (!typing || !typing.isConnected || document.activeElement === typing) return;
    typing.focus();
    if (caret && caret[0] !== null) typing.setSelectionRange(caret[0], caret[1]);
  }

  function swap(grid, html) {
    const template = document.createElement("template");
    template.innerHTML = html;
    const page = template.content.firstElementChild;
    const shown = grid.firstElementChild;
    if (page && shown && page.dataset.v && page.dataset.v === shown.dataset.v) return;  // unchanged
    keepFocus(grid, () => redraw(grid, template));
  }

  function redraw(grid, template) {
    const fresh = template.content.querySelector(".board");
    const board = grid.querySelector(".board");
    if (!fresh || !board || shape(board) !== shape(fresh)) {
      keepForms(grid, template.content);
      grid.replaceChildren(template.content);
      return;
    }
    board.dataset.now = fresh.dataset.now;
    const headings = board.querySelectorAll("h2");
    fresh.querySelectorAll("h2").forEach((h, i) => {
      if (headings[i].innerHTML !== h.innerHTML) headings[i].innerHTML = h.innerHTML;
    });
    fresh.querySelectorAll("article").forEach((card) => {
      const old = board.querySelector("#" + CSS.escape(card.id));
      if (old && old.dataset.v !== card.dataset.v) { keepForms(old, card); old.replaceWith(card); }
      else if (old && card.dataset.since) old.dataset.since = card.dataset.since;
      else if (old) delete old.dataset.since;
    });
  }

  // A grid from the live feed carries no CSRF token (one feed serves every browser of a token).
  function fillCsrf(root) {
    root.querySelectorAll('input[name="csrf_token"]').forEach((input) => { input.value = csrf; });
  }

  function say(text, failed) {
    const status = document.getElementById("status");
    if (!status) return;
    status.textContent = text;
    status.classList.toggle("failed", Boolean(failed));
  }

  // The tab's title counts the agents that need you, so a background tab says so.
  const baseTitle = document.title;
  function countNeeds(grid) {
    const needs = grid.querySelectorAll(".needs-you article").length;
    document.title = (needs ? "(" + needs + ") " : "") + baseTitle;
  }

  // A hidden tab lets go of its live stream (a browser opens at most 6 connections to one host for
  // all its tabs) and follows again, from what it shows, once seen. `follow(element)` opens the
  // stream and returns it; pane.js uses this too.
  function whileSeen(element, follow) {
    let source = follow(element);
    document.addEventListener("visibilitychange", () => {
      if (element.dataset.connected === "ended") return;
      if (document.hidden && source) {
        source.close();
        source = null;
        element.dataset.connected = "paused";
      } else if (!document.hidden && !source) {
        source = follow(element);
      }
    });
  }
  window.muxdWhileSeen = whileSeen;

  function follow(grid) {
    const source = new EventSource(grid.dataset.live);
    grid.dataset.connected = "connecting";
    source.addEventListener("open", () => { grid.dataset.connected = "live"; });
    source.addEventListener("grid", (event) => {
      swap(grid, event.data);
      fillCsrf(grid);
      countNeeds(grid);
      stampTimes(grid);
      grid.dataset.updates = String(Number(grid.dataset.updates || "0") + 1);
      grid.dataset.connected = "live";
    });
    // The session ended (here or in another tab), the token was revoked or the daemon went: the
    // page is reloaded after a moment, which shows the login page or what the daemon says.
    source.addEventListener("ended", (event) => {
      source.close();
      grid.dataset.connected = "ended";
      say(event.data + " — reloading", true);
      window.setTimeout(() => window.location.reload(), RELOAD_AFTER_ENDED_MS);
    });
    source.addEventListener("error", () => { grid.dataset.connected = "reconnecting"; });
    return source;
  }

  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-async")) return;
    event.preventDefault();
    const buttons = form.querySelectorAll("button");
    buttons.forEach((b) => { b.disabled = true; });
    fetch(form.action, {
      method: "POST", body: new FormData(form), credentials: "same-origin",
      headers: { "X-CSRF-Token": csrf, "Accept": "application/json" },
    }).then((response) => response.json().catch(() => ({ ok: false, message: response.statusText })))
      .then((answer) => say(answer.ok ? answer.message : answer.code + ": " + answer.message, !answer.ok))
      .catch((error) => say(String(error), true))
      .finally(() => buttons.forEach((b) => { b.disabled = false; }));
  });

  document.addEventListener("DOMContentLoaded", () => {
    stampTimes(document);
    const grid = document.getElementById("grid");
    // The agents grid keeps its stream when hidden: its tab's title counts the agents that need you.
    if (grid && grid.dataset.live) {
      if (grid.dataset.background === "keep") follow(grid); else whileSeen(grid, follow);
    }
    window.setInterval(tick, 1000);
  });
})();
