// The adjudication page's keys (the page works without them: radio buttons and a submit).
// A digit only chooses a grade; Enter decides, so no single key press records a decision.
// n: the next undecided disagreement; r: write the reason (Ctrl+Enter decides from there,
// Escape leaves it). No grade is chosen when the page opens.
(function () {
  "use strict";
  var form = document.getElementById("adjudicate-form");
  if (!form) return;
  var decide = document.getElementById("decide");
  var note = document.getElementById("note");

  function chosen() { return form.querySelector("input[name=grade]:checked"); }

  function submit() {
    if (!chosen()) { form.reportValidity(); return; }
    if (form.dataset.sent) return; // one decision per page, however often Enter is pressed
    form.dataset.sent = "1";
    if (form.requestSubmit) form.requestSubmit(decide); else decide.click();
  }

  form.addEventListener("submit", function () { form.dataset.sent = "1"; });

  document.addEventListener("keydown", function (ev) {
    if (ev.altKey || ev.metaKey) return;
    var inText = ev.target === note || (ev.target && ev.target.tagName === "TEXTAREA");
    if (inText) {
      if (ev.key === "Enter" && ev.ctrlKey) { ev.preventDefault(); submit(); }
      else if (ev.key === "Escape") { note.blur(); }
      return;
    }
    if (ev.ctrlKey) return;
    if (ev.target && ev.target.tagName === "INPUT" && ev.target.type === "text") return;
    if (ev.key === "Enter") {
      if (ev.target && (ev.target.tagName === "A" || ev.target.tagName === "BUTTON")) return;
      ev.preventDefault();
      submit();
      return;
    }
    if (ev.key === "n") {
      var next = document.getElementById("next-link");
      if (next) { ev.preventDefault(); window.location.href = next.href; }
      return;
    }
    if (ev.key === "r") { ev.preventDefault(); note.focus(); return; }
    var radio = form.querySelector('input[name=grade][data-key="' + ev.key + '"]');
    if (radio) {
      ev.preventDefault();
      radio.checked = true;
      radio.focus();
    }
  });
})();
