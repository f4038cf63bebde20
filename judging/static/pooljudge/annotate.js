// Pooljudge judging page: one key judges and moves on. No dependencies, no network but our own.
(function () {
  "use strict";
  var root = document.getElementById("judge");
  if (!root) return;
  var help = document.getElementById("help");
  var form = document.getElementById("grade-form");
  var submitting = false;

  // Active time: counted while the page is visible and the annotator did something in the
  // last 30 seconds (reading counts: scrolling, moving the mouse, pressing keys).
  var IDLE_MS = 30000;
  var activeMs = 0;
  var lastInput = Date.now();
  var lastTick = Date.now();
  function touch() { lastInput = Date.now(); }
  ["keydown", "mousemove", "mousedown", "wheel", "scroll", "touchstart"].forEach(function (ev) {
    window.addEventListener(ev, touch, { passive: true });
  });
  setInterval(function () {
    var now = Date.now();
    if (document.visibilityState === "visible" && now - lastInput < IDLE_MS) {
      activeMs += now - lastTick;
    }
    lastTick = now;
  }, 1000);
  function stampActiveTime() {
    var now = Date.now();
    if (document.visibilityState === "visible" && now - lastInput < IDLE_MS) {
      activeMs += now - lastTick;
      lastTick = now;
    }
    document.querySelectorAll(".active-seconds").forEach(function (input) {
      input.value = (activeMs / 1000).toFixed(1);
    });
  }

  function submitOnce(formEl, button) {
    if (submitting || !formEl) return;
    submitting = true;
    stampActiveTime();
    document.querySelectorAll("button, .button").forEach(function (b) { b.setAttribute("disabled", ""); });
    if (button) {
      // keep the chosen grade: a disabled submitter is not sent, so copy it into a hidden field
      var hidden = document.createElement("input");
      hidden.type = "hidden"; hidden.name = button.name; hidden.value = button.value;
      formEl.appendChild(hidden);
      button.classList.add("chosen");
    }
    formEl.submit();
  }

  if (form) {
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      submitOnce(form, ev.submitter || null);
    });
  }
  ["skip-form", "undo-form"].forEach(function (id) {
    var f = document.getElementById(id);
    if (f) f.addEventListener("submit", function (ev) { ev.preventDefault(); submitOnce(f, null); });
  });

  function toggleHelp(show) {
    if (!help) return;
    help.hidden = show === undefined ? !help.hidden : !show;
  }
  var openBtn = document.getElementById("help-open");
  if (openBtn) openBtn.addEventListener("click", function () { toggleHelp(true); });
  var closeBtn = document.getElementById("help-close");
  if (closeBtn) closeBtn.addEventListener("click", function () { toggleHelp(false); });

  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    var tag = (ev.target && ev.target.tagName) || "";
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
    var key = ev.key;
    if (key === "?") { toggleHelp(); ev.preventDefault(); return; }
    if (key === "Escape") {
      if (help && !help.hidden) { toggleHelp(false); }
      else if (root.dataset.resumeUrl) { window.location.href = root.dataset.resumeUrl; }
      ev.preventDefault();
      return;
    }
    if (help && !help.hidden) return;
    var button = form && form.querySelector('button.grade[data-key="' + key + '"]');
    if (button) { ev.preventDefault(); submitOnce(form, button); return; }
    if (key === "s") { var skip = document.getElementById("skip-form"); if (skip) { ev.preventDefault(); submitOnce(skip, null); } return; }
    if (key === "u") { var undo = document.getElementById("undo-form"); if (undo) { ev.preventDefault(); submitOnce(undo, null); } return; }
    if (key === "b") { var back = document.getElementById("back-link"); if (back) { ev.preventDefault(); window.location.href = back.href; } }
  });

  // Keep the lease while the page is open and visible.
  var renewUrl = root.dataset.renewUrl;
  if (renewUrl) {
    var every = parseInt(root.dataset.renewEvery || "60", 10) * 1000;
    var token = document.querySelector("input[name=csrfmiddlewaretoken]");
    setInterval(function () {
      if (document.visibilityState !== "visible" || submitting) return;
      var body = new URLSearchParams({ lease: root.dataset.lease });
      fetch(renewUrl, { method: "POST", body: body, credentials: "same-origin",
                        headers: { "X-CSRFToken": token ? token.value : "" } })
        .catch(function () { /* offline for a moment: the next renewal tries again */ });
    }, every);
  }
})();
