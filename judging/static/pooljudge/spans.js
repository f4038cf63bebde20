// Pooljudge judging page: a passage shown in its document's context (the text before and after
// it folded), and the answer spans the assessor marks in the text, with the mouse (select, then
// m or "Mark answer") or the keyboard ([ and ] move a sentence cursor, m marks its sentence; x
// removes the last mark). A span is [start, end): characters (code points, as the server counts
// them) of the document's text, computed from the data-start/data-end of the paragraph a point
// is in (judging/web/document_text.py), never from positions in the page, so neither the
// folding, the term highlighting nor the marks themselves can shift an offset. The spans go with
// the grade: the form's hidden field "answers" (JSON) or the instant page's queued call.
(function () {
  "use strict";

  // code points of a JavaScript (UTF-16) string: a low surrogate does not count
  function cpLen(s) {
    var n = 0;
    for (var i = 0; i < s.length; i++) {
      var c = s.charCodeAt(i);
      if (c < 0xDC00 || c > 0xDFFF) n++;
    }
    return n;
  }
  // the UTF-16 index of code point number cp of s
  function cuIndex(s, cp) {
    var i = 0;
    while (cp > 0 && i < s.length) {
      var c = s.charCodeAt(i);
      i += c >= 0xD800 && c <= 0xDBFF && i + 1 < s.length ? 2 : 1;
      cp--;
    }
    return i;
  }
  // sorted, overlapping and touching spans merged (as the server stores them: assessments/spans.py)
  function merge(spans) {
    var sorted = spans.slice().sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
    var out = [];
    sorted.forEach(function (x) {
      var last = out[out.length - 1];
      if (last && x[0] <= last[1]) last[1] = Math.max(last[1], x[1]);
      else out.push([x[0], x[1]]);
    });
    return out;
  }
  function number(n) { return Number(n).toLocaleString("en-US"); }

  // opts: say(text) for short notes; initial: the answers the judgment has (the "judged" page);
  // most: how many answers a judgment may have (POOLJUDGE_MAX_ANSWER_SPANS)
  function create(opts) {
    var box = document.getElementById("doc-text");
    var panel = document.getElementById("answers");
    var list = document.getElementById("answer-list");
    var field = document.getElementById("answers-field");
    var markButton = document.getElementById("mark-answer");
    if (!box || !panel) return null;
    var say = opts.say || function () {};
    var answers = merge(opts.initial || []);
    var dirty = false;   // changed here: only then does the form send them (else: kept as stored)
    var cursor = null;   // [start, end] of the sentence under the keyboard cursor
    panel.hidden = false;

    function segments() { return Array.prototype.slice.call(box.querySelectorAll("p[data-start]")); }
    function visible(seg) { return !seg.closest("[hidden]"); }
    function bounds(seg) { return [parseInt(seg.dataset.start, 10), parseInt(seg.dataset.end, 10)]; }

    // --- rendering an item sent as JSON (the instant page): the same markup as _document.html
    function para(item, i) {
      var p = document.createElement("p");
      p.dataset.start = item.offsets[i][0];
      p.dataset.end = item.offsets[i][1];
      p.innerHTML = item.paragraphs_html[i];  // escaped and highlighted by the server
      return p;
    }
    function fold(item, region, chars, indices) {
      var f = document.createElement("div");
      f.className = "fold";
      f.dataset.region = region;
      var b = document.createElement("button");
      b.type = "button";
      b.className = "fold-toggle link";
      b.setAttribute("aria-expanded", "false");
      b.dataset.label = "… " + number(chars) + " characters " + region;
      b.textContent = b.dataset.label + " — show";
      var t = document.createElement("div");
      t.className = "fold-text";
      t.hidden = true;
      indices.forEach(function (i) { t.appendChild(para(item, i)); });
      f.appendChild(b);
      f.appendChild(t);
      return f;
    }
    function render(item) {
      box.textContent = "";
      delete box.dataset.passageStart;
      delete box.dataset.passageEnd;
      var kind = document.getElementById("item-kind");
      if (kind) kind.textContent = item.passage ? "Passage" : "Document";
      var n = item.paragraphs_html.length;
      if (!item.passage) {
        if (!n) { box.innerHTML = '<p class="muted">(This document has no text.)</p>'; return; }
        for (var i = 0; i < n; i++) box.appendChild(para(item, i));
        return;
      }
      var ps = item.passage[0], pe = item.passage[1];
      box.dataset.passageStart = ps;
      box.dataset.passageEnd = pe;
      var before = [], inside = [], after = [];
      item.offsets.forEach(function (o, j) {
        (o[1] <= ps ? before : o[0] >= pe ? after : inside).push(j);
      });
      if (before.length) box.appendChild(fold(item, "before", ps, before));
      var passage = document.createElement("div");
      passage.className = "passage";
      passage.id = "passage";
      passage.setAttribute("aria-label", "The passage to judge");
      if (inside.length) inside.forEach(function (j) { passage.appendChild(para(item, j)); });
      else passage.innerHTML = '<p class="muted">(This passage has no text.)</p>';
      box.appendChild(passage);
      if (after.length) box.appendChild(fold(item, "after", item.length - pe, after));
    }

    // --- the folded text around a passage: its line, or c for both
    function setFold(f, open) {
      var b = f.querySelector(".fold-toggle");
      f.querySelector(".fold-text").hidden = !open;
      b.setAttribute("aria-expanded", open ? "true" : "false");
      b.textContent = b.dataset.label + (open ? " — hide" : " — show");
    }
    box.addEventListener("click", function (ev) {
      var b = ev.target.closest && ev.target.closest(".fold-toggle");
      if (b) setFold(b.parentNode, b.getAttribute("aria-expanded") !== "true");
    });
    function toggleFolds() {
      var folds = Array.prototype.slice.call(box.querySelectorAll(".fold"));
      if (!folds.length) { say("This is a whole document: nothing is folded."); return; }
      var open = folds.some(function (f) { return f.querySelector(".fold-text").hidden; });
      folds.forEach(function (f) { setFold(f, open); });
    }
    // the passage in view (the document box scrolls, then the page if need be)
    function reveal() {
      var passage = document.getElementById("passage");
      if (!passage) return;
      var scroller = box.closest(".document");
      if (scroller) {
        var top = passage.getBoundingClientRect().top - scroller.getBoundingClientRect().top;
        if (top < 0 || top > scroller.clientHeight / 2) scroller.scrollTop += top - 40;
      }
      passage.scrollIntoView({ block: "nearest" });
    }

    // --- offsets of the selection
    function before(seg, node, offset) {
      var r = document.createRange();
      r.setStart(seg, 0);
      r.setEnd(node, offset);
      return cpLen(r.toString());
    }
    function selected() {
      var sel = window.getSelection();
      if (!sel || !sel.rangeCount || sel.isCollapsed) return null;
      var range = sel.getRangeAt(0), lo = null, hi = null;
      segments().forEach(function (seg) {
        if (!visible(seg) || !range.intersectsNode(seg)) return;
        var se = bounds(seg), whole = document.createRange();
        whole.selectNodeContents(seg);
        var a = range.compareBoundaryPoints(Range.START_TO_START, whole) > 0
          ? se[0] + before(seg, range.startContainer, range.startOffset) : se[0];
        var b = range.compareBoundaryPoints(Range.END_TO_END, whole) < 0
          ? se[0] + before(seg, range.endContainer, range.endOffset) : se[1];
        var chars = Array.from(seg.textContent);  // code points
        while (a < b && /\s/.test(chars[a - se[0]])) a++;
        while (b > a && /\s/.test(chars[b - se[0] - 1])) b--;
        if (a >= b) return;
        lo = lo === null ? a : Math.min(lo, a);
        hi = hi === null ? b : Math.max(hi, b);
      });
      return lo === null ? null : [lo, hi];
    }

    // --- the sentence cursor: sentences of the paragraphs shown, ended by . ! ? or the paragraph
    function sentences() {
      var out = [];
      segments().forEach(function (seg) {
        if (!visible(seg)) return;
        var s0 = bounds(seg)[0], text = seg.textContent;
        var re = /[.!?…]+["'”’)\]]*(\s+|$)/g, last = 0, m;
        function add(from, to) {
          var piece = text.slice(from, to), lead = piece.length - piece.replace(/^\s+/, "").length;
          piece = piece.trim();
          if (!piece) return;
          var a = s0 + cpLen(text.slice(0, from + lead));
          out.push([a, a + cpLen(piece)]);
        }
        while ((m = re.exec(text)) !== null) {
          add(last, m.index + m[0].length - m[1].length);
          last = m.index + m[0].length;
          if (last >= text.length) break;
        }
        if (last < text.length) add(last, text.length);
      });
      return out;
    }
    function move(step) {
      var all = sentences();
      if (!all.length) return;
      var i;
      if (cursor === null) {
        var from = box.dataset.passageStart ? parseInt(box.dataset.passageStart, 10) : 0;
        i = all.findIndex(function (s) { return s[1] > from; });
        if (i < 0) i = 0;
      } else {
        i = all.findIndex(function (s) { return s[0] >= cursor[0]; });
        if (i < 0) i = all.length - 1;
        else if (all[i][0] === cursor[0] || step < 0) i += step;
        i = Math.max(0, Math.min(all.length - 1, i));
      }
      cursor = all[i];
      draw();
      var shown = box.querySelector("span.cursor");
      if (shown) shown.scrollIntoView({ block: "nearest" });
    }

    // --- the marks in the text, the list and the form's field
    function unwrapAll() {
      box.querySelectorAll("span.answer, span.cursor").forEach(function (s) {
        var parent = s.parentNode;
        while (s.firstChild) parent.insertBefore(s.firstChild, s);
        parent.removeChild(s);
      });
      box.normalize();
    }
    function wrap(a, b, cls) {
      segments().forEach(function (seg) {
        var se = bounds(seg), lo = Math.max(a, se[0]), hi = Math.min(b, se[1]);
        if (lo >= hi) return;
        var walker = document.createTreeWalker(seg, NodeFilter.SHOW_TEXT), nodes = [], node;
        while ((node = walker.nextNode())) nodes.push(node);
        var pos = se[0];
        nodes.forEach(function (t) {
          var len = cpLen(t.data), from = Math.max(lo, pos), to = Math.min(hi, pos + len);
          if (from < to) {
            var i = cuIndex(t.data, from - pos), j = cuIndex(t.data, to - pos);
            var mid = i > 0 ? t.splitText(i) : t;
            if (j - i < mid.data.length) mid.splitText(j - i);
            var span = document.createElement("span");
            span.className = cls;
            mid.parentNode.insertBefore(span, mid);
            span.appendChild(mid);
          }
          pos += len;
        });
      });
    }
    function words(a, b) {
      var parts = [];
      segments().forEach(function (seg) {
        var se = bounds(seg), lo = Math.max(a, se[0]), hi = Math.min(b, se[1]);
        if (lo < hi) parts.push(Array.from(seg.textContent).slice(lo - se[0], hi - se[0]).join(""));
      });
      var t = parts.join(" ").replace(/\s+/g, " ").trim();
      return t.length > 60 ? t.slice(0, 57) + "…" : t;
    }
    function draw() {
      unwrapAll();
      answers.forEach(function (s) { wrap(s[0], s[1], "answer"); });
      if (cursor) wrap(cursor[0], cursor[1], "cursor");
      list.textContent = "";
      answers.forEach(function (s, i) {
        var li = document.createElement("li");
        var q = document.createElement("q");
        q.textContent = words(s[0], s[1]);
        var where = document.createElement("span");
        where.className = "small muted";
        where.textContent = " characters " + number(s[0]) + "–" + number(s[1]) + " ";
        var rm = document.createElement("button");
        rm.type = "button";
        rm.className = "answer-remove link";
        rm.textContent = "×";
        rm.title = "Remove this answer";
        rm.setAttribute("aria-label", "Remove answer " + (i + 1));
        rm.dataset.index = i;
        li.appendChild(q);
        li.appendChild(where);
        li.appendChild(rm);
        list.appendChild(li);
      });
      if (field) field.value = dirty ? JSON.stringify(answers) : "";
    }
    list.addEventListener("click", function (ev) {
      var rm = ev.target.closest && ev.target.closest(".answer-remove");
      if (!rm) return;
      answers.splice(parseInt(rm.dataset.index, 10), 1);
      dirty = true;
      draw();
    });

    function mark() {
      var span = selected();
      if (span === null && cursor !== null) span = cursor.slice();
      if (span === null) {
        say("Select the answering text in the document first (or move the cursor with ] and press m).");
        return;
      }
      var more = merge(answers.concat([span]));
      if (opts.most && more.length > opts.most) {
        say("At most " + opts.most + (opts.most === 1 ? " answer" : " answers") +
            " can be marked: remove one first (x, or × in the list).");
        return;
      }
      answers = more;
      dirty = true;
      var sel = window.getSelection();
      if (sel) sel.removeAllRanges();
      draw();
      say("Marked as answer: “" + words(span[0], span[1]) + "”");
    }
    function removeLast() {
      if (!answers.length) { say("No answer is marked."); return; }
      // the last marked is the one at the end of the text (spans are kept sorted)
      answers.pop();
      dirty = true;
      draw();
    }
    if (markButton) {
      // a press on the button keeps the selection it marks (no focus change)
      markButton.addEventListener("mousedown", function (ev) { ev.preventDefault(); });
      markButton.addEventListener("click", mark);
    }

    draw();
    reveal();
    return {
      // a new item (the instant page): its text, no answers, no cursor
      show: function (item) { render(item); answers = []; dirty = false; cursor = null; draw(); },
      reveal: reveal,
      answers: function () { return answers.map(function (s) { return [s[0], s[1]]; }); },
      mark: mark,
      removeLast: removeLast,
      move: move,
      toggleFolds: toggleFolds
    };
  }

  window.pjSpans = { create: create, merge: merge, cpLen: cpLen };
})();
