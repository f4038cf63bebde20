// The nugget editing screen's keys (templates/nuggets/topic.html; the page works without them:
// each row is a form with its buttons). j/k or the arrows select a nugget and mark the segments
// it names as sources; on a draft: e rewords (Enter saves, Escape gives up), v toggles vital /
// okay, d deletes (after asking), a adds, x selects for a merge, m merges the selected, s
// splits at a separator typed, [ and ] move the nugget up and down. ? shows the key map.
// Every edit is the row's form posted: the server refuses it if the topic changed meanwhile.
(function () {
  "use strict";
  var list = document.getElementById("nuggets");
  if (!list) return;
  var editable = list.dataset.editable === "1";
  var rows = Array.prototype.slice.call(list.querySelectorAll(".nugget-row"));
  var segments = Array.prototype.slice.call(document.querySelectorAll(".segment"));
  var help = document.getElementById("help");
  var status = document.getElementById("edit-status");
  var current = -1;

  function say(text) { if (status) status.textContent = text; }

  function select(i) {
    if (!rows.length) return;
    current = Math.max(0, Math.min(rows.length - 1, i));
    rows.forEach(function (r, k) { r.classList.toggle("selected", k === current); });
    var row = rows[current];
    var sources = (row.dataset.sources || "").split(" ").filter(Boolean);
    var first = null;
    segments.forEach(function (s) {
      var cited = sources.indexOf(s.dataset.id) >= 0;
      s.classList.toggle("cited", cited);
      if (cited && !first) first = s;
    });
    row.scrollIntoView({block: "nearest"});
    if (first) first.scrollIntoView({block: "nearest"});
  }

  function send(op) {
    var form = rows[current] && rows[current].querySelector("form");
    if (!form) return;
    var button = form.querySelector('button[name=op][value="' + op + '"]');
    if (!button || form.dataset.sent) return;
    form.dataset.sent = "1";
    if (form.requestSubmit) form.requestSubmit(button); else button.click();
  }

  function toggleHelp(show) {
    if (!help) return;
    help.hidden = show === undefined ? !help.hidden : !show;
  }

  var opener = document.getElementById("help-open");
  if (opener) opener.addEventListener("click", function () { toggleHelp(true); });
  var closer = document.getElementById("help-close");
  if (closer) closer.addEventListener("click", function () { toggleHelp(false); });

  rows.forEach(function (row, i) {
    row.addEventListener("click", function (ev) {
      if (ev.target.tagName !== "BUTTON") select(i);
    });
    var text = row.querySelector(".nugget-text");
    if (text && text.tagName === "INPUT") {
      text.addEventListener("keydown", function (ev) {
        if (ev.key === "Escape") {
          ev.preventDefault();
          text.value = text.dataset.original || text.value;
          text.blur();
          select(i);
        }
      });
    }
  });

  var start = 0;
  if (location.hash) {
    var wanted = decodeURIComponent(location.hash.slice(1));
    rows.forEach(function (r, k) { if (r.dataset.key === wanted) start = k; });
  }
  select(start);

  document.addEventListener("keydown", function (ev) {
    if (ev.altKey || ev.metaKey || ev.ctrlKey) return;
    var tag = ev.target && ev.target.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
    if (ev.key === "?") { ev.preventDefault(); toggleHelp(); return; }
    if (ev.key === "Escape") { toggleHelp(false); return; }
    if (help && !help.hidden) return;
    if (ev.key === "j" || ev.key === "ArrowDown") { ev.preventDefault(); select(current + 1); return; }
    if (ev.key === "k" || ev.key === "ArrowUp") { ev.preventDefault(); select(current - 1); return; }
    if (!editable) return;
    var row = rows[current];
    if (ev.key === "a") {
      ev.preventDefault();
      document.getElementById("add-text").focus();
      return;
    }
    if (ev.key === "m") {
      ev.preventDefault();
      var merge = document.getElementById("merge-form");
      var picked = document.querySelectorAll(".nugget-pick:checked").length;
      if (picked < 2) { say("Select two nuggets or more with x first."); return; }
      if (merge.requestSubmit) merge.requestSubmit(merge.querySelector("button")); else merge.submit();
      return;
    }
    if (!row) return;
    if (ev.key === "e") {
      ev.preventDefault();
      var input = row.querySelector(".nugget-text");
      input.focus();
      input.setSelectionRange(input.value.length, input.value.length);
    } else if (ev.key === "v") {
      ev.preventDefault();
      send("importance");
    } else if (ev.key === "d") {
      ev.preventDefault();
      if (window.confirm("Delete nugget " + row.dataset.key + "? (The history keeps it.)")) send("delete");
    } else if (ev.key === "x" || ev.key === " ") {
      ev.preventDefault();
      var box = row.querySelector(".nugget-pick");
      box.checked = !box.checked;
      say(document.querySelectorAll(".nugget-pick:checked").length + " selected for a merge.");
    } else if (ev.key === "s") {
      ev.preventDefault();
      var separator = window.prompt("Split " + row.dataset.key + " where this separator appears:", ";");
      if (separator) {
        row.querySelector(".nugget-separator").value = separator;
        send("split");
      }
    } else if (ev.key === "[") {
      ev.preventDefault();
      send("up");
    } else if (ev.key === "]") {
      ev.preventDefault();
      send("down");
    }
  });
})();
