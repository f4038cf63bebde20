// Pooljudge pages: the small behaviours that would otherwise be inline scripts or handlers
// (the Content-Security-Policy allows no inline script). No dependencies.
(function () {
  "use strict";
  function ready() {
    // a <select data-autosubmit> submits its form when it changes (the qrels version picker)
    document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
      select.addEventListener("change", function () { if (select.form) select.form.submit(); });
    });
    // a <form data-submit-on-load> is sent at once (the "next document" page leases by POST);
    // its button stays for a browser without scripts
    var form = document.querySelector("form[data-submit-on-load]");
    if (form) form.submit();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", ready);
  else ready();
})();
