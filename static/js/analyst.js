// Live keyword preview and term suggestions. The server renders (and escapes) the
// fragments; this script only fetches them. Without JavaScript the buttons still work.
(function () {
  "use strict";
  var form = document.getElementById("keyword-form");
  var preview = document.getElementById("preview");
  if (form && preview) {
    var timer = null, seq = 0, inflight = null;
    var refresh = function () {
      var params = new URLSearchParams();
      var terms = form.querySelector("[name=terms]");
      params.set("terms", terms ? terms.value : "");
      form.querySelectorAll("[name=fields]:checked").forEach(function (box) { params.append("fields", box.value); });
      var mine = ++seq;
      // Typing on: drop the request still running, so the server works only for the latest terms.
      if (inflight) { inflight.abort(); }
      inflight = window.AbortController ? new AbortController() : null;
      fetch(form.dataset.previewUrl + "?" + params.toString(),
            {credentials: "same-origin", signal: inflight ? inflight.signal : undefined})
        .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
        .then(function (html) { if (mine === seq) { preview.innerHTML = html; } })
        .catch(function () { /* keep the last preview; the Preview button still works */ });
    };
    form.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(refresh, 350); });
  }
  // Lists: ticking "Show archived" applies at once (the Search button does the same without JavaScript).
  document.querySelectorAll("form.list-search input[name=archived]").forEach(function (box) {
    box.addEventListener("change", function () { box.form.submit(); });
  });
  var suggestForm = document.getElementById("suggest-form");
  var suggestions = document.getElementById("suggestions");
  if (suggestForm && suggestions) {
    suggestForm.addEventListener("submit", function (event) {
      event.preventDefault();
      var params = new URLSearchParams(new FormData(suggestForm));
      params.set("fragment", "1");
      // Several seconds on a large corpus: say so while it runs (issue 26), and allow no second request meanwhile.
      var busy = document.getElementById("suggest-busy");
      var button = suggestForm.querySelector("button[type=submit], button:not([type])");
      suggestions.setAttribute("aria-busy", "true");
      if (busy) { busy.hidden = false; }
      if (button) { button.disabled = true; }
      fetch(suggestForm.action + "?" + params.toString(), {credentials: "same-origin"})
        .then(function (r) { return r.text(); })
        .then(function (html) { suggestions.innerHTML = html; })
        .finally(function () {
          suggestions.removeAttribute("aria-busy");
          if (busy) { busy.hidden = true; }
          if (button) { button.disabled = false; }
        });
    });
    suggestions.addEventListener("click", function (event) {
      var button = event.target.closest(".add-term");
      var terms = form && form.querySelector("[name=terms]");
      if (!button || !terms) { return; }
      terms.value = (terms.value.trim() ? terms.value.trim() + "\n" : "") + button.dataset.term;
      terms.dispatchEvent(new Event("input", {bubbles: true}));
    });
  }
  // A classifier build (issue 15): poll the small JSON status, then reload to show the result.
  var build = document.getElementById("build-state");
  if (build && build.dataset.statusUrl) {
    var poll = function () {
      fetch(build.dataset.statusUrl, {credentials: "same-origin", headers: {"Accept": "application/json"}})
        .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
        .then(function (state) {
          document.getElementById("build-processed").textContent = state.processed;
          document.getElementById("build-total").textContent = state.total;
          document.getElementById("build-bar").style.width = state.percent + "%";
          var badge = document.getElementById("build-status");
          badge.textContent = state.status_display;
          badge.className = "badge " + state.status;
          if (state.finished) { window.location.reload(); } else { setTimeout(poll, 1000); }
        })
        .catch(function () { setTimeout(poll, 5000); });
    };
    if (document.getElementById("build-status").classList.contains("pending") ||
        document.getElementById("build-status").classList.contains("running")) { setTimeout(poll, 500); }
  }
})();
