// Keyboard shortcuts for a HIT page: j/1 on topic, k/0 off topic (then the next document),
// n/p next/previous document, Enter submits (or jumps to the first unanswered document).
(function () {
  "use strict";
  var form = document.getElementById("hit-form");
  if (!form) { return; }
  var docs = Array.prototype.slice.call(form.querySelectorAll("article.document"));
  if (!docs.length) { return; }
  var current = 0;

  function show(index) {
    current = Math.max(0, Math.min(docs.length - 1, index));
    docs.forEach(function (doc, i) { doc.classList.toggle("current", i === current); });
    docs[current].scrollIntoView({ block: "nearest", behavior: "smooth" });
  }

  function firstUnanswered() {
    for (var i = 0; i < docs.length; i++) {
      if (!docs[i].querySelector("input[type=radio]:checked")) { return i; }
    }
    return -1;
  }

  function answer(value) {
    var radio = docs[current].querySelector("input[type=radio][value='" + value + "']");
    if (!radio) { return; }
    radio.checked = true;
    if (current < docs.length - 1) { show(current + 1); }
  }

  docs.forEach(function (doc, i) {
    doc.addEventListener("click", function () { show(i); });
  });

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var target = event.target;
    if (target && (target.tagName === "TEXTAREA" || target.tagName === "BUTTON" || target.tagName === "A" ||
        (target.tagName === "INPUT" && target.type === "text"))) { return; }
    switch (event.key) {
      case "j": case "1": answer("1"); break;
      case "k": case "0": answer("0"); break;
      case "n": show(current + 1); break;
      case "p": show(current - 1); break;
      case "Enter":
        var missing = firstUnanswered();
        if (missing >= 0) { show(missing); } else if (form.requestSubmit) {
          form.requestSubmit(form.querySelector("button[name=then][value=next]"));
        } else { form.submit(); }
        break;
      default: return;
    }
    event.preventDefault();
  });

  var start = firstUnanswered();
  show(start >= 0 ? start : 0);
})();
