// The annotator pages.
// HIT page: keys answer the document that has focus (or the highlighted one when focus is outside
// the documents): j/1 on topic, k/0 off topic, u/2 unsure where the topic offers it (then the next
// document), n/p next/previous,
// Enter submits (or jumps to the first unanswered document). The highlight follows focus.
// A topic set (form data-kind="multiclass"): 1..9 choose the class of that number, 0 "none of these",
// u unsure where offered; with ten classes or more, two digits typed in quick succession (1 then 2)
// choose class 12, and a lone 1 or 2 is applied when no second digit follows within TWO_DIGIT_MS.
// Answers are kept in localStorage (keyed by assignment) until the server acknowledges the submit:
// an expired session, a stale CSRF token or a lost connection loses nothing.
// "Submit and take the next HIT" answers with the next HIT's content (JSON): when it is of the same topic, it is
// swapped into this page in place (one request per HIT); its texts are placed with textContent only, never parsed
// as HTML. Otherwise (another topic, no HIT left, an error) the browser goes to the address the server gives.
// Both pages: the deadline in local time with a countdown.
(function () {
  "use strict";
  var PREFIX = "recall-hit:";
  var KEEP_MS = 7 * 24 * 3600 * 1000;
  var TWO_DIGIT_MS = 700;

  function storage() {
    try { return window.localStorage; } catch (e) { return null; }
  }

  function pruneOld() {
    var store = storage();
    if (!store) { return; }
    for (var i = store.length - 1; i >= 0; i--) {
      var key = store.key(i);
      if (!key || key.indexOf(PREFIX) !== 0) { continue; }
      try {
        var saved = JSON.parse(store.getItem(key));
        if (!saved || Date.now() - saved.saved > KEEP_MS) { store.removeItem(key); }
      } catch (e) { store.removeItem(key); }
    }
  }

  // ------------------------------------------------------------------ deadline
  var deadlineTimer = null;
  function deadline() {
    var time = document.getElementById("deadline");
    var countdown = document.getElementById("countdown");
    if (deadlineTimer) { window.clearTimeout(deadlineTimer); deadlineTimer = null; }
    if (!time) { return; }
    var end = new Date(time.getAttribute("datetime"));
    if (isNaN(end.getTime())) { return; }
    time.textContent = end.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    if (!countdown) { return; }
    function tick() {
      var left = Math.round((end.getTime() - Date.now()) / 1000);
      if (left <= 0) {
        countdown.textContent = "(time is up: you can still submit while nobody has taken your place)";
        return;
      }
      var minutes = Math.floor(left / 60), seconds = left % 60;
      countdown.textContent = "(" + minutes + " min " + (seconds < 10 ? "0" : "") + seconds + " s left)";
      deadlineTimer = window.setTimeout(tick, 1000);
    }
    tick();
  }

  pruneOld();
  deadline();

  var form = document.getElementById("hit-form");
  if (!form) { return; }
  var key = PREFIX + form.getAttribute("data-assignment");  // changes when the next HIT is swapped in
  var store = storage();
  if (form.getAttribute("data-editable") !== "1") {
    if (store) { store.removeItem(key); }  // submitted or returned: nothing left to keep
    return;
  }
  var docs = Array.prototype.slice.call(form.querySelectorAll("article.document"));
  if (!docs.length) { return; }
  var blank = docs[0].cloneNode(true);  // the pattern of a document card, for the next HIT swapped in place
  var current = 0;
  var multiclass = form.getAttribute("data-kind") === "multiclass";
  var classCount = parseInt(form.getAttribute("data-classes") || "0", 10);
  var pendingDigit = null;  // topic sets with 10+ classes: the first digit, waiting for a second
  var answeredBox = document.getElementById("answered");
  var saveStatus = document.getElementById("save-status");
  var problem = document.getElementById("submit-problem");

  function radios(doc) { return doc.querySelectorAll("input[type=radio]"); }
  function checkedValue(doc) {
    var checked = doc.querySelector("input[type=radio]:checked");
    return checked ? checked.value : "";
  }

  function answers() {
    var found = {};
    docs.forEach(function (doc) {
      var value = checkedValue(doc);
      if (value) { found[doc.getAttribute("data-doc")] = value; }
    });
    return found;
  }

  function save() {
    if (!store) { return; }
    try { store.setItem(key, JSON.stringify({ saved: Date.now(), answers: answers() })); } catch (e) { /* full */ }
  }

  function updateProgress() {
    var n = Object.keys(answers()).length;
    if (answeredBox) { answeredBox.textContent = n + " of " + docs.length + " answered"; }
  }

  function restore() {
    if (!store) { return 0; }
    var saved;
    try { saved = JSON.parse(store.getItem(key) || "null"); } catch (e) { saved = null; }
    if (!saved || !saved.answers) { return 0; }
    var restored = 0;
    docs.forEach(function (doc) {
      var value = saved.answers[doc.getAttribute("data-doc")];
      if (!value || checkedValue(doc)) { return; }
      var radio = doc.querySelector("input[type=radio][value='" + value + "']");
      if (radio) { radio.checked = true; restored++; }
    });
    return restored;
  }

  function cardOf(element) {
    var card = element && element.closest ? element.closest("article.document") : null;
    return card && form.contains(card) ? docs.indexOf(card) : -1;
  }

  function show(index, scroll) {
    current = Math.max(0, Math.min(docs.length - 1, index));
    docs.forEach(function (doc, i) {
      doc.classList.toggle("current", i === current);
      if (i === current) { doc.setAttribute("aria-current", "true"); } else { doc.removeAttribute("aria-current"); }
    });
    if (scroll) { docs[current].scrollIntoView({ block: "nearest" }); }
  }

  function moveTo(index, focusWasInside) {
    index = Math.max(0, Math.min(docs.length - 1, index));
    if (focusWasInside) {
      docs[index].focus({ preventScroll: true });  // focusin moves the highlight
    }
    show(index, true);
  }

  function firstUnanswered() {
    for (var i = 0; i < docs.length; i++) {
      if (!checkedValue(docs[i])) { return i; }
    }
    return -1;
  }

  function answer(value, index, focusWasInside) {
    var radio = docs[index].querySelector("input[type=radio][value='" + value + "']");
    if (!radio) { return; }
    radio.checked = true;
    save();
    updateProgress();
    moveTo(index < docs.length - 1 ? index + 1 : index, focusWasInside);
  }

  form.addEventListener("focusin", function (event) {
    var index = cardOf(event.target);
    if (index >= 0 && index !== current) { show(index, false); }
  });
  form.addEventListener("click", function (event) {
    var index = cardOf(event.target);
    if (index >= 0) { show(index, false); }
  });
  form.addEventListener("change", function () { save(); updateProgress(); });

  function flushDigit() {
    if (!pendingDigit) { return; }
    var waiting = pendingDigit;
    pendingDigit = null;
    window.clearTimeout(waiting.timer);
    answer("c" + waiting.digit, waiting.index, waiting.inside);
  }

  // A topic set's keys; false when the key is not one of them.
  function classKey(key, index, inside) {
    if (key === "u") {
      flushDigit();
      if (!docs[index].querySelector("input[type=radio][value='u']")) { return false; }
      answer("u", index, inside);
      return true;
    }
    if (key.length !== 1 || key < "0" || key > "9") { return false; }
    var digit = parseInt(key, 10);
    if (pendingDigit) {
      var waiting = pendingDigit;
      var both = waiting.digit * 10 + digit;
      if (both <= classCount) {
        pendingDigit = null;
        window.clearTimeout(waiting.timer);
        answer("c" + both, waiting.index, waiting.inside);
        return true;
      }
      flushDigit();  // not a class number: the first digit stands alone, this one starts afresh
      focused = cardOf(document.activeElement);
      index = focused >= 0 ? focused : current;
      inside = focused >= 0;
    }
    if (digit > classCount) { return true; }  // no such class: swallow the key, answer nothing
    if (digit > 0 && digit * 10 <= classCount) {
      pendingDigit = { digit: digit, index: index, inside: inside,
                       timer: window.setTimeout(flushDigit, TWO_DIGIT_MS) };
      return true;
    }
    answer("c" + digit, index, inside);
    return true;
  }
  var focused = -1;

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var target = event.target;
    if (target && (target.tagName === "TEXTAREA" || target.tagName === "BUTTON" || target.tagName === "A" ||
        target.tagName === "SELECT" || (target.tagName === "INPUT" && target.type !== "radio"))) { return; }
    focused = cardOf(document.activeElement);
    var index = focused >= 0 ? focused : current;
    var inside = focused >= 0;
    if (multiclass) {
      if (classKey(event.key, index, inside)) { event.preventDefault(); return; }
      flushDigit();
      if (event.key !== "n" && event.key !== "p" && event.key !== "Enter") { return; }
      focused = cardOf(document.activeElement);  // the pending digit may have moved focus on
      index = focused >= 0 ? focused : current;
      inside = focused >= 0;
    }
    switch (event.key) {
      case "j": case "1": answer("1", index, inside); break;
      case "k": case "0": answer("0", index, inside); break;
      case "u": case "2":
        if (!docs[index].querySelector("input[type=radio][value='u']")) { return; }  // no "unsure" in this topic
        answer("u", index, inside); break;
      case "n": moveTo(index + 1, inside); break;
      case "p": moveTo(index - 1, inside); break;
      case "Enter":
        var missing = firstUnanswered();
        if (missing >= 0) { moveTo(missing, true); } else if (form.requestSubmit) {
          form.requestSubmit(form.querySelector("button[type=submit]:not(.skip)"));
        } else { form.submit(); }
        break;
      default: return;
    }
    event.preventDefault();
  });

  // ------------------------------------------------------------------ submit
  function cookie(name) {
    var parts = document.cookie ? document.cookie.split("; ") : [];
    for (var i = 0; i < parts.length; i++) {
      var eq = parts[i].indexOf("=");
      if (parts[i].slice(0, eq) === name) { return decodeURIComponent(parts[i].slice(eq + 1)); }
    }
    return "";
  }

  function say(box, text, link) {
    // Built with text nodes only: nothing from the server is parsed as HTML.
    box.textContent = text;
    if (link) {
      box.appendChild(document.createTextNode(" "));
      var a = document.createElement("a");
      a.href = link.href;
      a.textContent = link.text;
      a.className = "button";
      box.appendChild(a);
    }
    box.hidden = false;
    if (box === problem) { box.focus(); }
  }

  // "Submit and take the next HIT" without the script answers the POST with the next HIT's page
  // (one request): show that HIT's own address, so a reload or a bookmark opens it.
  var own = form.getAttribute("action");
  if (own && own !== window.location.pathname && window.history && window.history.replaceState) {
    window.history.replaceState(null, "", own);
  }

  // ------------------------------------------------------------------ the next HIT, in place
  function card(doc, i, n) {
    var el = blank.cloneNode(true);
    var number = i + 1;
    el.id = "doc-" + number;
    el.className = "card document";
    el.removeAttribute("aria-current");
    el.setAttribute("data-index", String(i));
    el.setAttribute("data-doc", String(doc.id));
    el.setAttribute("aria-labelledby", "doc-" + number + "-title");
    var heading = el.querySelector("h2");
    heading.id = "doc-" + number + "-title";
    heading.textContent = "Document " + number + " of " + n + (doc.title ? " \u00b7 " + doc.title : "");
    var text = el.querySelector(".document-text");
    while (text.firstChild) { text.removeChild(text.firstChild); }
    (doc.paragraphs.length ? doc.paragraphs : [null]).forEach(function (para) {
      var p = document.createElement("p");
      if (para === null) { p.className = "help"; p.textContent = "(no text)"; } else { p.textContent = para; }
      text.appendChild(p);
    });
    var legend = el.querySelector("legend");
    if (legend) {
      legend.textContent = legend.textContent.replace(/^Document \d+ of \d+/, "Document " + number + " of " + n);
    }
    Array.prototype.forEach.call(radios(el), function (radio) {
      radio.name = "doc-" + doc.id;
      radio.checked = false;
      radio.defaultChecked = false;
    });
    return el;
  }

  function swapIn(next, notice) {
    var n = next.documents.length;
    var fresh = next.documents.map(function (doc, i) { return card(doc, i, n); });
    var bar = form.querySelector(".submit-bar");
    docs.forEach(function (doc) { doc.parentNode.removeChild(doc); });
    fresh.forEach(function (el) { form.insertBefore(el, bar); });
    docs = fresh;
    form.setAttribute("action", next.action);
    form.setAttribute("data-assignment", String(next.assignment));
    key = PREFIX + next.assignment;
    var skip = form.querySelector("button.skip");
    if (skip) { skip.setAttribute("formaction", next.release); }
    var queueLine = document.getElementById("queue");
    if (queueLine) { queueLine.textContent = next.queue; }
    var time = document.getElementById("deadline");
    if (time && next.deadline) { time.setAttribute("datetime", next.deadline); }
    deadline();
    Array.prototype.forEach.call(document.querySelectorAll("p.notice.bad[role=alert]"), function (old) {
      old.parentNode.removeChild(old);
    });
    if (window.history && window.history.replaceState) { window.history.replaceState(null, "", next.action); }
    if (document.activeElement && document.activeElement.blur) { document.activeElement.blur(); }
    window.scrollTo(0, 0);
    var restoredHere = restore();
    if (restoredHere) {
      say(saveStatus, restoredHere + (restoredHere === 1 ? " answer" : " answers") +
          " kept in this browser were restored.");
    } else if (notice) {
      say(saveStatus, notice);
    } else {
      saveStatus.hidden = true;
    }
    updateProgress();
    var first = firstUnanswered();
    show(first >= 0 ? first : 0, false);
  }

  var buttons = Array.prototype.slice.call(form.querySelectorAll("button[type=submit]"));
  function busy(on) { buttons.forEach(function (b) { b.disabled = on; }); }

  form.addEventListener("submit", function (event) {
    var submitter = event.submitter;
    if (submitter && submitter.classList.contains("skip")) {
      if (store) { store.removeItem(key); }  // returning the HIT discards its answers on purpose
      return;  // a plain POST to the return view
    }
    flushDigit();  // a class number typed just before the click counts
    if (!window.fetch || !window.FormData) { return; }
    event.preventDefault();
    save();
    var body = new FormData(form);
    body.set("then", submitter && submitter.value ? submitter.value : "next");
    body.set("swap", "1");  // the next HIT's content in the answer, to swap in place
    var headers = { "Accept": "application/json" };
    var token = cookie("csrftoken");
    if (token) {
      // The cookie is the current token (a sign-in in another tab replaces it; the form's copy goes stale).
      body.delete("csrfmiddlewaretoken");
      headers["X-CSRFToken"] = token;
    }
    problem.hidden = true;
    busy(true);
    var here = window.location.pathname;
    fetch(form.getAttribute("action") || here, {
      method: "POST", body: body, headers: headers, credentials: "same-origin", redirect: "manual"
    }).then(function (response) {
      if (response.type === "opaqueredirect" || response.status === 0 || response.redirected) {
        // Not signed in any more: the sign-in page would come back here, where the answers are restored.
        busy(false);
        say(problem, "Your session expired — sign in to continue. Your answers are kept in this browser.",
            { href: form.getAttribute("data-login") + "?next=" + encodeURIComponent(here), text: "Sign in to continue" });
        return null;
      }
      return response.json().then(function (data) {
        if (response.ok && data.ok) {
          if (store) { store.removeItem(key); }
          if (data.next && String(data.next.topic) === form.getAttribute("data-topic") &&
              data.next.documents && data.next.documents.length) {
            busy(false);
            swapIn(data.next, data.notice);
            return;
          }
          window.location.assign(data.location);
          return;
        }
        busy(false);
        if (response.status === 403) {
          say(problem, (data && data.error) || "This page is out of date. Your answers are kept in this browser.",
              { href: here, text: "Reload the page" });
        } else if (data.location) {
          if (store) { store.removeItem(key); }  // the server can no longer record them (the place is gone)
          window.location.assign(data.location);
        } else {
          say(problem, data.error || "The answers could not be recorded. They are kept in this browser.");
        }
      }, function () {
        busy(false);
        say(problem, "The server answered with an error (" + response.status + "). " +
            "Your answers are kept in this browser: try again, or reload the page.", { href: here, text: "Reload the page" });
      });
    }).catch(function () {
      busy(false);
      say(problem, "The server could not be reached. Your answers are kept in this browser: try again in a moment.");
    });
  });

  var restored = restore();
  if (restored && saveStatus) {
    say(saveStatus, restored + (restored === 1 ? " answer" : " answers") + " kept in this browser were restored.");
  }
  updateProgress();
  var start = firstUnanswered();
  show(start >= 0 ? start : 0, false);

  // ------------------------------------------------------------------ hold
  // The server holds this HIT for a few minutes (ASSIGNMENT_HOLD_SECONDS); while the annotator is active
  // (a key, a click, a scroll or a touch within ACTIVE_MS, page visible) the hold is renewed each RENEW_MS,
  // so a closed or forgotten tab frees its place for someone else within minutes. A hold the server can no
  // longer give (another worker took the place) is said at once, before more answers are typed.
  var RENEW_MS = 60 * 1000;
  var ACTIVE_MS = 5 * 60 * 1000;
  var lastActive = Date.now();
  ["keydown", "pointerdown", "scroll", "touchstart", "change"].forEach(function (type) {
    window.addEventListener(type, function () { lastActive = Date.now(); }, { passive: true, capture: true });
  });
  function renewHold() {
    if (!window.fetch || document.visibilityState === "hidden" || Date.now() - lastActive > ACTIVE_MS) { return; }
    var action = form.getAttribute("action") || window.location.pathname;
    var headers = { "Accept": "application/json" };
    var token = cookie("csrftoken");
    if (token) { headers["X-CSRFToken"] = token; }
    fetch(action.replace(/\/?$/, "/") + "hold/", {
      method: "POST", headers: headers, credentials: "same-origin", redirect: "manual"
    }).then(function (response) {
      if (!response.ok) { return null; }  // signed out or a passing fault: the submit path says what to do
      return response.json().then(function (data) {
        var time = document.getElementById("deadline");
        if (data.held && data.deadline && time) {
          time.setAttribute("datetime", data.deadline);
          deadline();
        } else if (!data.held && data.message) {
          say(problem, data.message);
        }
      });
    }).catch(function () { /* offline for a moment: the next renewal tries again */ });
  }
  window.setInterval(renewHold, RENEW_MS);
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") { lastActive = Date.now(); renewHold(); }
  });
})();
