// muxd web, the pane page (/pane/N): keeps the screen live from its event stream and sends the
// input box (a prompt, typed text or a key button) with the session's CSRF token in a header.
// The screen's HTML comes from the daemon already escaped: text inside <span class="..."> only.
"use strict";

(function () {
  const csrfMeta = document.querySelector('meta[name="csrf-token"]');
  const csrf = csrfMeta ? csrfMeta.getAttribute("content") : "";

  // The executions table again: after a submit, and when the pane's work changes (its agent's
  // state, an execution's end), as the stream says. No change, no fetch.
  function refreshExecutions() {
    const box = document.getElementById("pane-executions");
    if (!box) return;
    fetch(box.dataset.source, { credentials: "same-origin" })
      .then((response) => (response.ok ? response.text() : null))
      .then((html) => {
        if (html === null) return;
        box.innerHTML = html;  // built by the server, every value escaped
        box.dataset.updates = String(Number(box.dataset.updates || "0") + 1);
      });
  }

  function follow(screen) {
    const live = document.getElementById("live");
    const source = new EventSource(screen.dataset.stream + "?after=" + encodeURIComponent(screen.dataset.version)
                                   + "&work=" + encodeURIComponent(screen.dataset.work)
                                   + "&cursor=" + encodeURIComponent(screen.dataset.cursor));
    screen.dataset.connected = "connecting";
    source.addEventListener("open", () => { screen.dataset.connected = "live"; });
    source.addEventListener("screen", (event) => {
      const frame = JSON.parse(event.data);
      screen.innerHTML = frame.html;
      screen.dataset.version = String(frame.version);
      screen.dataset.updates = String(Number(screen.dataset.updates || "0") + 1);
    });
    source.addEventListener("work", (event) => {
      const state = document.querySelector(".pane-facts .state");
      if (state) state.textContent = JSON.parse(event.data).state || "no agent";
      refreshExecutions();
    });
    source.addEventListener("ended", (event) => {
      source.close();
      refreshExecutions();
      screen.dataset.connected = "ended";
      if (live) {
        live.textContent = JSON.parse(event.data).reason;
        live.classList.add("live-ended");
      }
    });
    source.addEventListener("error", () => { screen.dataset.connected = "reconnecting"; });
    return source;
  }

  function send(form, event) {
    event.preventDefault();
    const button = event.submitter;
    const body = new FormData(form, button || undefined);  // a key button's name=value too
    const result = document.getElementById("input-result");
    const buttons = form.querySelectorAll("button");
    buttons.forEach((b) => { b.disabled = true; });
    fetch(button && button.hasAttribute("formaction") ? button.formAction : form.action, {
      method: "POST", body: body, credentials: "same-origin",
      headers: { "X-CSRF-Token": csrf, "Accept": "application/json" },
    }).then((response) => response.json().catch(() => ({ ok: false, message: response.statusText })))
      .then((answer) => {
        result.textContent = answer.ok ? answer.message : answer.code + ": " + answer.message;
        result.classList.toggle("failed", !answer.ok);
        if (answer.ok && !(button && button.name === "key")) form.elements.text.value = "";
        if (answer.ok) refreshExecutions();
      })
      .catch((error) => { result.textContent = String(error); result.classList.add("failed"); })
      .finally(() => {
        buttons.forEach((b) => { b.disabled = false; });
        form.elements.text.focus();
      });
  }

  document.addEventListener("DOMContentLoaded", () => {
    const screen = document.getElementById("screen");
    if (screen && screen.dataset.stream) window.muxdWhileSeen(screen, follow);  // (app.js)
    const form = document.getElementById("pane-input");
    if (form) form.addEventListener("submit", (event) => send(form, event));
  });
})();
