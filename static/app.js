// docent console: small progressive enhancements. Every page works without
// this file; with it, filters apply on change, destructive actions ask
// first, and a running golden run refreshes itself until it finishes.
(function () {
  "use strict";
  document.addEventListener("change", function (e) {
    var el = e.target;
    if (el && el.form && el.hasAttribute("data-autosubmit")) {
      el.form.requestSubmit ? el.form.requestSubmit() : el.form.submit();
    }
  });
  document.addEventListener("submit", function (e) {
    var msg = e.target.getAttribute("data-confirm");
    if (msg && !window.confirm(msg)) {
      e.preventDefault();
    }
  });
  var poll = document.querySelector("[data-poll]");
  if (poll) {
    var every = parseInt(poll.getAttribute("data-poll"), 10) || 2000;
    window.setTimeout(function () { window.location.reload(); }, every);
  }
})();
