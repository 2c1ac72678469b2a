// The dashboard works without this file; it adds a copy button, a drop zone for files, and
// says so when a form sent in place (htmx) is refused or cannot reach the server.
(function () {
  "use strict";
  // A refusal htmx does not swap (403, 404, 409, 5xx) would otherwise leave the page as it was,
  // without a word: show the message of the page the server answered in the page's messages.
  function say(text) {
    var flash = document.getElementById("flash");
    if (!flash) return;
    var box = document.createElement("div");
    box.className = "error";
    box.setAttribute("role", "alert");
    box.id = "errors";
    box.textContent = text;
    var old = document.getElementById("errors");
    if (old) old.remove();
    flash.appendChild(box);
    box.scrollIntoView({ block: "nearest" });
  }
  document.addEventListener("htmx:responseError", function (e) {
    var xhr = e.detail && e.detail.xhr;
    var text = "";
    if (xhr && xhr.responseText) {
      var doc = new DOMParser().parseFromString(xhr.responseText, "text/html");
      var shown = doc.getElementById("errors") || doc.querySelector("main");
      if (shown) text = shown.textContent.trim();
    }
    say(text || "The server refused this (" + (xhr ? xhr.status : "no answer") + "): nothing was changed.");
  });
  document.addEventListener("htmx:sendError", function () {
    say("The server could not be reached: nothing was changed. Check the connection and try again.");
  });
  document.addEventListener("click", function (e) {
    var button = e.target.closest("[data-copy]");
    if (!button) return;
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source || !navigator.clipboard) return;
    navigator.clipboard.writeText(source.textContent.trim()).then(function () {
      button.textContent = "Copied";
    });
  });
  function zoneOf(e) {
    return e.target.closest ? e.target.closest(".dropzone") : null;
  }
  document.addEventListener("dragover", function (e) {
    var zone = zoneOf(e);
    if (!zone) return;
    e.preventDefault();
    zone.classList.add("over");
  });
  document.addEventListener("dragleave", function (e) {
    var zone = zoneOf(e);
    if (zone) zone.classList.remove("over");
  });
  // A file dropped anywhere on the zone goes into its file field (not only on the field).
  document.addEventListener("drop", function (e) {
    var zone = zoneOf(e);
    if (!zone) return;
    zone.classList.remove("over");
    var input = zone.querySelector("input[type=file]");
    if (input && e.dataTransfer && e.dataTransfer.files.length) {
      e.preventDefault();
      input.files = e.dataTransfer.files;
    }
  });
})();
