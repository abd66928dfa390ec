// docent console: small progressive enhancements. Every page works without
// this file; with it, filters apply on change, destructive actions ask
// first, a running golden run refreshes itself until it finishes, and
// focus survives the reloads a filter causes.
(function () {
  "use strict";
  var focusKey = "docent-focus";

  // submit sends a filter's form, remembering which field should have the
  // focus when the page comes back (the field itself, or where the
  // keyboard was going).
  function submit(el, next) {
    var target = next && next.name && next.form === el.form ? next : el;
    try {
      window.sessionStorage.setItem(focusKey, JSON.stringify({ path: window.location.pathname, name: target.name }));
    } catch (err) { /* storage off: focus is not restored */ }
    delete el.dataset.pending;
    el.form.requestSubmit ? el.form.requestSubmit() : el.form.submit();
  }

  // A select changed from the keyboard (arrows, letters) waits for Enter
  // or for the focus to leave it, so that browsing its options does not
  // reload the page at every key; a click applies at once.
  var keyed = null;
  document.addEventListener("keydown", function (e) {
    var el = e.target;
    if (!el || el.tagName !== "SELECT" || !el.hasAttribute("data-autosubmit")) {
      if (el && e.key === "Enter" && el.hasAttribute && el.hasAttribute("data-enter-clicks")) {
        var b = document.getElementById(el.getAttribute("data-enter-clicks"));
        if (b) {
          e.preventDefault();
          b.click();
        }
      }
      return;
    }
    if (e.key === "Enter" && el.dataset.pending) {
      e.preventDefault();
      submit(el);
      return;
    }
    if (e.key !== "Tab") {
      keyed = el;
    }
  });
  document.addEventListener("pointerdown", function () { keyed = null; });
  document.addEventListener("change", function (e) {
    var el = e.target;
    if (!el || !el.form || !el.hasAttribute("data-autosubmit")) {
      return;
    }
    if (keyed === el) {
      el.dataset.pending = "1";
      return;
    }
    submit(el);
  });
  document.addEventListener("focusout", function (e) {
    var el = e.target;
    if (el && el.dataset && el.dataset.pending && el.form) {
      submit(el, e.relatedTarget);
    }
  });

  // Back from a filter's reload: the focus goes where it was.
  try {
    var saved = JSON.parse(window.sessionStorage.getItem(focusKey) || "null");
    window.sessionStorage.removeItem(focusKey);
    if (saved && saved.path === window.location.pathname && saved.name) {
      var field = document.querySelector('form [name="' + saved.name.replace(/["\\]/g, "") + '"]');
      if (field) {
        field.focus();
      }
    }
  } catch (err) { /* nothing saved */ }

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
