// Pooljudge judging page: one key judges and the next document is there at once.
// No dependencies, no network but our own. Without this script the page's forms still work
// (a full POST and redirect per judgment); with it:
// - the next item is leased ahead (POST .../ahead/) while the current one is read;
// - a grade key queues the judgment in localStorage (per campaign and user, so it survives a
//   reload), shows the item leased ahead without waiting, and sends the queue in the background
//   (the API's idempotent POST /api/v1/leases/<id>/judgment/), retrying with backoff; a
//   judgment the server refuses (its lease ended) is listed as not saved, with its document and
//   the reason, until dismissed: nothing is dropped silently;
// - window.__pjLatencies collects, per key press, the milliseconds from the keydown to two
//   animation frames after the next document was put in place (painted);
// - the page is never judged from an old copy: the server sends it with no-store, and one
//   restored from the back/forward cache is loaded again (what it holds may have been judged
//   since); of two tabs judging the same campaign, the newer is told the document is open in the
//   other and judges nothing until asked to ("Judge here instead"), so that they never judge the
//   same document (the server refuses a grade that would change a judgment anyway).
(function () {
  "use strict";
  var root = document.getElementById("judge");
  if (!root) return;
  window.addEventListener("pageshow", function (ev) {
    if (ev.persisted) window.location.reload();  // restored as it was: ask the server again
  });
  var help = document.getElementById("help");
  var form = document.getElementById("grade-form");
  var submitting = false;
  window.__pjLatencies = window.__pjLatencies || [];

  function byId(id) { return document.getElementById(id); }
  function storage() {
    try { var k = "__pj"; window.localStorage.setItem(k, k); window.localStorage.removeItem(k); return window.localStorage; }
    catch (e) { return null; }
  }
  var store = storage();

  // --- active time: counted while the page is visible and the annotator did something in the
  // last 30 seconds (reading counts: scrolling, moving the mouse, pressing keys).
  var IDLE_MS = 30000;
  var activeMs = 0;
  var lastInput = Date.now();
  var lastTick = Date.now();
  function touch() { lastInput = Date.now(); }
  ["keydown", "mousemove", "mousedown", "wheel", "scroll", "touchstart"].forEach(function (ev) {
    window.addEventListener(ev, touch, { passive: true });
  });
  function tick() {
    var now = Date.now();
    if (document.visibilityState === "visible" && now - lastInput < IDLE_MS) activeMs += now - lastTick;
    lastTick = now;
  }
  setInterval(tick, 1000);
  function takeActiveSeconds() { tick(); var s = activeMs / 1000; activeMs = 0; return Math.round(s * 10) / 10; }
  function stampActiveTime() {
    tick();
    document.querySelectorAll(".active-seconds").forEach(function (input) {
      input.value = (activeMs / 1000).toFixed(1);
    });
  }

  // --- highlighting on/off (key h, the button; remembered in this browser)
  var hlButton = byId("highlight-toggle");
  function setHighlight(on) {
    document.body.classList.toggle("no-highlight", !on);
    if (hlButton) {
      hlButton.hidden = false;
      hlButton.setAttribute("aria-pressed", on ? "true" : "false");
      hlButton.lastChild.textContent = on ? " Highlighting on" : " Highlighting off";
    }
    if (store) store.setItem("pooljudge:highlight", on ? "on" : "off");
  }
  function highlightOn() { return !document.body.classList.contains("no-highlight"); }
  setHighlight(!store || store.getItem("pooljudge:highlight") !== "off");
  if (hlButton) hlButton.addEventListener("click", function () { setHighlight(!highlightOn()); });

  // --- toasts: short notes for undo, change and skip (aria-live)
  var toastEl = byId("toast");
  var toastTimer = null;
  function toast(text) {
    if (!toastEl) return;
    toastEl.textContent = text;
    toastEl.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(function () { toastEl.hidden = true; }, 4000);
  }
  // a message left by the previous page (a changed grade, an undo without script) as a toast
  var flashed = document.querySelectorAll(".messages li.success");
  if (flashed.length && toastEl) {
    toast(Array.prototype.map.call(flashed, function (li) { return li.textContent; }).join(" "));
    flashed.forEach(function (li) { li.remove(); });
    var list = document.querySelector(".messages");
    if (list && !list.children.length) list.remove();
  }

  // --- suggestions (the anchoring control): the hidden arm's automatic grade, told once the
  // judgment is recorded, for a few seconds (a form post leaves it as a message of the next page)
  var revealEl = byId("suggestion-reveal");
  var revealTimer = null, revealUntil = 0, REVEAL_MS = 5000;
  function reveal(text) {
    if (!revealEl) return;
    revealEl.textContent = text;
    revealEl.hidden = false;
    revealUntil = Date.now() + REVEAL_MS;
    clearTimeout(revealTimer);
    revealTimer = setTimeout(function () { revealEl.hidden = true; }, REVEAL_MS);
  }
  // leaving the page (nothing left to judge): not before the last item's grade has been told
  function afterReveal(f) { setTimeout(f, Math.max(0, revealUntil - Date.now())); }
  var revealed = document.querySelectorAll(".messages li.suggestion-reveal");
  if (revealed.length && revealEl) {
    reveal(Array.prototype.map.call(revealed, function (li) { return li.textContent; }).join(" "));
    revealed.forEach(function (li) { li.remove(); });
    var messagesList = document.querySelector(".messages");
    if (messagesList && !messagesList.children.length) messagesList.remove();
  }

  // --- passages in context and answer spans (spans.js): S is null without it
  var S = window.pjSpans ? window.pjSpans.create({
    say: toast,
    initial: root.dataset.answers ? JSON.parse(root.dataset.answers) : [],
    most: parseInt(root.dataset.maxAnswers || "0", 10)
  }) : null;
  // an item that is not a document has no text to mark answers in
  function onUnit() { var u = document.getElementById("unit"); return !!u && !u.hidden; }
  if (onUnit()) { var answersPanel = document.getElementById("answers"); if (answersPanel) answersPanel.hidden = true; }
  // answers mark relevant text: a grade of 0 with answers marked is refused here, before
  // anything is queued (the server would refuse it too, and the judgment would not be saved)
  function answersAllowed(grade) {
    if (!S || grade > 0 || !S.answers().length) return true;
    toast("Answers are marked: a grade of 0 (not relevant) cannot have them. Remove them first (x, or × in the list).");
    return false;
  }

  function toggleHelp(show) {
    if (!help) return;
    help.hidden = show === undefined ? !help.hidden : !show;
  }
  var openBtn = byId("help-open");
  if (openBtn) openBtn.addEventListener("click", function () { toggleHelp(true); });
  var closeBtn = byId("help-close");
  if (closeBtn) closeBtn.addEventListener("click", function () { toggleHelp(false); });

  var csrfInput = document.querySelector("input[name=csrfmiddlewaretoken]");
  function csrf() { return csrfInput ? csrfInput.value : ""; }

  // --- the form fallback: a full POST and redirect (the "judged" page, or no fetch/storage)
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

  // POOLJUDGE_PREFETCH=0 leaves out the ahead URL: one full page per judgment, as without script
  var instant = root.dataset.mode === "judge" && !!root.dataset.aheadUrl && !!store &&
    typeof window.fetch === "function";
  var J = instant ? judgingPage() : null;

  if (form) {
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var button = ev.submitter || null;
      if (button && button.value !== undefined && !answersAllowed(parseInt(button.value, 10))) return;
      if (J && button && button.value !== undefined) J.grade(parseInt(button.value, 10), performance.now(), button);
      else submitOnce(form, button);
    });
  }
  var skipForm = byId("skip-form");
  if (skipForm) skipForm.addEventListener("submit", function (ev) {
    ev.preventDefault();
    if (J) J.skip(performance.now()); else submitOnce(skipForm, null);
  });
  var undoForm = byId("undo-form");
  if (undoForm) undoForm.addEventListener("submit", function (ev) {
    ev.preventDefault();
    if (J) J.undo(); else submitOnce(undoForm, null);
  });
  var backLink = byId("back-link");
  if (backLink && J) backLink.addEventListener("click", function (ev) { ev.preventDefault(); J.back(); });

  document.addEventListener("keydown", function (ev) {
    // the event's own time (when the key was pressed, before any queueing in the page), on
    // the clock of performance.now()
    var now = performance.now();
    var t0 = ev.timeStamp > 0 && ev.timeStamp <= now ? ev.timeStamp : now;
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    var tag = (ev.target && ev.target.tagName) || "";
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
    var key = ev.key;
    if (J) J.dismissNotice();
    if (key === "?") { toggleHelp(); ev.preventDefault(); return; }
    if (key === "Escape") {
      if (help && !help.hidden) { toggleHelp(false); }
      else if (root.dataset.resumeUrl) { window.location.href = root.dataset.resumeUrl; }
      ev.preventDefault();
      return;
    }
    if (help && !help.hidden) return;
    if (key === "h") { ev.preventDefault(); setHighlight(!highlightOn()); return; }
    var editorLink = document.getElementById("unit-editor");
    if (key === "e" && onUnit() && editorLink && editorLink.offsetParent !== null) {
      ev.preventDefault(); window.open(editorLink.href, "_blank", "noopener"); return;
    }
    if (S && !onUnit() && (key === "m" || key === "x" || key === "[" || key === "]" || key === "c")) {
      ev.preventDefault();
      if (key === "m") S.mark();
      else if (key === "x") S.removeLast();
      else if (key === "c") S.toggleFolds();
      else S.move(key === "]" ? 1 : -1);
      return;
    }
    var button = form && form.querySelector('button.grade[data-key="' + key + '"]');
    if (button) {
      ev.preventDefault();
      if (!answersAllowed(parseInt(button.value, 10))) return;
      if (J) J.grade(parseInt(button.value, 10), t0, button); else submitOnce(form, button);
      return;
    }
    if (key === "s") {
      if (J) { ev.preventDefault(); J.skip(t0); }
      else if (skipForm) { ev.preventDefault(); submitOnce(skipForm, null); }
      return;
    }
    if (key === "u") {
      if (J) { ev.preventDefault(); J.undo(); }
      else if (undoForm && !undoForm.hidden) { ev.preventDefault(); submitOnce(undoForm, null); }
      return;
    }
    if (key === "b") {
      if (J) { ev.preventDefault(); J.back(); }
      else if (backLink && !backLink.hidden && backLink.getAttribute("href")) { ev.preventDefault(); window.location.href = backLink.href; }
    }
  });

  // Keep the leases while the page is open and visible: the server renews every item held
  // (the one read, the one leased ahead, those whose judgment is on its way).
  var renewUrl = root.dataset.renewUrl;
  function renew() {
    if (document.visibilityState !== "visible" || submitting || (J && J.paused())) return;
    var lease = J ? J.currentLease() : root.dataset.lease;
    if (!lease) return;
    var body = new URLSearchParams({ lease: String(lease) });
    fetch(renewUrl, { method: "POST", body: body, credentials: "same-origin",
                      headers: { "X-CSRFToken": csrf() } })
      .then(function (r) { return r.json().then(function (b) { if (J) J.renewed(lease, r.status, b); }); })
      .catch(function () { /* offline for a moment: the next renewal tries again */ });
  }
  if (renewUrl) {
    setInterval(renew, parseInt(root.dataset.renewEvery || "60", 10) * 1000);
    // back from another tab (renewals pause while hidden): renew now, and learn what ran out
    document.addEventListener("visibilitychange", renew);
  }

  // --- the instant judging page ------------------------------------------------------------
  function judgingPage() {
    var d = root.dataset;
    var key = "pooljudge:" + d.campaign + ":" + d.user;
    var QKEY = key + ":queue", FKEY = key + ":failed";

    function read(k) { try { return JSON.parse(store.getItem(k) || "[]"); } catch (e) { return []; } }
    function write(k, v) { store.setItem(k, JSON.stringify(v)); }
    function withId(url, id) { return url.replace(/\/0\/([^/]*\/)?$/, "/" + id + "/$1"); }

    var cur = { lease: parseInt(d.lease, 10), docid: byId("docid").textContent, qid: byId("topic-qid").dataset.qid };
    var ready = [];            // the items leased ahead, ready to show (POOLJUDGE_PREFETCH)
    var depth = Math.max(1, parseInt(d.prefetch || "1", 10));
    var aheadGen = 0;          // bumped by an undo: answers to older requests are dropped
    var aheadBusy = false, aheadRetry = null, nothingAhead = false;
    var waitingSince = null;   // a key was pressed and no item was ready: its time
    var sending = false, attempts = 0, retryTimer = null;
    var drainWaiters = [];
    var lastJudgment = d.last ? parseInt(d.last, 10) : null;
    var busy = false;          // an undo or a page change is on its way: keys wait

    function queue() { return read(QKEY); }
    function pendingLeases() { return queue().map(function (a) { return a.lease; }); }

    // --- what the page shows
    function text(id, value) { var el = byId(id); if (el) el.textContent = value; }
    function show(item) {
      var changed = cur === null ? item.topic.qid !== lastQid : item.topic.qid !== cur.qid;
      cur = { lease: item.lease, docid: item.docid, qid: item.topic.qid };
      lastQid = item.topic.qid;
      text("docid", item.docid);
      var title = byId("doc-title");
      title.innerHTML = item.title_html;  // escaped and highlighted by the server
      title.hidden = !item.title_html;
      var body = byId("doc-text");
      var scroller = document.querySelector(".document");
      if (scroller) scroller.scrollTop = 0;
      if (S) {
        S.show(item);  // the paragraphs with their offsets, a passage in its context; no answers
      } else if (item.paragraphs_html.length) {
        body.innerHTML = item.paragraphs_html.map(function (p) { return "<p>" + p + "</p>"; }).join("");
      } else {
        body.innerHTML = '<p class="muted">(This document has no text.)</p>';
      }
      var t = item.topic;
      text("topic-qid", "Topic " + t.qid);
      byId("topic-qid").dataset.qid = t.qid;
      var h = byId("topic-title");
      if (t.title) h.textContent = t.title;
      else h.innerHTML = '<span class="muted">id only, no title yet</span>';
      text("topic-description", t.description); byId("topic-description-box").hidden = !t.description;
      text("topic-narrative", t.narrative); byId("topic-narrative-box").hidden = !t.narrative;
      var p = item.position;
      var bar = byId("topic-progress-bar");
      if (p.of === null) {
        // not among the items counted for them (a topic another assessor owns, served one at a
        // time): no total is known, so none is claimed
        text("position", "item " + p.n);
        if (bar) bar.hidden = true;
        text("topic-progress", (p.n - 1) + " judged · more may come");
      } else {
        text("position", p.n + " of " + p.of);
        if (bar) { bar.hidden = false; bar.max = p.of; bar.value = p.n - 1; }
        text("topic-progress", (p.n - 1) + " judged · " + (p.of - p.n + 1) + " left");
      }
      // the shown arm's hint (a hidden-arm item carries none: it is told after the judgment)
      var hint = byId("suggestion");
      if (hint) {
        text("suggestion-label", item.suggestion ? item.suggestion.label : "");
        hint.hidden = !item.suggestion;
      }
      document.querySelectorAll("input[name=lease]").forEach(function (i) { i.value = item.lease; });
      document.title = "Judging " + t.qid + " · Pooljudge";
      byId("loading").hidden = true;
      var isDoc = !item.kind || item.kind === "document";
      document.querySelector(".document").hidden = !isDoc;
      showUnit(item);
      setGrades(item.grades);
      if (S && isDoc) S.reveal();  // a passage: scrolled into view
      activeMs = 0; lastTick = Date.now();
      if (changed) notice(t);
    }
    var lastQid = cur.qid;
    // --- an item that is not a document (nugget creation or assignment, citation support):
    // its parts are in the page (_unit.html); the one of its kind is filled, as text
    function showUnit(item) {
      var box = byId("unit"), u = item.unit;
      var answersBox = byId("answers");
      if (answersBox) answersBox.hidden = !!u || !S;
      if (!box) return;
      box.hidden = !u;
      if (!u) return;
      box.dataset.kind = item.kind;
      text("unit-kind", item.kind_label.charAt(0).toUpperCase() + item.kind_label.slice(1));
      text("unit-key", item.docid);
      text("unit-question", u.question);
      box.querySelectorAll(".unit-part").forEach(function (part) { part.hidden = part.dataset.part !== item.kind; });
      function list(id, items, render) {
        var el = byId(id); el.textContent = "";
        items.forEach(function (x) { var li = document.createElement("li"); render(li, x); el.appendChild(li); });
      }
      if (item.kind === "nugget_assignment") {
        text("unit-importance", u.importance);
        text("unit-nugget-text", u.nugget_text);
        list("unit-answer", u.answer || [], function (li, s) { li.textContent = s; });
      } else if (item.kind === "citation_support") {
        text("unit-sentence", u.sentence);
        text("unit-segment", u.segment);
        text("unit-segment-title", u.segment_title || ""); byId("unit-segment-title").hidden = !u.segment_title;
        var seg = byId("unit-segment-text"); seg.textContent = "";
        (u.segment_text || "").split(/\n\s*\n/).forEach(function (t) {
          if (!t.trim()) return;
          var p = document.createElement("p"); p.textContent = t; seg.appendChild(p);
        });
      } else if (item.kind === "nugget_creation") {
        text("unit-bank", u.bank_number);
        var editor = byId("unit-editor"); if (editor && u.editor_url) editor.href = u.editor_url;
        list("unit-nuggets", u.nuggets || [], function (li, n) {
          var b = document.createElement("span"); b.className = "badge"; b.textContent = n.importance;
          li.appendChild(b); li.appendChild(document.createTextNode(" " + n.text));
        });
      }
    }
    // the grade buttons of the item's kind (a document's scale, or a unit's labels)
    function setGrades(grades) {
      if (!form || !grades) return;
      var buttons = form.querySelectorAll("button.grade");
      var same = buttons.length === grades.length && grades.every(function (g, i) {
        return buttons[i].value === String(g.grade) && buttons[i].dataset.label === g.label;
      });
      if (same) return;
      buttons.forEach(function (b) { b.remove(); });
      grades.forEach(function (g) {
        var b = document.createElement("button");
        b.type = "submit"; b.name = "grade"; b.value = String(g.grade); b.className = "grade";
        b.dataset.key = g.key; b.dataset.label = g.label;
        var k = document.createElement("kbd"); k.textContent = g.key;
        b.appendChild(k); b.appendChild(document.createTextNode(" " + g.label));
        form.appendChild(b);
      });
    }
    function loading() {
      cur = null;
      byId("loading").hidden = false;
      document.querySelector(".document").hidden = true;
    }
    function painted(t0) {
      requestAnimationFrame(function () {
        requestAnimationFrame(function () { window.__pjLatencies.push(performance.now() - t0); });
      });
    }

    // --- the topic changed: a banner with the new topic's statement
    var noticeEl = byId("topic-notice"), noticeTimer = null, noticeShownAt = 0;
    function notice(t) {
      if (!noticeEl) return;
      text("topic-notice-title", t.qid + (t.title ? " " + t.title : ""));
      text("topic-notice-text", [t.description, t.narrative].filter(Boolean).join(" "));
      noticeEl.hidden = false;
      noticeShownAt = performance.now();
      clearTimeout(noticeTimer);
      noticeTimer = setTimeout(function () { noticeEl.hidden = true; }, 6000);
    }
    function dismissNotice() {
      // the key that brought the new topic does not dismiss its notice
      if (noticeEl && !noticeEl.hidden && performance.now() - noticeShownAt > 300) noticeEl.hidden = true;
    }

    // --- saving: the queue of calls, sent in order, with retry and backoff
    var statusEl = byId("save-status");
    function status() {
      var n = queue().filter(function (a) { return a.kind === "judge"; }).length;
      if (n && attempts > 0) {
        statusEl.textContent = n + (n === 1 ? " judgment" : " judgments") + " not yet saved, retrying…";
        statusEl.hidden = false;
        statusEl.classList.add("retrying");
      } else {
        statusEl.hidden = true;
        statusEl.classList.remove("retrying");
      }
      var failed = read(FKEY);
      var box = byId("save-failed"), list = byId("save-failed-list");
      list.innerHTML = "";
      failed.forEach(function (f) {
        var li = document.createElement("li");
        li.textContent = "document " + f.docid + " (grade " + f.grade + "): " + f.reason;
        list.appendChild(li);
      });
      box.hidden = failed.length === 0;
    }
    byId("save-failed-dismiss").addEventListener("click", function () { write(FKEY, []); status(); });

    function enqueue(action) { var q = queue(); q.push(action); write(QKEY, q); }
    function dequeue(action) {
      write(QKEY, queue().filter(function (a) { return !(a.lease === action.lease && a.kind === action.kind); }));
    }
    function pump() {
      if (sending || paused) return;  // the tab judging now sends the queue (it is shared)
      var q = queue();
      if (!q.length) {
        attempts = 0; status();
        var waiters = drainWaiters; drainWaiters = [];
        waiters.forEach(function (f) { f(); });
        return;
      }
      var a = q[0];
      sending = true;
      var req = a.kind === "judge"
        ? fetch(withId(d.judgmentUrl, a.lease), {
            method: "POST", credentials: "same-origin",
            headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": csrf() },
            body: JSON.stringify(a.answers ? { grade: a.grade, active_seconds: a.seconds, answers: a.answers }
                                           : { grade: a.grade, active_seconds: a.seconds })
          })
        : fetch(withId(d.releaseUrl, a.lease), {
            method: "DELETE", credentials: "same-origin",
            headers: { "Accept": "application/json", "X-CSRFToken": csrf() }
          });
      req.then(function (r) {
        return r.text().then(function (t) {
          var body = {};
          try { body = t ? JSON.parse(t) : {}; } catch (e) { body = {}; }
          return { status: r.status, body: body };
        });
      }).then(function (res) {
        sending = false;
        if (res.status >= 200 && res.status < 300) {
          if (a.kind === "judge" && res.body.id) { lastJudgment = res.body.id; showBack(); }
          var sg = a.kind === "judge" && res.body.suggestion;
          if (sg && sg.arm === "hidden") reveal("The automatic judge said: " + sg.label + " (document " + a.docid + ").");
          dequeue(a); attempts = 0; status(); pump();
        } else if ([400, 404, 409, 410, 422].indexOf(res.status) >= 0) {
          // refused for good (the lease ended, a grade off the scale): never retried, never
          // dropped silently: listed until the annotator dismisses it
          if (a.kind === "judge") {
            var f = read(FKEY);
            f.push({ docid: a.docid, grade: a.grade, reason: res.body.detail || ("HTTP " + res.status) });
            write(FKEY, f);
          }
          dequeue(a); attempts = 0; status(); pump();
        } else {
          retry();  // the network, the server, or a sign-in that ended: kept and sent again
        }
      }, function () { sending = false; retry(); });
    }
    function retry() {
      attempts += 1; status();
      clearTimeout(retryTimer);
      retryTimer = setTimeout(pump, Math.min(250 * Math.pow(2, attempts - 1), 15000));
    }
    function drained(f) { drainWaiters.push(f); pump(); }
    function showBack() {
      var back = byId("back-link"), undo = byId("undo-form");
      if (back && lastJudgment) { back.href = withId(d.judgedUrl, lastJudgment); back.hidden = false; }
      if (undo) undo.hidden = false;
    }

    // --- leasing ahead
    function post(url, body) {
      return fetch(url, {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": csrf() },
        body: JSON.stringify(body)
      }).then(function (r) {
        if (!r.ok) throw new Error("HTTP " + r.status);
        return r.json();
      });
    }
    function requestAhead() {
      if (aheadBusy || ready.length >= depth) return;
      aheadBusy = true;
      var gen = aheadGen;
      var holding = ready.map(function (i) { return i.lease; });
      post(d.aheadUrl, { current: cur ? cur.lease : null, holding: holding, pending: pendingLeases(),
                         count: depth - ready.length }).then(function (body) {
        aheadBusy = false;
        if (gen !== aheadGen) { requestAhead(); return; }
        var item = body.ahead;
        var stale = item && ((cur && item.lease === cur.lease) || pendingLeases().indexOf(item.lease) >= 0 ||
          ready.some(function (i) { return i.lease === item.lease; }));
        if (stale) { requestAhead(); return; }
        if (!item) {
          nothingAhead = true;
          if (cur === null) finish();
          return;
        }
        nothingAhead = false;
        if (cur === null) {
          show(item);
          if (waitingSince !== null) { painted(waitingSince); waitingSince = null; }
        } else {
          ready.push(item);
        }
        (body.more || []).forEach(function (more) {
          if (more.lease !== (cur && cur.lease) && !ready.some(function (i) { return i.lease === more.lease; })) ready.push(more);
        });
        requestAhead();  // until the page holds POOLJUDGE_PREFETCH items ahead
      }, function () {
        aheadBusy = false;
        clearTimeout(aheadRetry);
        aheadRetry = setTimeout(requestAhead, 1000);
      });
    }
    // Nothing was leased ahead and nothing is shown: once the queue is sent, ask once more
    // (what the page had in flight may have held the item); nothing still: the "done" page.
    function finish() {
      drained(function () {
        post(d.aheadUrl, { current: null, pending: [] }).then(function (body) {
          if (body.ahead) {
            nothingAhead = false;
            show(body.ahead);
            if (waitingSince !== null) { painted(waitingSince); waitingSince = null; }
            requestAhead();
          } else {
            afterReveal(function () { window.location.href = d.doneUrl; });
          }
        }, function () { setTimeout(finish, 1000); });
      });
    }
    // The item leased ahead replaces the current one; with none ready yet, the page says it is
    // loading and shows the item as soon as it arrives (the key press is already queued).
    function next(t0) {
      if (ready.length) {
        show(ready.shift());
        painted(t0);
        requestAhead();
      } else {
        window.__pjWaited = (window.__pjWaited || 0) + 1;  // a key press found nothing ready
        loading();
        waitingSince = t0;
        if (nothingAhead && !aheadBusy) finish(); else requestAhead();
      }
    }

    function grade(g, t0, button) {
      if (refusedHere()) return;
      if (!cur || busy) return;  // loading: there is nothing to judge yet
      var answers = S ? S.answers() : [];
      enqueue({ kind: "judge", lease: cur.lease, grade: g, seconds: takeActiveSeconds(), docid: cur.docid,
                answers: answers.length ? answers : null });
      if (button) { button.classList.add("chosen"); setTimeout(function () { button.classList.remove("chosen"); }, 150); }
      next(t0);
      pump();
    }
    function skip(t0) {
      if (refusedHere()) return;
      if (!cur || busy) return;
      enqueue({ kind: "release", lease: cur.lease, docid: cur.docid });
      toast("Skipped " + cur.docid + ": it goes back to the queue.");
      next(t0);
      pump();
    }
    function undo() {
      if (refusedHere() || busy) return;
      busy = true;
      toast("Undoing…");
      drained(function () {
        post(d.undoUrl, {}).then(function (body) {
          busy = false;
          aheadGen += 1;
          ready = []; nothingAhead = false;  // the server gave back what was leased ahead
          toast(body.message);
          if (body.current) show(body.current); else loading();
          requestAhead();
        }, function () { busy = false; toast("Undo failed: the server did not answer. Try again."); });
      });
    }
    function back() {
      if (refusedHere()) return;
      if (busy || !lastJudgment) { if (!lastJudgment) toast("Nothing judged yet to go back to."); return; }
      busy = true;
      drained(function () { window.location.href = withId(d.judgedUrl, lastJudgment); });
    }

    // --- one judging tab at a time (per campaign and user, in this browser): tabs talk over a
    // BroadcastChannel. A tab says "hello" when it starts; a tab judging there answers, and the
    // newer of the two pauses: it says the document is open elsewhere and refuses keys, until
    // "Judge here instead" pauses the others and loads this one again. A judging tab that is
    // closed or leaves the page says so, and a paused tab then says that (it does not take over
    // by itself: the annotator may only have gone back to an earlier judgment).
    var paused = false, pausedBy = null;  // and by which tab
    var tab = { id: Math.random().toString(36).slice(2), since: Date.now() };
    var elsewhere = byId("elsewhere");
    var channel = null;
    try { channel = typeof BroadcastChannel === "function" ? new BroadcastChannel(key + ":tabs") : null; }
    catch (e) { channel = null; }
    function say(msg) { if (channel) { msg.tab = tab.id; msg.since = tab.since; channel.postMessage(msg); } }
    function pause(by, why) {
      paused = true; pausedBy = by;
      byId("elsewhere-text").textContent = why;
      elsewhere.hidden = false;
      root.classList.add("paused");
    }
    function older(msg) { return msg.since < tab.since || (msg.since === tab.since && msg.tab < tab.id); }
    function refusedHere() {
      if (!paused) return false;
      toast("This document is open in another tab or window of yours: judge it there, or press Judge here instead.");
      return true;
    }
    if (channel) {
      channel.onmessage = function (ev) {
        var msg = ev.data || {};
        if (msg.tab === tab.id) return;
        var open = "This document is open in another tab or window of yours: judge it there.";
        if (msg.kind === "hello") {
          if (!paused) say({ kind: "judging", to: msg.tab });
          else pause(msg.tab, open);  // (the tab that left came back, or another one)
        } else if (msg.kind === "judging" && msg.to === tab.id && older(msg)) {
          pause(msg.tab, open);
        } else if (msg.kind === "take") {
          pause(msg.tab, "You went on judging in another tab or window: judge there.");
        } else if (msg.kind === "bye" && paused && msg.tab === pausedBy) {
          byId("elsewhere-text").textContent =
            "The tab or window that was judging has closed or left the judging page.";
        }
      };
      var took = false;
      try { took = window.sessionStorage.getItem(key + ":take") === "1"; window.sessionStorage.removeItem(key + ":take"); }
      catch (e) { took = false; }
      say({ kind: took ? "take" : "hello" });
      window.addEventListener("pagehide", function () { if (!paused) say({ kind: "bye" }); });
      byId("elsewhere-take").addEventListener("click", function () {
        try { window.sessionStorage.setItem(key + ":take", "1"); } catch (e) { /* said below */ }
        say({ kind: "take" });
        window.location.reload();
      });
    }

    // A reload with judgments still queued: the item shown may be one of them (its lease is
    // still live); it is not judged twice: the next item is asked for instead.
    if (pendingLeases().indexOf(cur.lease) >= 0) loading();
    status();
    pump();
    requestAhead();

    // what the tests and the benchmark read (no system information: leases and counts)
    window.__pjState = function () {
      return { current: cur ? cur.lease : null, ahead: ready.length ? ready[0].lease : null,
               ready: ready.length,
               queued: queue().length, failed: read(FKEY).length, attempts: attempts,
               nothingAhead: nothingAhead, paused: paused };
    };

    return {
      grade: grade, skip: skip, undo: undo, back: back, dismissNotice: dismissNotice,
      currentLease: function () { return cur ? cur.lease : null; },
      paused: function () { return paused; },
      // what a renewal found: the item being read ran out (the page was away longer than the
      // lease): the page is loaded again (the queue waits in localStorage); the one ahead ran
      // out: another is asked for
      renewed: function (lease, statusCode, body) {
        if (statusCode === 409 && cur && cur.lease === lease && pendingLeases().indexOf(lease) < 0) {
          toast("The time to judge this document ran out; loading your next one.");
          drained(function () { window.location.href = d.judgeUrl; });
        } else if (statusCode === 200) {
          var kept = body.renewed || [];
          var before = ready.length;
          ready = ready.filter(function (i) { return kept.indexOf(i.lease) >= 0; });
          if (ready.length < before) requestAhead();
        }
      }
    };
  }
})();
