// The dashboard works without this file; it adds a copy button and a drop zone for files.
(function () {
  "use strict";
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
